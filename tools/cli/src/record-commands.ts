import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { readRecording, request, type Bus } from '@hermes/bus';
import { DEFAULT_TEAM, contracts, type RecordingEntry } from '@hermes/contracts';
import { CliError, EXIT, stringOption, taskIdArg, writeLine, type Command } from './command.js';
import { compareRuns, formatReplayReport, summarize, type ReplayReport } from './recording-summary.js';
import { askService } from './service-request.js';
import { runToEnd } from './task-runs.js';
import { formatTable } from './text-table.js';

/** `hermes record show <task>`: a task's recording, one line per LLM exchange, tool call or divergence. */
export const recordShowCommand: Command = {
  path: ['record', 'show'],
  summary: "show a task's recording (LLM exchanges and tool calls)",
  help: 'Recording is opt-in: a task with record: true, a user in RECORDING_USERS, or RECORDING=all (docs/evals.md).',
  args: '<task-id>',
  minArgs: 1,
  maxArgs: 1,
  options: { json: { type: 'boolean', description: 'print each entry as one JSON line (the full requests and answers)' } },
  async execute({ values, positionals }, ctx) {
    const taskId = taskIdArg(positionals[0]);
    const entries = await recordingOf(await ctx.bus(), taskId, ctx.signal);
    if (entries.length === 0) {
      writeLine(ctx.stderr, `no recording for task ${taskId} (recording is off unless the task, its user or RECORDING asks for it)`);
      return EXIT.failed;
    }
    if (values.json === true) {
      for (const e of entries) writeLine(ctx.stdout, JSON.stringify(e));
      return EXIT.ok;
    }
    ctx.stdout.write(`${formatTable([['SUBTASK', 'STEP', 'KIND', 'WHAT', 'MS'], ...entries.map(entryRow)])}\n`);
    const s = summarize(entries);
    writeLine(
      ctx.stdout,
      `steps ${s.steps}, tool calls ${s.calls.length}, tokens ${s.tokens.input} in / ${s.tokens.output} out, models ${s.models.join(', ') || '-'}`,
    );
    if (s.finalAnswer !== undefined) writeLine(ctx.stdout, `final answer: ${s.finalAnswer}`);
    return EXIT.ok;
  },
};

/** `hermes replay <task>`: run the task again through the services against its recording, and report. */
export const replayCommand: Command = {
  path: ['replay'],
  summary: 'run a recorded task again against its recording and report where it diverged',
  help: 'The replay is a new task (same user, goal, inputs, tools and budget) whose model requests are answered from the\nrecording, matched by step and request hash; tools answer from the recorded results unless --live-tools.\nExit 0: same tool calls and same final answer; 1: it differed (the report says where first).',
  args: '<task-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    'live-tools': { type: 'boolean', description: 'run the tool calls through the toolbus instead of answering them from the recording' },
    json: { type: 'boolean', description: 'print the report as JSON' },
    'timeout-ms': { type: 'string', valueName: 'ms', description: 'how long to wait for the replay to end (default 120000)' },
  },
  async execute({ values, positionals }, ctx) {
    const sourceTask = taskIdArg(positionals[0]);
    const bus = await ctx.bus();
    const report = await replayTask(bus, {
      sourceTask,
      liveTools: values['live-tools'] === true,
      timeoutMs: Number(stringOption(values, 'timeout-ms') ?? 120_000),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    ctx.stdout.write(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatReplayReport(report));
    return report.same ? EXIT.ok : EXIT.failed;
  },
};

/** Replays one recorded task and compares the two recordings. */
export async function replayTask(bus: Bus, o: { sourceTask: string; liveTools: boolean; timeoutMs: number; signal?: AbortSignal }): Promise<ReplayReport> {
  const source = await recordingOf(bus, o.sourceTask, o.signal);
  if (source.length === 0) throw new CliError(`task ${o.sourceTask} has no recording to replay`, EXIT.failed);
  const view = await askService('dispatcher', () => request(bus, contracts.taskGet, { task_id: o.sourceTask }), {
    notFound: () => `task ${o.sourceTask} not found (its state may have aged out)`,
  });
  const opts = view.options ?? {};
  const team = view.team ?? DEFAULT_TEAM;
  const run = await runToEnd(bus, {
    team,
    source: `/hermes/cli/replay/${hostname()}`,
    id: randomUUID(),
    request: {
      user_id: view.user_id,
      goal: view.goal,
      ...(opts.inputs ? { inputs: opts.inputs } : {}),
      ...(opts.tools ? { tools: opts.tools } : {}),
      ...(opts.budget ? { budget: opts.budget } : {}),
      record: true,
      replay: { source_task: o.sourceTask, mode: 'recording', tools: o.liveTools ? 'live' : 'recorded' },
      metadata: { replay_of: o.sourceTask },
    },
    timeoutMs: o.timeoutMs,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const replayed = await recordingOf(bus, run.taskId, o.signal);
  return compareRuns({ sourceTask: o.sourceTask, replayTask: run.taskId, source: summarize(source), replay: summarize(replayed), status: run.status });
}

/** A task's recording; a missing stream is said plainly. */
async function recordingOf(bus: Bus, taskId: string, signal?: AbortSignal): Promise<RecordingEntry[]> {
  return readRecording(bus, taskId, signal ? { signal } : {});
}

function entryRow(e: RecordingEntry): string[] {
  switch (e.kind) {
    case 'llm': {
      const said = e.response.tool_calls.length ? e.response.tool_calls.map((c) => `${c.name}(${c.arguments})`).join(' ') : JSON.stringify(e.response.content);
      return [
        e.subtask_id,
        String(e.step),
        'llm',
        `${e.response.model} ${e.response.usage.input_tokens}+${e.response.usage.output_tokens} tok → ${cut(said)}`,
        String(e.latency_ms),
      ];
    }
    case 'tool':
      return [
        e.subtask_id,
        String(e.step),
        'tool',
        `#${e.call_index} ${e.tool}(${cut(e.arguments)}) → ${e.reply.status}${e.replayed_from ? ' (from recording)' : ''}`,
        String(e.latency_ms),
      ];
    case 'divergence':
      return [e.subtask_id, String(e.step), 'divergence', `${e.reason} (replaying ${e.source_task})`, '-'];
    case 'script':
      return ['-', '-', 'script', `${e.turns.length} scripted turns`, '-'];
  }
}

const cut = (s: string, max = 100) => (s.length > max ? `${s.slice(0, max)}…` : s);
