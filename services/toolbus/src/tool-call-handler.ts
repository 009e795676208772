import { ownerOf, sameOwner, type ToolCallReply, type ToolCallRequest, type ToolError } from '@hermes/contracts';
import { ReplyError } from '@hermes/bus';
import type { ApprovalDesk } from './approval-desk.js';
import type { ArgumentValidator } from './argument-validator.js';
import { parseArguments } from './argument-parser.js';
import { brokenRules } from './argument-rules.js';
import { shapeArguments } from './argument-transforms.js';
import { AUDIT_ARGUMENTS_BYTES, truncateBytes, type AuditLog } from './audit-log.js';
import { callHashOf, recordKeyFor, type CallOrigin, type CallRecord, type CallRecordStore, type StoredRecord } from './call-record.js';
import type { CallRunner } from './call-runner.js';
import { denialOf } from './permissions.js';
import { ResultCache } from './result-cache.js';
import type { ResultTrust } from './result-trust.js';
import { shapeResult } from './result-shaper.js';
import type { ToolRegistry } from './tool-registry.js';
import type { RegisteredTool } from './tool-types.js';

export interface ToolCallHandlerOptions {
  store: CallRecordStore;
  registry: ToolRegistry;
  validator: ArgumentValidator;
  runner: CallRunner;
  desk: ApprovalDesk;
  cache: ResultCache;
  audit: AuditLog;
  trust: ResultTrust;
  resultMaxChars: number;
  leaseMs: number;
}

/**
 * One tool call, at most once per idempotency key. The call record in KV decides what happens:
 * a finished call is replayed, one waiting for approval answers `pending_approval` again, one
 * running elsewhere is waited for (or taken over once its toolbus stopped renewing the lease),
 * and a new one is checked (tool, permission, arguments) and then recorded before it runs.
 */
