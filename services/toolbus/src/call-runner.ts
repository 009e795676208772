import { ownerFields, type MemoryProvenance, type ToolCallReply } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import type { AuditLog } from './audit-log.js';
import type { CallRecord, CallRecordStore, StoredRecord } from './call-record.js';
import { ResultCache } from './result-cache.js';
import { normalizeResult, shapeResult } from './result-shaper.js';
import type { ToolExecutor } from './tool-executor.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ExecOutcome, RegisteredTool } from './tool-types.js';

export interface CallRunnerOptions {
  store: CallRecordStore;
  registry: ToolRegistry;
  executor: ToolExecutor;
  cache: ResultCache;
  audit: AuditLog;
  instanceId: string;
  leaseMs: number;
  resultMaxChars: number;
  /** Whether a tool's results are untrusted (ResultTrust): their records are written before the reply. */
  untrusted: (tool: RegisteredTool) => boolean;
  logger: Logger;
}

/**
 * Executes a call whose `running` record this instance holds: renews the lease while the tool
 * runs (so other replicas wait instead of running it again), then writes the final reply into
 * the record with compare-and-set and audits it. Side-effect-free tools skip the `running`
 * record (see `runUnrecorded`).
 */
export class CallRunner {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly o: CallRunnerOptions) {}

  /** A running record owned by this instance, as it is written when a run starts or is taken over. */
  runningRecord(base: CallRecord): CallRecord {
    return { ...base, state: 'running', owner: this.o.instanceId, lease_until: Date.now() + this.o.leaseMs };
  }

  run(key: string, held: StoredRecord, note?: string): Promise<ToolCallReply> {
    return this.track(this.execute(key, held, note));
  }

  /** Waits for the calls this instance is executing (bounded by the caller). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Runs a side-effect-free (`idempotent`) tool with no record first and answers before its one
   * record is written (with `replacing`, over the record of another call at that revision): no KV
   * round trip on the way. Running it twice (a crash before the write, or a duplicate request) is
   * harmless by the tool's own declaration; a resumed runtime asks with `resumed` and so replays
   * the record once it is there. A truncated result is recorded first, so its reference resolves.
   *
   * Otherwise record and audit entry leave with the reply and without asking JetStream for acks:
   * nothing waits for them, and the two acks would wake this process once more per call. Losing
   * one (JetStream failing to store it, which an ack would only have reported) costs a second run
   * of a side-effect-free tool or a missing audit line for it; calls with side effects keep both
   * acknowledged. So do those of tools whose results are untrusted: a memory write later in the
   * task finds them (ResultTrust reads the task's records), so they must be stored before the
   * model can read the result.
   */
  async runUnrecorded(o: { key: string; checked: CallRecord; replacing: number | undefined; afterReply: (fn: () => void) => void }): Promise<ToolCallReply> {
    const tool = this.o.registry.resolve(o.checked.origin.tool);
    const { reply, done } = this.finalize(o.key, o.checked, tool, await this.track(this.executeTool(o.checked, tool)));
    const record: CallRecord = { ...done, replaceable: true };
    if (reply.truncated || (tool && this.o.untrusted(tool))) await this.track(this.recordOnce(o.key, record, o.replacing, reply));
    else o.afterReply(() => this.recordUnacknowledged(o.key, record, o.replacing, reply));
    return reply;
  }

  private recordUnacknowledged(key: string, done: CallRecord, replacing: number | undefined, reply: ToolCallReply): void {
    this.audit(done, reply, undefined, { acknowledged: false });
    try {
      this.o.store.writeUnacknowledged(key, done, replacing);
    } catch (err) {
      this.o.logger.warn({ err, call_id: key }, 'could not record a side-effect-free tool call');
    }
  }

  /**
   * The audit entry and the record go out together (this run is audited whatever the write finds).
   * A record already there stands: a duplicate of this call, or another call of a turn asked again.
   */
  private recordOnce(key: string, done: CallRecord, replacing: number | undefined, reply: ToolCallReply): Promise<void> {
    this.audit(done, reply);
    return this.o.store.write(key, done, replacing).then(
      () => undefined,
      (err: unknown) => this.o.logger.warn({ err, call_id: key }, 'could not record a side-effect-free tool call'),
    );
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  private async execute(key: string, held: StoredRecord, note?: string): Promise<ToolCallReply> {
    const { record } = held;
    const lease = new Lease(this.o.store, key, held, this.o.leaseMs, this.o.logger);
    const tool = this.o.registry.resolve(record.origin.tool);
    let outcome: ExecOutcome & { duration_ms: number };
    try {
      outcome = await this.executeTool(record, tool);
    } finally {
      await lease.release();
    }
    const { reply, done } = this.finalize(key, record, tool, outcome);
    const written = await this.o.store.replace(key, done, lease.revision);
    if (written === undefined) {
      // The lease was lost (this process stalled past it) and another toolbus took the call over.
      const now = await this.o.store.get(key);
      this.o.logger.warn({ call_id: record.call_id, state: now?.record.state }, 'lost the lease on a tool call while it ran');
      if (now?.record.state === 'done' && now.record.reply) return { ...now.record.reply, replayed: true };
    }
    this.audit(record, reply, note);
    return reply;
  }

  private executeTool(record: CallRecord, tool: RegisteredTool | undefined): Promise<ExecOutcome & { duration_ms: number }> {
    if (!tool) {
      return Promise.resolve({
        ok: false,
        duration_ms: 0,
        error: { code: 'provider_unavailable', message: `tool "${record.origin.tool}" is not offered by any provider right now`, retryable: true },
      });
    }
    return this.o.executor.execute(tool, record.arguments ?? {}, {
      callId: record.call_id,
      idempotencyKey: record.origin.idempotency_key,
      context: { task_id: record.origin.task_id, ...ownerFields(record.origin), roles: record.origin.roles, ...provenanceOf(record) },
    });
  }

  /** The reply for the model and the `done` record that makes every later request replay it. */
  private finalize(
    key: string,
    record: CallRecord,
    tool: RegisteredTool | undefined,
    outcome: ExecOutcome & { duration_ms: number },
  ): { reply: ToolCallReply; done: CallRecord } {
    const reply: ToolCallReply = {
      call_id: record.call_id,
      status: outcome.ok ? 'ok' : 'error',
      duration_ms: outcome.duration_ms,
      ...(record.adjustments ? { adjustments: record.adjustments } : {}),
    };
    let full: unknown;
    if (outcome.ok) {
      const normalized = normalizeResult(outcome.result);
      const shaped = shapeResult(normalized, this.o.resultMaxChars, key);
      reply.result = shaped.result;
      if (shaped.truncated) {
        Object.assign(reply, { truncated: true, full_result_ref: key });
        full = normalized;
      }
      if (tool && ResultCache.applies(tool.spec)) {
        this.o.cache
          .put(tool.spec, record.arguments ?? {}, normalized)
          .catch((err: unknown) => this.o.logger.warn({ err, tool: tool.spec.name }, 'could not cache a result'));
      }
    } else {
      reply.error = outcome.error;
    }
    const { owner: _owner, lease_until: _lease, ...rest } = record;
    return { reply, done: { ...rest, state: 'done', reply, ...(full !== undefined ? { full_result: full } : {}) } };
  }

  private audit(record: CallRecord, reply: ToolCallReply, note?: string, opts?: { acknowledged?: boolean }): void {
    this.o.audit.record(
      record.origin,
      {
        call_id: record.call_id,
        provider: record.provider,
        reply,
        ...(record.approval?.decided_by ? { decided_by: record.approval.decided_by } : {}),
        ...(note ? { note } : {}),
      },
      opts,
    );
  }
}

