import { performance } from 'node:perf_hooks';
import { lastUserMessageText, type ChatRequestBody, type RecordedRequest, type Responder, type ScriptedResponse } from '@hermes/testkit';

/**
 * The tools a step may call: `echo` and `time_now` are side-effect-free built-ins of the toolbus;
 * `bench_record` is a side-effecting one (not idempotent) the bench hosts with the tool SDK, whose
 * result carries `pad` bytes of padding (see bench-tools.ts).
 */
export type StepTool = 'echo' | 'time_now' | 'bench_record';

const RUN_TAG = /\[bench-run:([A-Za-z0-9_-]+)\]/;

/**
 * The goal of one benchmark task; the run id in it is how the scripted model tells tasks apart,
 * and its step count and padding are how one model process serves tasks of any length and size.
 */
export function goalFor(runId: string, steps: number, padBytes = 0): string {
  return `Benchmark task [bench-run:${runId}]: call the tool ${steps - 1} times, one call per turn, then answer.${padBytes ? ` [pad:${padBytes}]` : ''}`;
}

/** The LLM calls and result padding a benchmark goal asks for, where it says. */
export function goalShape(goal: string): { steps?: number; padBytes: number } {
  const calls = /call the tool (\d+) times/.exec(goal)?.[1];
  const pad = /\[pad:(\d+)\]/.exec(goal)?.[1];
  return { ...(calls ? { steps: Number(calls) + 1 } : {}), padBytes: pad ? Number(pad) : 0 };
}

/** The run id of a request's goal, or undefined for a request that is not the benchmark's. */
export function runIdOf(body: ChatRequestBody): string | undefined {
  return RUN_TAG.exec(lastUserMessageText(body))?.[1];
}

/** The goal a planning request asks to plan (the runtime's planner prompt names it), if it is one. */
export function plannedGoal(body: ChatRequestBody): string | undefined {
  const system = body.messages?.find((m) => m.role === 'system');
  return /^Goal to plan: (.*)$/m.exec(typeof system?.content === 'string' ? system.content : '')?.[1];
}

/** Tool results the conversation holds so far: the steps already done. */
export function toolResultsIn(body: ChatRequestBody): number {
  return (body.messages ?? []).filter((m) => m.role === 'tool').length;
}

/** What step `n` (1-based) asks for: distinct arguments every time, so the loop detector never fires. */
export function toolArguments(tool: StepTool, n: number, padBytes = 0): Record<string, string | number> {
  if (tool === 'bench_record') return { entry: `step ${n}`, pad: padBytes };
  return tool === 'echo' ? { text: `step ${n}` } : { timezone: 'UTC' };
}

/** The answer to a request that has seen `done` tool results: one more tool call, or the final answer. */
export function answerFor(o: { steps: number; tool: StepTool; done: number; padBytes?: number }): ScriptedResponse {
  const usage = { prompt_tokens: 100, completion_tokens: 10 };
  if (o.done >= o.steps - 1) return { content: `done after ${o.done} tool calls`, usage };
  return { toolCalls: [{ name: o.tool, arguments: toolArguments(o.tool, o.done + 1, o.padBytes) }], usage };
}

/**
 * The scripted model of the benchmark: every request of a tagged task asks for one tool call
 * until `steps - 1` results are in, then answers; it answers at once. It keeps, per run id, the
 * time each request reached the responder ({@link epochNow}), the moments steps are measured from.
 */
export class StepScript {
  private readonly arrivals = new Map<string, number[]>();

  constructor(private readonly o: { steps: number; tool: StepTool; now?: () => number }) {}

  readonly responder: Responder = (req: RecordedRequest): ScriptedResponse => {
    const at = this.o.now ? this.o.now() : epochNow();
    // The default PLAN_MODE plans each task first: the goal becomes one subtask, as a model
    // planning a simple goal answers. Its call is a per-task cost, not a step: not an arrival.
    const planned = plannedGoal(req.body);
    if (planned !== undefined)
      return { content: JSON.stringify({ subtasks: [{ id: 'work', intent: planned, depends_on: [] }] }), usage: { prompt_tokens: 100, completion_tokens: 10 } };
    const runId = runIdOf(req.body);
    if (runId === undefined) return { content: 'not a benchmark task' };
    // Only the agent loop offers tools: the memory service's summaries and extraction judge quote
    // the goal too, seconds after a task ended (its debounce), and are no step of it.
    if (!req.body.tools?.length) return { content: 'not a benchmark step' };
    let list = this.arrivals.get(runId);
    if (!list) this.arrivals.set(runId, (list = []));
    list.push(at);
    const shape = goalShape(lastUserMessageText(req.body));
    return answerFor({ steps: shape.steps ?? this.o.steps, tool: this.o.tool, done: toolResultsIn(req.body), padBytes: shape.padBytes });
  };

  /** Arrival times of the run's LLM requests, oldest first. */
  arrivalsOf(runId: string): readonly number[] {
    return this.arrivals.get(runId) ?? [];
  }
}

/** Epoch ms with sub-ms precision, comparable between processes on one machine. */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Gaps between consecutive times: one per step that followed a tool call. */
export function intervals(times: readonly number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}
