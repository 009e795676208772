import { Type, type Static } from '@sinclair/typebox';
import { MemoryType, validate, type SessionMessage, type ValidationIssue } from '@hermes/contracts';
import type { MemoryRecord } from './vector-store.js';

/** What the judge is told: durable facts about the user, as JSON, with a confidence each. */
export const EXTRACTION_INSTRUCTIONS = [
  'You decide what an AI assistant should remember about its user across conversations.',
  'You get the new messages of a conversation and the memories already held about this user (with their ids).',
  'Extract only what will still be useful in later, unrelated conversations:',
  '- "preference": how the user likes things done (formats, tools, languages, tone, schedules);',
  '- "fact": stable facts about the user, their work, team, projects or environment;',
  '- "task_progress": the state of a longer-running piece of work that later conversations may continue;',
  '- "correction": the user says an earlier belief is wrong.',
  'Do not extract small talk, one-off requests, anything the assistant said that the user did not confirm, or secrets (passwords, keys, tokens).',
  'Write each memory as one self-contained sentence about "the user" (no "I", "you" or "he"), with dates as absolute dates.',
  'confidence (0..1): how sure you are the user really means this and it will stay true. Guesses and jokes are below 0.5.',
  'If a new memory replaces or contradicts a held memory, set "supersedes" to that memory\'s id. Do not repeat a held memory that is unchanged.',
  'Answer with JSON only: {"memories": [{"type": "preference" | "fact" | "task_progress" | "correction", "content": "...", "confidence": 0.0, "supersedes": "<id, optional>"}]}. No memories: {"memories": []}.',
].join('\n');

/** The judge's answer as we accept it: anything else is invalid output. */
export const JudgeAnswer = Type.Object(
  {
    memories: Type.Array(
      Type.Object(
        {
          type: MemoryType,
          content: Type.String({ minLength: 1, maxLength: 2000 }),
          confidence: Type.Number({ minimum: 0, maximum: 1 }),
          supersedes: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()])),
        },
        { additionalProperties: true },
      ),
      { maxItems: 50 },
    ),
  },
  { additionalProperties: true },
);
export type JudgeAnswer = Static<typeof JudgeAnswer>;

/** One judge request: the memories already held (so it can supersede them) and the new messages. */
export function extractionMessages(held: readonly MemoryRecord[], messages: readonly SessionMessage[]) {
  const heldLines = held.length ? held.map((m) => `- id ${m.memory_id} (${m.type}, ${m.created_at.slice(0, 10)}): ${m.content}`).join('\n') : '(none)';
  const lines = messages.map((m) => `[${m.created_at}] ${m.role}: ${m.content ?? ''}`).join('\n');
  return [
    { role: 'system' as const, content: EXTRACTION_INSTRUCTIONS },
    { role: 'user' as const, content: `Memories already held about this user:\n${heldLines}\n\nNew messages:\n${lines}` },
  ];
}

export type ParsedJudgeAnswer = { ok: true; answer: JudgeAnswer } | { ok: false; issues: ValidationIssue[] };

/** Parses the judge's answer: the JSON object in it (fences and prose around it are tolerated), validated. */
export function parseJudgeAnswer(text: string): ParsedJudgeAnswer {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return { ok: false, issues: [{ path: '', message: 'no JSON object in the answer' }] };
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (err) {
    return { ok: false, issues: [{ path: '', message: `not JSON: ${(err as Error).message}` }] };
  }
  const checked = validate(JudgeAnswer, value);
  return checked.ok ? { ok: true, answer: checked.value } : { ok: false, issues: checked.issues };
}
