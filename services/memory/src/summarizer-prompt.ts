import type { PinnedFact } from '@hermes/contracts';

/** What the summariser model is told to do; the answer is JSON so constraints come back as data. */
export const SUMMARIZER_INSTRUCTIONS = [
  'You maintain the running summary of a conversation between a user and an AI agent.',
  'You get the previous summary (possibly empty) and the messages that came after it. Return the updated summary, which replaces the previous one.',
  'Keep: times and dates (exactly as stated), tasks and their status, decisions made, constraints and preferences the user stated, open questions, and concrete results (names, numbers, ids) later turns may need.',
  'Drop pleasantries and repetition. Be concise: at most about 300 words.',
  'Also list every constraint and deadline the USER stated in the new messages (not ones you infer), each as one self-contained sentence.',
  'Answer with JSON only: {"summary": "...", "pinned": [{"kind": "constraint" | "deadline", "text": "..."}]}',
].join('\n');

/** One summariser request: the previous summary and the messages to fold into it. */
export function summarizerMessages<M>(previous: string | undefined, messages: readonly M[], render: (m: M) => string) {
  const lines = messages.map(render).join('\n');
  return [
    { role: 'system' as const, content: SUMMARIZER_INSTRUCTIONS },
    { role: 'user' as const, content: `Previous summary:\n${previous ?? '(none yet)'}\n\nNew messages:\n${lines}` },
  ];
}

export interface SummarizerAnswer {
  summary: string;
  pinned: { kind: PinnedFact['kind']; text: string }[];
}

/** Reads the model's answer leniently: JSON (maybe fenced or with prose around it), else the whole text as the summary. */
export function parseSummarizerAnswer(text: string): SummarizerAnswer {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start >= 0 && end > start) {
    try {
      const parsed = JSON.parse(text.slice(start, end + 1)) as { summary?: unknown; pinned?: unknown };
      if (typeof parsed.summary === 'string') {
        const pinned = Array.isArray(parsed.pinned) ? parsed.pinned.flatMap(toPin) : [];
        return { summary: parsed.summary.trim(), pinned };
      }
    } catch {
      // not JSON after all: fall through
    }
  }
  return { summary: text.trim(), pinned: [] };
}

function toPin(item: unknown): SummarizerAnswer['pinned'] {
  if (typeof item === 'string') return item.trim() ? [{ kind: 'constraint', text: item }] : [];
  if (typeof item !== 'object' || item === null) return [];
  const { kind, text } = item as { kind?: unknown; text?: unknown };
  if (typeof text !== 'string' || !text.trim()) return [];
  return [{ kind: kind === 'deadline' ? 'deadline' : 'constraint', text: text.slice(0, 2000) }];
}
