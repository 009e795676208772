import type { Static } from '@sinclair/typebox';
import {
  currentTraceparent,
  contracts,
  makeTaskEvent,
  ownerOf,
  type ApprovalDecision,
  type ApprovalListReply,
  type ApprovalListRequest,
  type PendingApproval,
  type ApprovalDecisionReply as ApprovalDecisionReplySchema,
  type ToolCallReply,
  wireError,
} from '@hermes/contracts';
import { ReplyError, type Bus } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import type { ApprovalIndex } from './approval-index.js';
import type { AuditLog } from './audit-log.js';
import { isRecordKey, type CallRecord, type CallRecordStore, type StoredRecord } from './call-record.js';
import type { CallRunner } from './call-runner.js';
import { inParkedCallTrace } from './tool-call-context.js';

export interface ApprovalDeskOptions {
  bus: Bus;
  store: CallRecordStore;
  index: ApprovalIndex;
  runner: CallRunner;
  audit: AuditLog;
  approvalTimeoutMs: number;
  logger: Logger;
}

// The contracts export only the schema of this reply, not its type.
type ApprovalDecisionReply = Static<typeof ApprovalDecisionReplySchema>;

/**
 * Calls of `require_confirm` tools wait here for a human. Parking writes a `pending_approval`
 * record, lists it in the approval index and tells the submitter (an `approval_needed` step
 * event). A decision or the deadline moves the record on with compare-and-set, so exactly one
 * replica acts, and then `toolCallSettled` wakes the waiting agent loop.
 */
export class ApprovalDesk {
  constructor(private readonly o: ApprovalDeskOptions) {}

  /** The pending record for a new call (written by the caller with create-if-absent). */
  pendingRecord(base: CallRecord): CallRecord {
    const traceparent = currentTraceparent();
    return {
      ...base,
      state: 'pending_approval',
      approval: { expires_at: new Date(Date.now() + this.o.approvalTimeoutMs).toISOString() },
      ...(traceparent ? { traceparent } : {}),
    };
  }

  /** The reply while a call waits; the same for every repeated request. */
  pendingReply(record: CallRecord): ToolCallReply {
    return { call_id: record.call_id, status: 'pending_approval', approval_expires_at: record.approval?.expires_at ?? new Date().toISOString() };
  }

  /** Lists a freshly parked call and asks for a decision. Safe to repeat (the event id is stable). */
  async announce(key: string, record: CallRecord): Promise<void> {
    const expiresAt = record.approval?.expires_at ?? new Date().toISOString();
    const { origin } = record;
    const id = `${record.call_id}:approval_needed`;
    const event = makeTaskEvent('step', {
      id,
      source: this.o.bus.eventSource('toolbus'),
      taskId: origin.task_id,
      data: {
        task_id: origin.task_id,
        subtask_id: origin.subtask_id,
        step: origin.step,
        kind: 'approval_needed',
        detail: {
          call_id: record.call_id,
          tool: origin.tool,
          arguments: record.arguments ?? {},
          expires_at: expiresAt,
          // Why a tool that needs no confirmation of its own waits: what it writes would come from these tools' results.
          ...(record.provenance?.kind === 'tool_result' ? { reason: 'untrusted_tool_result', after_tools: record.provenance.tools ?? [] } : {}),
        },
      },
    });
    await this.o.bus.publish(contracts.taskEvents, event, { subject: this.o.bus.subjects.taskEvents(ownerOf(origin).team, origin.task_id), msgId: id });
    // Listed only once the request is out: a call missing from the index is announced again.
    await this.o.index.add(key, { task_id: origin.task_id, tool: origin.tool, expires_at: expiresAt });
    this.changed(record, 'pending');
  }

  /** A pending call whose index entry went missing (a toolbus died between the two writes) is listed again. */
  async ensureAnnounced(key: string, record: CallRecord): Promise<void> {
    if (!this.o.index.has(key)) await this.announce(key, record);
  }

  async decide(d: ApprovalDecision): Promise<ApprovalDecisionReply> {
    const key = d.call_id;
    for (let i = 0; i < 20; i++) {
      const current = isRecordKey(key) ? await this.o.store.get(key) : undefined;
      if (!current || current.record.origin.task_id !== d.task_id)
        throw refuse('not_found', `task ${d.task_id} has no tool call ${d.call_id}`, { reason: 'unknown_call' });
      const { record } = current;
      if (record.state !== 'pending_approval')
        throw refuse('not_found', alreadyDecided(record), { reason: record.approval?.decision === 'timeout' ? 'approval_expired' : 'already_decided' });
      if (Date.parse(record.approval?.expires_at ?? '') <= Date.now()) {
        await this.expire(key);
        throw refuse('not_found', `tool call ${d.call_id} is no longer waiting: its approval time ran out`, { reason: 'approval_expired' });
      }
      const approval = { ...record.approval!, decision: d.decision, decided_by: d.decided_by, ...(d.reason ? { reason: d.reason } : {}) };
      const reply = d.decision === 'approve' ? await this.approve(key, current, approval) : await this.deny(key, current, approval);
      if (reply) return reply;
    }
    throw new ReplyError(wireError('unavailable', `tool call ${d.call_id} keeps changing; try again`));
  }

