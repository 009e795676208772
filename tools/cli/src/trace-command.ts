import { replaySubject, request, RemoteError, type Bus } from '@hermes/bus';
import { contracts, taskEventKind, type TaskEvent, type TaskView, type ToolAuditRecord } from '@hermes/contracts';
import { EXIT, taskIdArg, writeLine, type Command } from './command.js';
import { formatTaskEvent } from './event-format.js';
import { formatTable } from './text-table.js';

/** One line of a task's timeline: a task event or a tool call's audit record. */
export interface TimelineEntry {
  time: string;
  source: string;
  subtask?: string;
  what: string;
}

/**
 * `hermes trace <task-id>`: the task's timeline from what the bus keeps (its events and the
 * toolbus audit), for when no tracing backend is at hand; with one, the printed trace id finds
 * the task's trace there.
 */
export const traceCommand: Command = {
  path: ['trace'],
  summary: "print a task's timeline (events and tool calls) and its trace id",
  args: '<task-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    json: { type: 'boolean', description: 'print each timeline entry as one JSON line' },
    deltas: { type: 'boolean', description: 'include streamed token deltas' },
  },
  async execute({ values, positionals }, ctx) {
    const taskId = taskIdArg(positionals[0]);
    const bus = await ctx.bus();
    const [view, events, audit] = await Promise.all([
      taskView(bus, taskId),
      replaySubject(bus, {
        stream: bus.subjects.streams.taskEvents, // Task ids are unique across teams (the team is hashed in), so any team's subject of the id is its.
        subject: bus.subjects.taskEvents('*', taskId),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      }),
      replaySubject(bus, { stream: bus.subjects.streams.toolAudit, subject: bus.subjects.toolAudit(taskId), ...(ctx.signal ? { signal: ctx.signal } : {}) }),
    ]);
    if (!view && events.length === 0) {
      writeLine(ctx.stderr, `task ${taskId} not found (no state and no events; events are kept 7 days)`);
      return EXIT.failed;
    }
    const entries = timeline(
      events.map((e) => e.value as TaskEvent),
      audit.map((a) => a.value as Partial<ToolAuditRecord>),
      { deltas: values.deltas === true },
    );
    if (values.json === true) {
      for (const e of entries) writeLine(ctx.stdout, JSON.stringify(e));
      return EXIT.ok;
    }
    writeLine(ctx.stdout, header(taskId, view, entries));
    ctx.stdout.write(formatTimeline(entries));
    return EXIT.ok;
  },
};

async function taskView(bus: Bus, taskId: string): Promise<TaskView | undefined> {
  try {
    return await request(bus, contracts.taskGet, { task_id: taskId });
  } catch (err) {
    // A task whose state is gone (or a dispatcher that is down) still has its events to show.
    if (err instanceof RemoteError) return undefined;
    throw err;
  }
}

/** Task events and audit records merged in time order (token deltas left out unless asked for). */
export function timeline(events: readonly TaskEvent[], audit: readonly Partial<ToolAuditRecord>[], opts: { deltas?: boolean } = {}): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  for (const e of events) {
    const data = e.data as { subtask_id?: string; kind?: string; step?: number };
    if (!opts.deltas && taskEventKind(e) === 'step' && data.kind === 'token_delta') continue;
    entries.push({
      time: e.time,
      source: e.source.replace(/^hermes\//, ''),
      ...(data.subtask_id ? { subtask: data.subtask_id } : {}),
      what: formatTaskEvent(e),
    });
  }
  for (const r of audit) {
    if (!r.time) continue;
    const flags = [r.replayed ? 'replayed' : '', r.cached ? 'cached' : ''].filter(Boolean).join(',');
    const what = [
      `tool ${r.tool ?? '?'}`,
      r.outcome ?? '?',
      typeof r.duration_ms === 'number' ? `${Math.round(r.duration_ms)}ms` : '',
      r.error_code ?? '',
      flags,
      r.decided_by ? `by ${r.decided_by}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    entries.push({ time: r.time, source: 'toolbus', ...(r.subtask_id ? { subtask: `${r.subtask_id}#${r.step ?? '?'}` } : {}), what });
  }
  // Stable: events of the same millisecond keep the order they were published in.
  return entries
    .map((e, i) => ({ e, i, t: Date.parse(e.time) }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((x) => x.e);
}

function header(taskId: string, view: TaskView | undefined, entries: readonly TimelineEntry[]): string {
  const first = entries[0] ? Date.parse(entries[0].time) : undefined;
  const last = entries.at(-1) ? Date.parse(entries.at(-1)!.time) : undefined;
  const took = first !== undefined && last !== undefined ? ` in ${seconds(last - first)}` : '';
  const lines = [`task ${taskId}: ${view?.status ?? 'state not found'}${took}`];
  const traceId = view?.trace_context?.trace_id;
  if (traceId) lines.push(`trace ${traceId} (search for it in Jaeger, Tempo or any OTLP backend)`);
  if (view) lines.push(`tokens in ${view.usage.input_tokens} / out ${view.usage.output_tokens}`);
  return lines.join('\n');
}

/** Aligned columns: offset from the first entry, service, subtask, what happened. */
export function formatTimeline(entries: readonly TimelineEntry[]): string {
  const start = entries[0] ? Date.parse(entries[0].time) : 0;
  const rows = entries.map((e) => [`+${seconds(Date.parse(e.time) - start)}`, e.source, e.subtask ?? '-', e.what]);
  return `${formatTable([['OFFSET', 'SOURCE', 'SUBTASK', 'WHAT'], ...rows])}\n`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(3)}s`;
