import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { jsonrepair } from 'jsonrepair';
import type { RuntimeJob, ToolDefinition } from '@hermes/contracts';
import type { ChatResult } from '@hermes/llm';
import { jsonSection } from './prompt-builder.js';

/** The JSON shape the planner is asked for; the dispatcher validates what comes back (docs/planning.md). */
const PLAN_SHAPE = '{"subtasks":[{"id":"fetch","intent":"...","depends_on":[],"tools":["tool_name"]},{"id":"report","intent":"...","depends_on":["fetch"]}]}';

/**
 * Messages of a planning job. The dispatcher puts what the planner needs in `inputs`:
 * `task_inputs`, `max_subtasks`, `invalid_plan_errors` (a plan sent back once) and `replan`
 * (goal-local re-planning: the failed subtask, the completed outputs, the ids to replace).
 */
export function planMessages(job: RuntimeJob, tools: readonly ToolDefinition[]): ChatCompletionMessageParam[] {
  const inputs = job.inputs ?? {};
  const replan = inputs.replan !== undefined;
  const toolLines = tools.length ? tools.map((t) => `- ${t.name}: ${t.description}`).join('\n') : '(none)';
  const system = [
    'You are the Hermes planner. You split a goal into a small DAG of subtasks that agents run, in parallel where they do not depend on each other.',
    `Goal to plan: ${job.goal}`,
    'Answer with ONLY one JSON object, no prose and no code fence, of this shape:',
    PLAN_SHAPE,
    'Rules: ids are short and unique (letters, digits, "_" or "-"); depends_on lists ids of subtasks whose outputs the subtask needs; no cycles;',
    'each intent is self-contained (the agent sees only its intent, its inputs and the outputs of its dependencies);',
    `at most ${String(inputs.max_subtasks ?? 12)} subtasks; a simple goal is ONE subtask; the last subtask should produce the final answer.`,
    'Add "review": true beside "subtasks" when a reviewer should check the outputs before the result is returned (it may send subtasks back once with notes).',
    'tools, when given, are only names from this list:',
    toolLines,
    replan
      ? 'This is a RE-PLAN: one subtask failed for good. Produce replacement subtasks for the ids in replan.replace only. New ids must differ from every existing id; they may depend on completed subtasks by id. Completed subtasks are never run again.'
      : '',
  ];
  return jsonAnswerMessages(system, job.goal, 'Planning context', inputs);
}

/** Messages of a compose job: one call that turns the subtasks' outputs into the answer to the goal. */
export function composeMessages(job: RuntimeJob): ChatCompletionMessageParam[] {
  return [
    {
      role: 'system',
      content: [
        'You are a Hermes agent composing the final result of a task that was split into subtasks.',
        `Your goal, which you keep to until it is done: ${job.goal}`,
        'Use only the subtask outputs you are given; never make up data. Answer with the final result as plain text.',
      ].join('\n'),
    },
    { role: 'user', content: `${job.goal}${jsonSection('Subtask outputs', job.inputs ?? {})}` },
  ];
}

/** The JSON shapes a reviewer is asked for; the dispatcher validates what comes back (docs/planning.md#review). */
const VERDICT_SHAPES =
  '{"verdict":"accept","answer":"<the final answer to the goal>"} or {"verdict":"revise","subtasks":[{"id":"<subtask id>","notes":"<what to change>"}]}';

/**
 * Messages of a review job: one call that checks the subtasks' outputs against the goal. The
 * dispatcher puts `subtask_outputs`, `round`, `may_revise` and (a verdict sent back once)
 * `invalid_verdict_errors` in `inputs`.
 */
export function reviewMessages(job: RuntimeJob): ChatCompletionMessageParam[] {
  const inputs = job.inputs ?? {};
  const system = [
    'You are the Hermes reviewer. Agents worked on subtasks of a goal; you check their outputs against the goal and either accept and merge them, or send named subtasks back with notes.',
    `Goal to review: ${job.goal}`,
    'Answer with ONLY one JSON object, no prose and no code fence, of one of these shapes:',
    VERDICT_SHAPES,
    'Accept when the outputs achieve the goal: your answer is the final result, merged from them; never make up data. Revise names only subtask ids you were given, each with notes its agent can act on.',
    inputs.may_revise === false ? 'This is the last review: a revise verdict can no longer be acted on, so accept unless the outputs are unusable.' : '',
  ];
  return jsonAnswerMessages(system, job.goal, 'Review context', inputs);
}

/** A one-call job asked for one JSON object: its system lines (empty ones dropped), then the goal with its context. */
function jsonAnswerMessages(systemLines: string[], goal: string, section: string, inputs: Record<string, unknown>): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: systemLines.filter(Boolean).join('\n') },
    { role: 'user', content: `${goal}${jsonSection(section, inputs)}` },
  ];
}

/**
 * Reads the JSON object out of a planner's or reviewer's answer: code fences and prose around it are dropped,
 * and malformed JSON (trailing commas, single quotes, a cut-off end) is repaired. Undefined when
 * there is no object to find; whether it is a valid plan is the dispatcher's call.
 */
export function parseJsonAnswer(content: string | null | undefined): unknown {
  if (!content) return undefined;
  const start = content.indexOf('{');
  if (start < 0) return undefined;
  const end = content.lastIndexOf('}');
  const text = end > start ? content.slice(start, end + 1) : content.slice(start);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    try {
      return JSON.parse(jsonrepair(text)) as unknown;
    } catch {
      return undefined;
    }
  }
}

/** Result of one single-call job, as the runner reports it. */
export interface SingleCallOutcome {
  output: string;
  plan?: unknown;
  verdict?: unknown;
  answer: ChatResult;
}
