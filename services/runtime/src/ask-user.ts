import type { RuntimeJob, ToolDefinition } from '@hermes/contracts';

/** The built-in tool a model calls to ask its user a question instead of guessing (docs/tools.md). */
export const ASK_USER = 'ask_user';

/**
 * Offered by the runtime itself, not the toolbus: the call never runs anywhere. The loop stops at
 * it, the task waits for `POST /v1/tasks/:id/input`, and the answer comes back as its result.
 */
export const ASK_USER_TOOL: ToolDefinition = {
  name: ASK_USER,
  description:
    "Ask the user a question when you cannot go on without their decision or a fact only they know. The task pauses until they answer; the answer is this call's result. Do not ask what your tools can find out.",
  parameters: {
    type: 'object',
    properties: {
      question: { type: 'string', minLength: 1, maxLength: 2000, description: 'one clear question' },
      choices: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 20, description: 'optional answers to pick from' },
    },
    required: ['question'],
    additionalProperties: false,
  },
};

/**
 * The job's tools with ask_user added, unless the task's allow-list leaves it out. A job the
 * toolbus gives no tool at all stays tool-less (its prompt says so), as it was before ask_user.
 */
export function withAskUser(job: Pick<RuntimeJob, 'tools'>, tools: ToolDefinition[]): ToolDefinition[] {
  if (tools.length === 0 || (job.tools && !job.tools.includes(ASK_USER))) return tools;
  return tools.some((t) => t.name === ASK_USER) ? tools : [...tools, ASK_USER_TOOL];
}

/** A question as the model asked it. */
export interface Question {
  call_id: string;
  question: string;
  choices?: string[];
}

/** The question in an ask_user call's arguments, or what is wrong with them (told to the model, which can ask again). */
export function readQuestion(callId: string, args: string): Question | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { error: 'the arguments are not JSON; send {"question": "...", "choices"?: ["..."]}' };
  }
  const { question, choices } = (parsed ?? {}) as { question?: unknown; choices?: unknown };
  if (typeof question !== 'string' || !question.trim() || question.length > 2000)
    return { error: 'question must be a non-empty string of at most 2000 characters' };
  if (
    choices !== undefined &&
    (!Array.isArray(choices) || choices.length > 20 || !choices.every((c) => typeof c === 'string' && c.length > 0 && c.length <= 200))
  ) {
    return { error: 'choices, when given, must be at most 20 non-empty strings' };
  }
  return { call_id: callId, question, ...(choices ? { choices: choices as string[] } : {}) };
}

/** What the model reads back for its question. */
export function answerMessage(answer: NonNullable<RuntimeJob['input_answer']>): string {
  return JSON.stringify({ ok: true, result: answer.timed_out ? { answered: false, note: answer.answer } : { answered: true, answer: answer.answer } });
}

/** What the model reads for an ask_user call that is not asked: bad arguments, or a second question in one turn. */
export function notAskedMessage(error: string): string {
  return JSON.stringify({ ok: false, error: { code: 'invalid_arguments', message: error }, hint: 'Fix the call and ask again.' });
}
