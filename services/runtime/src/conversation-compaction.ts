import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { contracts, ownerFields, type NewSessionMessage, type RuntimeJob, type SessionCompactReply } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import type { WaitOut } from './dependency-wait.js';

/** How a compaction went: the conversation to send instead, and what was folded. */
export interface Compaction {
  messages: ChatCompletionMessageParam[];
  folded: number;
  kept: number;
  inputTokens: number;
  summarizerCalls: number;
}

/** Folds a job's conversation into a summary when the model said it outgrew the window; undefined when nothing could be folded. */
export type Compactor = (job: RuntimeJob, messages: readonly ChatCompletionMessageParam[]) => Promise<Compaction | undefined>;

/** Where a conversation is cut for compaction: what stays verbatim around what is folded. */
export interface CompactionSplit {
  /** System context before the goal (recalled memories, the session's summary and pinned facts): small, and kept. */
  context: ChatCompletionMessageParam[];
  /** The earlier turns: the session's history before the goal and the loop's turns after it but the last. */
  fold: ChatCompletionMessageParam[];
  /** The goal with its inputs (the opening user message), checked to fit before the first call. */
  goal: ChatCompletionMessageParam | undefined;
  /** The last assistant turn with its tool results: what the model works on now. */
  tail: ChatCompletionMessageParam[];
}

// A summariser run is one or more LLM calls, each through a permit that may wait (up to
// LLM_PERMIT_TIMEOUT_MS, 120 s) and then take a slow model's time: far beyond a request's 5 s.
const COMPACT_TIMEOUT_MS = 300_000;
// The cap of a message's content on the wire (NewSessionMessage).
const MAX_CONTENT_CHARS = 1_000_000;

/**
 * Cuts a loop's conversation: the opening user message (the last user message; the loop adds
 * only assistant and tool messages after it) and the last assistant turn with its tool results
 * stay, as do the system messages before the goal; everything else is folded.
 */
export function splitForCompaction(messages: readonly ChatCompletionMessageParam[]): CompactionSplit {
  const goalAt = messages.findLastIndex((m) => m.role === 'user');
  const lastTurnAt = messages.findLastIndex((m) => m.role === 'assistant');
  const tailAt = lastTurnAt > goalAt ? lastTurnAt : messages.length;
  const before = goalAt >= 0 ? messages.slice(0, goalAt) : [];
  return {
    context: before.filter((m) => m.role === 'system'),
    fold: [...before.filter((m) => m.role !== 'system'), ...messages.slice(goalAt + 1, tailAt)],
    goal: goalAt >= 0 ? messages[goalAt] : undefined,
    tail: messages.slice(tailAt),
  };
}

/** The conversation after compaction: context, the summary (as the system message before the goal), the goal, the last turn. */
export function compactedConversation(split: CompactionSplit, reply: Pick<SessionCompactReply, 'summary' | 'pinned'>): ChatCompletionMessageParam[] {
  const pins = reply.pinned.map((p) => `- [${p.kind}] ${p.text}`);
  const summary = [
    "Summary of the conversation so far, including your earlier steps on the goal below (older messages were folded into it: they outgrew the model's context window):",
    reply.summary,
    ...(pins.length ? ['Constraints and deadlines the user stated there; they still apply:', ...pins] : []),
  ].join('\n');
  return [...split.context, { role: 'system', content: summary }, ...(split.goal ? [split.goal] : []), ...split.tail];
}

/** A message of the conversation as the memory service's summariser reads it. */
export function toFoldable(m: ChatCompletionMessageParam): NewSessionMessage {
  const content = m.content === undefined || m.content === null ? null : typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  const calls =
    m.role === 'assistant'
      ? (m.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ tool_call_id: c.id, name: c.function.name, arguments: c.function.arguments }] : []))
      : [];
  return {
    role: m.role === 'developer' || m.role === 'function' ? 'system' : m.role,
    content: content === null ? null : content.slice(0, MAX_CONTENT_CHARS),
    ...(calls.length ? { tool_calls: calls } : {}),
  };
}

/** Compacts through the memory service's summariser (sessionCompact), waiting out a memory outage like the job's other memory requests. */
export function memoryCompactor(o: { bus: Bus; waitOut: WaitOut }): Compactor {
  return async (job, messages) => {
    const split = splitForCompaction(messages);
    if (split.fold.length === 0) return undefined;
    const reply = await o.waitOut('memory', () =>
      request(
        o.bus,
        contracts.sessionCompact,
        { ...ownerFields(job), session_id: job.session_id, messages: split.fold.map(toFoldable) },
        { timeoutMs: COMPACT_TIMEOUT_MS },
      ),
    );
    const compacted = compactedConversation(split, reply);
    return {
      messages: compacted,
      folded: reply.folded_messages,
      kept: compacted.length,
      inputTokens: reply.input_tokens,
      summarizerCalls: reply.summarizer_calls,
    };
  };
}
