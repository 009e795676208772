import { followSubject, type Bus } from '@hermes/bus';
import { Id, validate, type ToolAuditRecord } from '@hermes/contracts';
import { CliError, EXIT, UsageError, writeLine, type Command } from './command.js';
import { formatTable } from './text-table.js';

/** Give up on a replay that stops delivering before it reaches the last record (the record aged out meanwhile). */
const IDLE_STOP_MS = 2000;

/** `hermes audit <task-id>`: replay the audit records of a task's tool calls, one line per call attempt. */
export const auditCommand: Command = {
  path: ['audit'],
  summary: "list a task's tool calls from the audit stream",
  args: '<task-id>',
  minArgs: 1,
  maxArgs: 1,
  options: {
    json: { type: 'boolean', description: 'print each audit record as one JSON line' },
  },
  async execute({ values, positionals }, ctx) {
    const taskId = positionals[0] ?? '';
    if (!validate(Id, taskId).ok) throw new UsageError(`"${taskId}" is not a task id`);
    const bus = await ctx.bus();
    const lastSeq = await lastAuditSeq(bus, taskId);
    if (lastSeq === undefined) {
      writeLine(ctx.stderr, `no tool calls recorded for task ${taskId}`);
      return EXIT.ok;
    }
    const records = await replayUntil(bus, taskId, lastSeq, ctx.signal);
    if (values.json === true) {
      for (const record of records) writeLine(ctx.stdout, JSON.stringify(record));
    } else {
      ctx.stdout.write(formatAuditTable(records));
    }
    return EXIT.ok;
  },
};

/** The stream sequence of the task's latest audit record, read first so the replay knows where to stop. */
async function lastAuditSeq(bus: Bus, taskId: string): Promise<number | undefined> {
  try {
    const last = await bus.jsm.streams.getMessage(bus.subjects.streams.toolAudit, { last_by_subj: bus.subjects.toolAudit(taskId) });
    return last?.seq;
  } catch (err) {
    if ((err as Error).name === 'StreamNotFoundError') {
      throw new CliError(`there is no audit stream ${bus.subjects.streams.toolAudit} (is the toolbus running on this NATS?)`, EXIT.failed, { cause: err });
    }
    throw err;
  }
}

/** Replays the task's records in order up to `lastSeq` with an ordered consumer. */
async function replayUntil(bus: Bus, taskId: string, lastSeq: number, interrupt?: AbortSignal): Promise<Partial<ToolAuditRecord>[]> {
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), IDLE_STOP_MS);
  const signal = interrupt ? AbortSignal.any([interrupt, idle.signal]) : idle.signal;
  const records: Partial<ToolAuditRecord>[] = [];
  try {
    for await (const m of followSubject(bus, { stream: bus.subjects.streams.toolAudit, subject: bus.subjects.toolAudit(taskId), signal })) {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), IDLE_STOP_MS);
      records.push(m.value as Partial<ToolAuditRecord>);
      if (m.seq >= lastSeq) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return records;
}

/** Aligned columns: time, tool, outcome, duration, replayed/cached, error code, and who decided an approval. */
function formatAuditTable(records: readonly Partial<ToolAuditRecord>[]): string {
  const rows = records.map((r) => {
    const flags = [r.replayed ? 'replayed' : '', r.cached ? 'cached' : ''].filter(Boolean).join(',');
    const row = [
      r.time ?? '?',
      r.tool ?? '?',
      r.outcome ?? '?',
      typeof r.duration_ms === 'number' ? `${Math.round(r.duration_ms)}ms` : '?',
      flags || '-',
      r.error_code ?? '-',
    ];
    if (r.decided_by) row.push(`by ${r.decided_by}`);
    return row;
  });
  return `${formatTable([['TIME', 'TOOL', 'OUTCOME', 'DURATION', 'FLAGS', 'ERROR'], ...rows])}\n`;
}
