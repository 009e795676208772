import { contracts, type ToolAuditRecord, type ToolCallReply } from '@hermes/contracts';
import type { Bus } from '@hermes/bus';
import type { CallOrigin } from './call-record.js';
import type { ToolMetrics } from './toolbus-metrics.js';

const SUMMARY_CHARS = 300;
/** Arguments in an audit record (and in a call record's origin) are cut to 4 KiB. */
export const AUDIT_ARGUMENTS_BYTES = 4096;

/** The text cut to at most `maxBytes` of UTF-8, never in the middle of a character. */
export function truncateBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  return Buffer.from(text)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
}

/** What one audit record says beyond who asked. */
export interface AuditFacts {
  call_id: string;
  provider?: string;
  reply?: ToolCallReply;
  /** Overrides the outcome read from the reply (an approval decision has no reply of its own). */
  outcome?: ToolAuditRecord['outcome'];
  duration_ms?: number;
  replayed?: boolean;
  cached?: boolean;
  decided_by?: string;
  note?: string;
}

/**
 * Publishes one record per tool call attempt on the audit stream. Publishing does not hold up the
 * reply: failures are logged, and `flush()` waits for what is still in flight at shutdown. With
 * `acknowledged: false` the publish does not ask JetStream for an ack (see `CallRunner.runUnrecorded`).
 */
export class AuditLog {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly bus: Bus,
    private readonly metrics?: ToolMetrics,
  ) {}

  record(origin: CallOrigin, facts: AuditFacts, opts: { acknowledged?: boolean } = {}): void {
    const entry = toAuditRecord(origin, facts);
    this.metrics?.record(entry);
    const p = this.bus
      .publish(contracts.toolAudit, entry, { subject: this.bus.subjects.toolAudit(origin.task_id), ...(opts.acknowledged === false ? { ack: false } : {}) })
      .then(
        () => undefined,
        (err: unknown) => this.bus.logger.error({ err, call_id: facts.call_id }, 'could not publish a tool audit record'),
      )
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  async flush(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}

function toAuditRecord(origin: CallOrigin, f: AuditFacts): ToolAuditRecord {
  const reply = f.reply;
  const errorCode = reply?.error?.code;
  const outcome =
    f.outcome ??
    (reply?.status === 'ok'
      ? 'ok'
      : reply?.status === 'pending_approval'
        ? 'pending_approval'
        : errorCode === 'tool_forbidden' || errorCode === 'approval_denied'
          ? 'denied'
          : 'error');
  const brokenRules = (reply?.error?.issues ?? []).flatMap((i) => (i.rule ? [i.rule] : []));
  const summary = f.note ?? (reply?.status === 'ok' ? JSON.stringify(reply.result) : reply?.error?.message);
  return {
    time: new Date().toISOString(),
    call_id: f.call_id,
    idempotency_key: origin.idempotency_key,
    task_id: origin.task_id,
    subtask_id: origin.subtask_id,
    step: origin.step,
    call_index: origin.call_index,
    user_id: origin.user_id,
    roles: origin.roles,
    tool: origin.tool,
    ...(f.provider ? { provider: f.provider } : {}),
    arguments: truncateBytes(origin.raw_arguments, AUDIT_ARGUMENTS_BYTES),
    outcome,
    ...(errorCode ? { error_code: errorCode } : {}),
    ...(summary !== undefined ? { result_summary: summary.length > SUMMARY_CHARS ? `${summary.slice(0, SUMMARY_CHARS)}…` : summary } : {}),
    duration_ms: f.duration_ms ?? reply?.duration_ms ?? 0,
    replayed: f.replayed ?? reply?.replayed ?? false,
    cached: f.cached ?? reply?.cached ?? false,
    ...(f.decided_by ? { decided_by: f.decided_by } : {}),
    ...(reply?.adjustments?.length ? { adjustments: reply.adjustments } : {}),
    ...(brokenRules.length ? { broken_rules: brokenRules } : {}),
  };
}
