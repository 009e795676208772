import { replaySubject, type Bus } from '@hermes/bus';
import type { ToolAuditRecord } from '@hermes/contracts';
import { CliError, EXIT, taskIdArg, writeLine, type Command } from './command.js';
import { formatTable } from './text-table.js';

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
    const taskId = taskIdArg(positionals[0]);
    const bus = await ctx.bus();
    const records = (await replayAudit(bus, taskId, ctx.signal)).map((m) => m.value as Partial<ToolAuditRecord>);
    if (records.length === 0) {
      writeLine(ctx.stderr, `no tool calls recorded for task ${taskId}`);
      return EXIT.ok;
    }
    if (values.json === true) {
      for (const record of records) writeLine(ctx.stdout, JSON.stringify(record));
    } else {
      ctx.stdout.write(formatAuditTable(records));
    }
    return EXIT.ok;
  },
};

/** The audit records of a task's tool calls, oldest first. */
export function replayAudit(bus: Bus, taskId: string, signal?: AbortSignal): Promise<{ seq: number; value: unknown }[]> {
  return replaySubject(bus, {
    stream: bus.subjects.streams.toolAudit,
    subject: bus.subjects.toolAudit(taskId),
    ...(signal ? { signal } : {}),
    onMissingStream: (err) => {
      throw new CliError(`there is no audit stream ${bus.subjects.streams.toolAudit} (is the toolbus running on this NATS?)`, EXIT.failed, { cause: err });
    },
  });
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
