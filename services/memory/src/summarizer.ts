import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { NewSessionMessage, SessionCompactReply, SessionMessage, SessionSummarizeReply } from '@hermes/contracts';
import type { LlmClient } from '@hermes/llm';
import { parseSummarizerAnswer, summarizerMessages } from './summarizer-prompt.js';
import type { SessionStore } from './session-store.js';
import type { SummaryStore } from './summary-store.js';
import { countMessage, headTokens } from '@hermes/llm';

export interface SummarizerOptions {
  redis: Redis;
  store: SessionStore;
  summaries: SummaryStore;
  llm: Pick<LlmClient, 'chat'>;
  /** Latest messages left verbatim (not folded) by a background run. */
  keepRecent: number;
  /** Stored tokens of new messages per summariser call; more are folded in several calls. */
  inputTokens: number;
  /** Tool results are cut to this many tokens in the summariser's input. */
  toolResultMaxTokens: number;
  /** How long one run may hold the session's summarising flag. */
  runLeaseMs?: number;
}

const RELEASE_FLAG = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
// KEYS: flag, owner. ARGV: token, lease ms. -1 the session is gone (deleted since the run was
// queued: a flag would be a key of a session that no longer exists), 0 another run holds it, 1 taken.
const TAKE_FLAG = `if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0`;

/**
 * Folds a session's older messages into its running summary, incrementally: each LLM call gets
 * the previous summary and only the messages after it. Constraints and deadlines the model finds
 * are pinned. One run per session at a time across replicas (a flag key in Redis), and a summary
 * is saved only over the one it started from.
 */
export class Summarizer {
  constructor(private readonly o: SummarizerOptions) {}

  /**
   * Runs one summary update. `wait` makes a run that finds another in progress wait for it to end
   * (a forced run); otherwise it returns at once with nothing folded.
   */
  async summarize(userId: string, sessionId: string, opts: { keepRecent?: number; wait?: boolean } = {}): Promise<SessionSummarizeReply> {
    const keys = this.o.store.keysFor(sessionId);
    const flag = keys.summarizing;
    const token = randomBytes(8).toString('hex');
    const leaseMs = this.o.runLeaseMs ?? 300_000;
    const waitUntil = Date.now() + (opts.wait ? leaseMs : 0);
    for (;;) {
      const taken = Number(await this.o.redis.eval(TAKE_FLAG, 2, flag, keys.owner, token, leaseMs));
      if (taken === 1) break;
      if (taken === -1 || Date.now() >= waitUntil) return this.unchanged(sessionId, 0);
      await sleep(200);
    }
    try {
      return await this.fold(userId, sessionId, opts.keepRecent ?? this.o.keepRecent);
    } finally {
      await this.o.redis.eval(RELEASE_FLAG, 1, flag, token).catch(() => undefined);
    }
  }

  private async fold(userId: string, sessionId: string, keepRecent: number): Promise<SessionSummarizeReply> {
    let current = await this.o.summaries.summary(sessionId);
    const covered = current?.coveredCount ?? 0;
    const messages = await this.o.store.readFrom(userId, sessionId, covered);
    const toFold = messages.slice(0, Math.max(0, messages.length - keepRecent));
    let folded = 0;
    let pinsAdded = 0;
    for (const chunk of this.chunks(toFold)) {
      const answer = await this.o.llm.chat({
        role: 'summarizer',
        priority: 0,
        // Background work: its own share of the pool, so it neither starves nor crowds out steps.
        background: true,
        messages: summarizerMessages(current?.text, chunk, (m) => this.render(m)),
      });
      const parsed = parseSummarizerAnswer(answer.content ?? '');
      const next = {
        text: parsed.summary,
        coveredCount: (current?.coveredCount ?? 0) + chunk.length,
        coveredTokens: (current?.coveredTokens ?? 0) + chunk.reduce((sum, m) => sum + m.tokens, 0),
        updatedAt: new Date().toISOString(),
      };
      if (!(await this.o.summaries.saveSummary(sessionId, current?.coveredCount ?? 0, next))) break;
      current = next;
      folded += chunk.length;
      pinsAdded += (
        await this.o.summaries.pin(
          userId,
          sessionId,
          parsed.pinned.map((p) => ({ ...p, source: 'summary' as const })),
        )
      ).length;
    }
    return { summary: current?.text ?? null, covered_messages: current?.coveredCount ?? 0, folded_messages: folded, pins_added: pinsAdded };
  }

  /**
   * Summarises a conversation that is not stored (a running task's, sent by the runtime when the
   * model said it outgrew its window), in chunks of `inputTokens` like a stored fold, each call
   * building on the previous call's summary. Nothing is saved or pinned: the caller sends the
   * summary in place of the messages.
   */
  async compact(messages: readonly NewSessionMessage[]): Promise<SessionCompactReply> {
    const foldable = messages.map((m) => ({ ...m, tokens: countMessage({ content: m.content, tool_calls: m.tool_calls }, this.o.store.encoding) }));
    let summary: string | undefined;
    const pinned: SessionCompactReply['pinned'] = [];
    let calls = 0;
    for (const chunk of this.chunks(foldable)) {
      // A task waits for this answer: normal priority, not the background summary's batch one.
      const answer = await this.o.llm.chat({ role: 'summarizer', priority: 1, messages: summarizerMessages(summary, chunk, (m) => this.render(m)) });
      calls += 1;
      const parsed = parseSummarizerAnswer(answer.content ?? '');
      summary = parsed.summary;
      pinned.push(...parsed.pinned);
    }
    return {
      summary: summary ?? '',
      pinned,
      folded_messages: messages.length,
      input_tokens: foldable.reduce((sum, m) => sum + m.tokens, 0),
      summarizer_calls: calls,
    };
  }

  private async unchanged(sessionId: string, pinsAdded: number): Promise<SessionSummarizeReply> {
    const current = await this.o.summaries.summary(sessionId);
    return { summary: current?.text ?? null, covered_messages: current?.coveredCount ?? 0, folded_messages: 0, pins_added: pinsAdded };
  }

  private *chunks<M extends Foldable>(messages: readonly M[]): Generator<M[]> {
    let chunk: M[] = [];
    let tokens = 0;
    for (const m of messages) {
      const cost = Math.min(m.tokens, this.o.toolResultMaxTokens + 50);
      if (chunk.length > 0 && tokens + cost > this.o.inputTokens) {
        yield chunk;
        chunk = [];
        tokens = 0;
      }
      chunk.push(m);
      tokens += cost;
    }
    if (chunk.length > 0) yield chunk;
  }

  private render(m: Foldable): string {
    const calls = (m.tool_calls ?? []).map((c) => ` [calls ${c.name}(${c.arguments})]`).join('');
    let content = m.content ?? '';
    if (m.role === 'tool' && m.tokens > this.o.toolResultMaxTokens)
      content = `${headTokens(content, this.o.toolResultMaxTokens, this.o.store.encoding)} [...truncated]`;
    return `${m.created_at ? `[${m.created_at}] ` : ''}${m.role}: ${content}${calls}`;
  }
}

/** What the summariser reads of a message: a stored one, or one of a running task's conversation. */
type Foldable = Pick<SessionMessage, 'role' | 'content' | 'tool_calls' | 'tokens'> & { created_at?: string };