  /**
   * The calls still waiting for a decision in the team's tasks (one user's, or all for `user_id:
   * null`), oldest first. The index says which calls wait; each one's record is read, so what is
   * listed is what `decide` would find (a call decided a moment ago on another replica is left out).
   */
  async list(req: ApprovalListRequest): Promise<ApprovalListReply> {
    const approvals: PendingApproval[] = [];
    for (const key of this.o.index.pending().keys()) {
      const current = isRecordKey(key) ? await this.o.store.get(key) : undefined;
      if (!current || current.record.state !== 'pending_approval') continue;
      const { record } = current;
      const owner = ownerOf(record.origin);
      if (owner.team !== req.team || (req.user_id !== null && owner.user_id !== req.user_id)) continue;
      const { origin } = record;
      approvals.push({
        call_id: record.call_id,
        task_id: origin.task_id,
        subtask_id: origin.subtask_id,
        step: origin.step,
        ...owner,
        tool: origin.tool,
        arguments: record.arguments ?? {},
        requested_at: record.created_at,
        expires_at: record.approval?.expires_at ?? record.created_at,
      });
    }
    approvals.sort((a, b) => a.requested_at.localeCompare(b.requested_at) || a.call_id.localeCompare(b.call_id));
    return { approvals };
  }

  /** Times a pending call out if it is still pending past its deadline (any replica may call this). */
  async expire(key: string): Promise<void> {
    for (let i = 0; i < 20; i++) {
      const current = await this.o.store.get(key);
      if (!current || current.record.state !== 'pending_approval') return this.o.index.remove(key);
      const { record } = current;
      if (Date.parse(record.approval?.expires_at ?? '') > Date.now()) return;
      const reply: ToolCallReply = {
        call_id: record.call_id,
        status: 'error',
        error: { code: 'approval_timeout', message: `nobody approved this call of "${record.origin.tool}" in time, so it was not run`, retryable: false },
      };
      const done: CallRecord = { ...record, state: 'done', approval: { ...record.approval!, decision: 'timeout' }, reply };
      if ((await this.o.store.replace(key, done, current.revision)) === undefined) continue;
      await this.settle(key, record, 'denied');
      this.o.audit.record(record.origin, { call_id: record.call_id, provider: record.provider, reply });
      return;
    }
  }

  private async approve(key: string, current: StoredRecord, approval: CallRecord['approval']): Promise<ApprovalDecisionReply | undefined> {
    const running = this.o.runner.runningRecord({ ...current.record, approval });
    const revision = await this.o.store.replace(key, running, current.revision);
    if (revision === undefined) return undefined;
    await this.o.index.remove(key);
    const { record } = current;
    // The decision is durable now; the call runs here (its audit record names the approver) and
    // the loop is woken once the result is recorded.
    void inParkedCallTrace(running, () => this.o.runner.run(key, { record: running, revision }).then(() => this.settle(key, record, 'approved'))).catch(
      (err: unknown) => this.o.logger.error({ err, call_id: record.call_id }, 'approved tool call failed to run'),
    );
    return { call_id: record.call_id, status: 'approved' };
  }

  private async deny(key: string, current: StoredRecord, approval: CallRecord['approval']): Promise<ApprovalDecisionReply | undefined> {
    const { record } = current;
    const why = approval?.reason ? `: ${approval.reason}` : '';
    const reply: ToolCallReply = {
      call_id: record.call_id,
      status: 'error',
      error: { code: 'approval_denied', message: `${approval?.decided_by ?? 'a person'} denied this call of "${record.origin.tool}"${why}`, retryable: false },
    };
    if ((await this.o.store.replace(key, { ...record, state: 'done', approval, reply }, current.revision)) === undefined) return undefined;
    await this.settle(key, record, 'denied');
    this.o.audit.record(record.origin, { call_id: record.call_id, provider: record.provider, reply, decided_by: approval?.decided_by });
    return { call_id: record.call_id, status: 'denied' };
  }

  /** Tells the team's approval watchers (the gateway's streams) that its pending list changed. */
  private changed(record: CallRecord, status: 'pending' | ApprovalDecisionReply['status']): void {
    const subject = this.o.bus.subjects.toolApprovalChanged(ownerOf(record.origin).team);
    // A lost notice only delays a watcher until its next refresh; it must not fail the decision.
    this.o.bus
      .publish(contracts.toolApprovalChanged, { task_id: record.origin.task_id, call_id: record.call_id, status }, { subject })
      .catch((err: unknown) => this.o.logger.warn({ err, call_id: record.call_id }, 'could not announce an approval change'));
  }

  private async settle(key: string, record: CallRecord, status: ApprovalDecisionReply['status']): Promise<void> {
    await this.o.index.remove(key);
    this.changed(record, status);
    await this.o.bus.publish(
      contracts.toolCallSettled,
      { call_id: record.call_id, status },
      { subject: this.o.bus.subjects.toolCallSettled(record.origin.task_id) },
    );
  }
}

function alreadyDecided(record: CallRecord): string {
  const a = record.approval;
  if (!a?.decision) return `tool call ${record.call_id} does not wait for approval`;
  if (a.decision === 'timeout') return `tool call ${record.call_id} is no longer waiting: its approval time ran out`;
  return `tool call ${record.call_id} was already ${a.decision === 'approve' ? 'approved' : 'denied'} by ${a.decided_by ?? 'someone'}`;
}

/**
 * A decision for a call that does not wait for approval. The code is `not_found` whatever the
 * reason (the gateway answers it with 404); `details.reason` tells `unknown_call`,
 * `already_decided` and `approval_expired` apart.
 */
function refuse(code: 'not_found', message: string, details: { reason: string }): ReplyError {
  return new ReplyError(wireError(code, message, details));
}
