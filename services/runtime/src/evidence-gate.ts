import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { RuntimeJob, ToolDefinition } from '@hermes/contracts';

/**
 * How an answer cites a tool result: `[evidence <call id>: "<fragment quoted from that result>"]`.
 * A plain-text marker rather than a structured output, so it works with any OpenAI-compatible
 * model and survives in the answer the user reads.
 */
export const EVIDENCE_FORMAT = '[evidence <call_id>: "<exact fragment of that tool result>"]';

const CITATION = /\[evidence\s+([^\s:\]]+)\s*:\s*"((?:[^"\\]|\\.)*)"\]/g;

/** One citation of an answer. */
export interface Citation {
  call_id: string;
  quote: string;
}

/** What is wrong with an answer's evidence, for the model's second chance and for `unsupported_answer`. */
export type EvidenceProblem =
  | { kind: 'no_citation' }
  | { kind: 'unknown_call'; call_id: string }
  | { kind: 'quote_not_found'; call_id: string; quote: string }
  | { kind: 'failed_call'; call_id: string };

/** The citations in an answer, in order (quotes unescaped: `\"` is a quote mark). */
export function citationsIn(answer: string): Citation[] {
  return [...answer.matchAll(CITATION)].map((m) => ({ call_id: m[1]!, quote: m[2]!.replace(/\\(.)/g, '$1') }));
}

/** Whether a job's answer must carry evidence: the task asks for it, or a tool the job called does. */
export function evidenceRequired(
  job: Pick<RuntimeJob, 'require_evidence'>,
  tools: readonly ToolDefinition[],
  messages: readonly ChatCompletionMessageParam[],
): boolean {
  if (job.require_evidence) return true;
  const strict = new Set(tools.filter((t) => t.require_evidence).map((t) => t.name));
  if (strict.size === 0) return false;
  return messages.some((m) => m.role === 'assistant' && (m.tool_calls ?? []).some((c) => c.type === 'function' && strict.has(c.function.name)));
}

/**
 * Checks an answer against the tool results of its conversation: it needs at least one citation,
 * and each must name a call whose result (as the model read it) holds the quoted fragment. A
 * fragment is looked for in the result's JSON and in its string values, so a quote of text that
 * JSON escapes (quote marks, new lines) is found as the model saw it.
 */
export function checkEvidence(answer: string, messages: readonly ChatCompletionMessageParam[]): EvidenceProblem[] {
  const citations = citationsIn(answer);
  if (citations.length === 0) return [{ kind: 'no_citation' }];
  const results = new Map<string, string>();
  for (const m of messages) if (m.role === 'tool' && typeof m.content === 'string') results.set(m.tool_call_id, m.content);
  const problems: EvidenceProblem[] = [];
  for (const c of citations) {
    const content = results.get(c.call_id);
    if (content === undefined) problems.push({ kind: 'unknown_call', call_id: c.call_id });
    else if (!isOkResult(content)) problems.push({ kind: 'failed_call', call_id: c.call_id });
    else if (!c.quote.trim() || !holds(content, c.quote)) problems.push({ kind: 'quote_not_found', call_id: c.call_id, quote: c.quote });
  }
  return problems;
}

/** How the gate's request to the model begins: the loop finds out from it whether the one more chance was used. */
export const EVIDENCE_REQUEST_START = 'Your answer was not accepted: this task requires evidence.';

/** The message that gives the model its one more chance, naming what was wrong. */
export function evidenceRequest(problems: readonly EvidenceProblem[]): string {
  return [
    EVIDENCE_REQUEST_START,
    `Cite the tool results your answer rests on, each as ${EVIDENCE_FORMAT}, quoting text that appears in that result exactly.`,
    `Problems: ${problems.map(describe).join('; ')}.`,
    'Answer again with citations. If no tool result supports an answer, call a tool first or say what is missing.',
  ].join('\n');
}

/** One problem in words. */
export function describe(p: EvidenceProblem): string {
  switch (p.kind) {
    case 'no_citation':
      return 'the answer cites no tool result';
    case 'unknown_call':
      return `no tool call has the id ${p.call_id}`;
    case 'failed_call':
      return `tool call ${p.call_id} failed, so it is no evidence`;
    case 'quote_not_found':
      return `"${p.quote}" does not appear in the result of ${p.call_id}`;
  }
}

/** The system prompt's instruction, for jobs whose task asks for evidence up front. */
export function evidenceInstruction(): string {
  return `This task requires evidence: cite every tool result your final answer rests on as ${EVIDENCE_FORMAT}.`;
}

function isOkResult(content: string): boolean {
  try {
    return (JSON.parse(content) as { ok?: unknown }).ok === true;
  } catch {
    return false;
  }
}

function holds(content: string, quote: string): boolean {
  if (content.includes(quote)) return true;
  try {
    return stringsOf((JSON.parse(content) as { result?: unknown }).result).some((s) => s.includes(quote));
  } catch {
    return false;
  }
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}