/** Renews a running record's lease every third of its length until released. */
class Lease {
  revision: number;
  private lost = false;
  private renewing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: CallRecordStore,
    private readonly key: string,
    held: StoredRecord,
    private readonly leaseMs: number,
    private readonly logger: Logger,
  ) {
    this.revision = held.revision;
    let record = held.record;
    this.timer = setInterval(
      () => {
        this.renewing = this.renewing.then(async () => {
          if (this.lost) return;
          const next = { ...record, lease_until: Date.now() + leaseMs };
          const revision = await this.store.replace(this.key, next, this.revision).catch((err: unknown) => {
            this.logger.warn({ err, call_id: key }, 'could not renew a tool call lease');
            return null;
          });
          if (revision === undefined) this.lost = true;
          else if (revision !== null) {
            this.revision = revision;
            record = next;
          }
        });
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    await this.renewing;
  }
}

/** A memory write's provenance as decided when the call came in, with the person who approved it, if anyone did. */
function provenanceOf(record: CallRecord): { provenance?: MemoryProvenance } {
  if (!record.provenance) return {};
  const approvedBy = record.approval?.decision === 'approve' ? record.approval.decided_by : undefined;
  return { provenance: { ...record.provenance, ...(approvedBy ? { approved_by: approvedBy } : {}) } };
}
