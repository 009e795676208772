import type { RecordedDivergence, RecordingEntry } from '@hermes/contracts';

/** One tool call of a recorded run, in step and call order. */
export interface RecordedCall {
  subtask_id: string;
  step: number;
  index: number;
  name: string;
  arguments: string;
  ok: boolean;
  result: unknown;
}

/** What a recording says a run did: its tool calls, its final answer, what it cost and where a replay diverged. */
export interface RunSummary {
  calls: RecordedCall[];
  finalAnswer: string | undefined;
  steps: number;
  tokens: { input: number; output: number };
  llmLatencyMs: number;
  models: string[];
  divergence: RecordedDivergence | undefined;
}

/** Reads a recording into a {@link RunSummary}. */
export function summarize(entries: readonly RecordingEntry[]): RunSummary {
  const calls: RecordedCall[] = [];
  let finalAnswer: string | undefined;
  let steps = 0;
  const tokens = { input: 0, output: 0 };
  let llmLatencyMs = 0;
  const models = new Set<string>();
  let divergence: RecordedDivergence | undefined;
  for (const e of entries) {
    if (e.kind === 'llm') {
      steps += 1;
      tokens.input += e.response.usage.input_tokens;
      tokens.output += e.response.usage.output_tokens;
      llmLatencyMs += e.latency_ms;
      models.add(e.response.model);
      // The last answer without tool calls is the task's (a plan's JSON is one too; the compose or only subtask comes last).
      if (e.response.tool_calls.length === 0) finalAnswer = e.response.content ?? '';
    } else if (e.kind === 'tool') {
      calls.push({
        subtask_id: e.subtask_id,
        step: e.step,
        index: e.call_index,
        name: e.tool,
        arguments: e.arguments,
        ok: e.reply.status === 'ok',
        result: e.reply.result ?? e.reply.error,
      });
    } else if (e.kind === 'divergence') {
      divergence ??= e;
    }
  }
  calls.sort((a, b) => a.subtask_id.localeCompare(b.subtask_id) || a.step - b.step || a.index - b.index);
  return { calls, finalAnswer, steps, tokens, llmLatencyMs, models: [...models], divergence };
}

/** The comparison of a replay with its source. */
export interface ReplayReport {
  source_task: string;
  replay_task: string;
  same: boolean;
  same_tool_calls: boolean;
  same_answer: boolean;
  /** Where the two first part, in words, with a diff when there is one. */
  first_difference?: { step: number; where: string; diff?: string };
  source: { tool_calls: string[]; final_answer: string | undefined };
  replay: { tool_calls: string[]; final_answer: string | undefined; status: string };
}

const callLine = (c: RecordedCall) =>
  `${c.subtask_id} step ${c.step}#${c.index} ${c.name}(${c.arguments}) → ${c.ok ? 'ok' : 'error'} ${JSON.stringify(c.result)}`;

/** Compares a replay's recording with its source's: same tool calls (names, arguments, results) and same final answer, or where they first part. */
export function compareRuns(o: { sourceTask: string; replayTask: string; source: RunSummary; replay: RunSummary; status: string }): ReplayReport {
  const a = o.source.calls.map(callLine);
  const b = o.replay.calls.map(callLine);
  const sameCalls = a.length === b.length && a.every((line, i) => line === b[i]);
  const sameAnswer = o.source.finalAnswer === o.replay.finalAnswer;
  let first: ReplayReport['first_difference'];
  const d = o.replay.divergence;
  if (d) {
    const what = d.reason === 'tool_call_differs' ? `tool call ${d.call_index ?? 0}` : 'the model request';
    first = { step: d.step, where: `${d.subtask_id} step ${d.step}: ${what} differs from the recording (${d.reason})`, diff: d.diff };
  } else if (!sameCalls) {
    const i = a.findIndex((line, k) => line !== b[k]);
    const at = i === -1 ? a.length : i;
    const call = o.replay.calls[at] ?? o.source.calls[at];
    first = { step: call?.step ?? 0, where: `tool call ${at + 1}: recorded ${a[at] ?? '(none)'}, replayed ${b[at] ?? '(none)'}` };
  } else if (!sameAnswer) {
    first = { step: o.replay.steps, where: `final answer: recorded ${JSON.stringify(o.source.finalAnswer)}, replayed ${JSON.stringify(o.replay.finalAnswer)}` };
  }
  return {
    source_task: o.sourceTask,
    replay_task: o.replayTask,
    same: sameCalls && sameAnswer && !d && o.status === 'completed',
    same_tool_calls: sameCalls,
    same_answer: sameAnswer,
    ...(first ? { first_difference: first } : {}),
    source: { tool_calls: a, final_answer: o.source.finalAnswer },
    replay: { tool_calls: b, final_answer: o.replay.finalAnswer, status: o.status },
  };
}

/** The report as text for the terminal. */
export function formatReplayReport(r: ReplayReport): string {
  const lines = [`replay ${r.replay_task} of ${r.source_task}: ${r.same ? 'same tool calls and same final answer' : 'DIFFERENT'} (replay ${r.replay.status})`];
  if (r.first_difference) {
    lines.push(`first difference at step ${r.first_difference.step}: ${r.first_difference.where}`);
    if (r.first_difference.diff) lines.push('--- recorded', '+++ replayed', r.first_difference.diff);
  }
  lines.push(`tool calls: ${r.same_tool_calls ? 'same' : 'differ'} (${r.source.tool_calls.length} recorded, ${r.replay.tool_calls.length} replayed)`);
  lines.push(`final answer: ${r.same_answer ? 'same' : 'differs'}`);
  return `${lines.join('\n')}\n`;
}