export class ToolCallHandler {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly o: ToolCallHandlerOptions) {}

  /** `afterReply` (from the request's context) defers bookkeeping until the reply is on its way. */
  handle(req: ToolCallRequest, opts: { afterReply?: (fn: () => void) => void } = {}): Promise<ToolCallReply> {
    const p = this.follow(req, opts);
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => undefined);
    return p;
  }

  /** Waits for every call being handled (bounded by the caller): a draining toolbus answers what it took. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private async follow(req: ToolCallRequest, opts: { afterReply?: (fn: () => void) => void }): Promise<ToolCallReply> {
    const afterReply = opts.afterReply ?? ((fn: () => void) => fn());
    const key = recordKeyFor(req.idempotency_key);
    const origin = originOf(req);
    const hash = callHashOf(req.tool, req.arguments);
    const started = Date.now();
    let pollMs = 20;
    // Almost every call is new, so the first round skips the read and goes straight to creating
    // the record; a key that exists makes that create fail, and the record is then read and followed.
    // A resumed runtime's calls are likely known: those read first (so side-effect-free ones replay).
    let firstRound = !req.resumed;
    for (;;) {
      const current = firstRound ? undefined : await this.o.store.get(key);
      firstRound = false;
      if (!current) {
        const reply = await this.start({ key, req, origin, hash, afterReply });
        if (reply) return reply;
        continue; // another request or replica created the record first: follow it
      }
      const { record } = current;
      if (!isSameCall(record, req, hash)) {
        // A side-effect-free call of a turn whose checkpoint never landed: this call takes the key.
        const reply = await this.start({ key, req, origin, hash, afterReply, replacing: current.revision });
        if (reply) return reply;
        continue;
      }
      if (record.state === 'done' && record.reply) {
        const reply = { ...record.reply, replayed: true };
        this.o.audit.record(origin, { call_id: record.call_id, provider: record.provider, reply, duration_ms: 0 });
        return reply;
      }
      if (record.state === 'pending_approval') {
        if (Date.parse(record.approval?.expires_at ?? '') <= Date.now()) {
          await this.o.desk.expire(key);
          continue;
        }
        await this.o.desk.ensureAnnounced(key, record);
        const reply = this.o.desk.pendingReply(record);
        this.o.audit.record(origin, { call_id: record.call_id, provider: record.provider, reply, replayed: true });
        return reply;
      }
      if ((record.lease_until ?? 0) <= Date.now()) {
        // Its toolbus stopped renewing the lease (it died): run it here, with the same idempotency
        // key, if this replica can; taking it over only to record that its tool is unknown here
        // would tell the model a step failed that was never run.
        if (!this.o.registry.resolve(record.origin.tool)) throw notRunnableHere(record.origin.tool);
        const takeover = this.o.runner.runningRecord({ ...record, attempt: record.attempt + 1 });
        const revision = await this.o.store.replace(key, takeover, current.revision);
        if (revision !== undefined) return this.o.runner.run(key, { record: takeover, revision }, `taken over from ${record.owner ?? 'unknown'}`);
        continue;
      }
      // Running on a live lease: wait for its result rather than run it twice.
      const tool = this.o.registry.resolve(record.origin.tool);
      if (Date.now() - started > (tool?.timeoutMs ?? 0) + 3 * this.o.leaseMs) {
        return {
          call_id: record.call_id,
          status: 'error',
          error: { code: 'tool_timeout', message: 'the call is still running on another toolbus; ask again later', retryable: true },
        };
      }
      await sleep(Math.min(pollMs, Math.max(10, (record.lease_until ?? 0) - Date.now() + 20)));
      pollMs = Math.min(pollMs * 2, 250);
    }
  }

  /**
   * A call never seen before, recorded as new or (with `replacing`) over a replaceable record of
   * another call at that revision; undefined when another request wrote the record first.
   */
  private async start(o: NewCall): Promise<ToolCallReply | undefined> {
    const { key, req, origin, hash, replacing } = o;
    const now = new Date().toISOString();
    const base: CallRecord = { call_id: key, origin, call_hash: hash, state: 'done', attempt: 1, created_at: now, updated_at: now };
    const access = { roles: req.roles, ...(req.allow ? { allow: req.allow } : {}) };
    const tool = this.o.registry.resolve(req.tool);
    if (!tool) {
      if (this.o.registry.discovering()) throw notRunnableHere(req.tool);
      const away = this.o.registry.unavailable(req.tool);
      if (away)
        return this.finish(o, base, {
          code: 'provider_unavailable',
          message: `the tool "${req.tool}" is unavailable for now: ${away}; try again shortly or do without it`,
          retryable: true,
        });
      const names = this.o.registry.usableBy(access).map((t) => t.spec.name);
      const message = `there is no tool "${req.tool}"; ${names.length ? `tools you may use: ${names.join(', ')}` : 'no tools are available to you'}`;
      return this.finish(o, base, { code: 'tool_not_found', message, retryable: false });
    }
    const withTool: CallRecord = { ...base, provider: tool.provider };
    const denial = denialOf(tool.spec, access);
    if (denial) return this.finish(o, withTool, { code: 'tool_forbidden', message: `you may not use this tool: ${denial}`, retryable: false });
    // repair → transform → validate → rules: each step sees what the one before made of the arguments.
    const parsed = parseArguments(req.arguments);
    if (!parsed.ok) return this.finish(o, withTool, invalidArguments(tool, parsed.issues));
    const shaped = shapeArguments(parsed.value, tool.spec.transforms ?? [], tool.spec.parameters);
    if (shaped.issues.length) return this.finish(o, withTool, invalidArguments(tool, shaped.issues));
    const args = shaped.value;
    const adjusted: Partial<CallRecord> = shaped.adjustments.length ? { adjustments: shaped.adjustments } : {};
    const issues = this.o.validator.check(tool.validate, args);
    if (issues.length) return this.finish(o, { ...withTool, ...adjusted }, invalidArguments(tool, issues));
    const broken = brokenRules(tool.spec.rules ?? [], args);
    if (broken.length) return this.finish(o, { ...withTool, ...adjusted }, invalidArguments(tool, broken));
    // A memory write's provenance is decided now, from the task's earlier results, and kept with
    // the call: an approval later writes what was decided here.
    const provenance = this.o.trust.writesMemory(tool) ? await this.o.trust.provenanceOf(req, key) : undefined;
    const checked: CallRecord = { ...withTool, ...adjusted, arguments: args, ...(provenance ? { provenance } : {}) };
    const confirm = tool.spec.require_confirm === true || this.o.trust.needsApproval(provenance);

    if (ResultCache.applies(tool.spec) && !confirm) {
      const hit = await this.o.cache.get(tool.spec, args).catch(() => undefined);
      if (hit !== undefined) return this.finishFromCache(o, checked, hit);
    }
    if (confirm) {
      const pending = this.o.desk.pendingRecord(checked);
      if ((await this.o.store.write(key, pending, replacing)) === undefined) return undefined;
      await this.o.desk.announce(key, pending);
      const reply = this.o.desk.pendingReply(pending);
      this.o.audit.record(origin, { call_id: key, provider: tool.provider, reply });
      return reply;
    }
    if (tool.spec.idempotent) return this.o.runner.runUnrecorded({ key, checked, afterReply: o.afterReply, replacing });
    const running = this.o.runner.runningRecord(checked);
    const revision = await this.o.store.write(key, running, replacing);
    if (revision === undefined) return undefined;
    return this.o.runner.run(key, { record: running, revision } satisfies StoredRecord);
  }

  /** Records a call that ends before running (a model error), so that a replay is identical. */
  private async finish({ key, replacing }: NewCall, base: CallRecord, error: ToolError): Promise<ToolCallReply | undefined> {
    const reply: ToolCallReply = { call_id: key, status: 'error', error, duration_ms: 0, ...(base.adjustments ? { adjustments: base.adjustments } : {}) };
    if ((await this.o.store.write(key, { ...base, state: 'done', replaceable: true, reply }, replacing)) === undefined) return undefined;
    this.o.audit.record(base.origin, { call_id: key, provider: base.provider, reply });
    return reply;
  }

  private async finishFromCache({ key, replacing }: NewCall, base: CallRecord, cached: unknown): Promise<ToolCallReply | undefined> {
    const shaped = shapeResult(cached, this.o.resultMaxChars, key);
    const reply: ToolCallReply = {
      call_id: key,
      status: 'ok',
      result: shaped.result,
      cached: true,
      duration_ms: 0,
      ...(base.adjustments ? { adjustments: base.adjustments } : {}),
      ...(shaped.truncated ? { truncated: true, full_result_ref: key } : {}),
    };
    const record: CallRecord = { ...base, state: 'done', replaceable: true, reply, ...(shaped.truncated ? { full_result: cached } : {}) };
    if ((await this.o.store.write(key, record, replacing)) === undefined) return undefined;
    this.o.audit.record(base.origin, { call_id: key, provider: base.provider, reply });
    return reply;
  }
}

interface NewCall {
  key: string;
  req: ToolCallRequest;
  origin: CallOrigin;
  hash: string;
  afterReply: (fn: () => void) => void;
  /** The revision of a replaceable record of another call that this one takes over. */
  replacing?: number | undefined;
}

function originOf(req: ToolCallRequest): CallOrigin {
  const { arguments: raw, allow: _allow, resumed: _resumed, ...rest } = req;
  return { ...rest, raw_arguments: truncateBytes(raw, AUDIT_ARGUMENTS_BYTES) };
}

/**
 * A call left for another try, with nothing recorded: this replica has not heard of its tool (it
 * started moments ago and providers are still announcing). The runtime waits such an answer out
 * and asks again under the same key.
 */
function notRunnableHere(tool: string): ReplyError {
  return new ReplyError({
    code: 'provider_unavailable',
    message: `this toolbus has not heard from the provider of "${tool}" yet; ask again shortly`,
    retryable: true,
  });
}

function invalidArguments(tool: RegisteredTool, issues: ToolError['issues'] & object): ToolError {
  const summary = issues.map((i) => `${i.path || '(arguments)'} ${i.message}`).join('; ');
  return {
    code: 'invalid_arguments',
    message: `the arguments for "${tool.spec.name}" are invalid: ${summary}. Fix them and call the tool again.`,
    retryable: false,
    issues,
  };
}

/**
 * Whether the request is a resend of the recorded call (replay it) or another call under the same
 * key, which may take over a replaceable record. Anything else is a caller bug: one key for two
 * tasks, or two different calls where the first may have had side effects.
 */
function isSameCall(record: CallRecord, req: ToolCallRequest, hash: string): boolean {
  // One task has one owner; a record of another under the same task id is never replayed to this one.
  const sameTask = record.origin.task_id === req.task_id && sameOwner(ownerOf(record.origin), ownerOf(req));
  // Records written before calls were hashed are compared by tool alone.
  if (sameTask && (record.call_hash === undefined ? record.origin.tool === req.tool : record.call_hash === hash)) return true;
  if (sameTask && record.replaceable && record.state === 'done') return false;
  throw new ReplyError({
    code: 'idempotency_conflict',
    message: `idempotency key ${req.idempotency_key} already names a call of "${record.origin.tool}" in task ${record.origin.task_id}`,
    retryable: false,
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
