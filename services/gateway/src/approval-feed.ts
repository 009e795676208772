import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { contracts, type ApprovalListReply } from '@hermes/contracts';
import type { Caller } from './auth.js';
import { httpErrorFromBus } from './http-errors.js';
import type { SseStream } from './sse.js';

/** The pending approvals the caller may decide: their own tasks', every task's of the team for an approver or admin, or none. */
export async function listApprovals(bus: Bus, caller: Caller): Promise<ApprovalListReply> {
  if (caller.approves === 'none') return { approvals: [] };
  try {
    return await request(bus, contracts.toolApprovalList, { team: caller.team, user_id: caller.approves === 'team' ? null : caller.user_id });
  } catch (err) {
    if (err instanceof OutgoingPayloadError) throw err;
    throw httpErrorFromBus(err);
  }
}

export interface ApprovalFeedOptions {
  bus: Bus;
  caller: Caller;
  stream: SseStream;
  /** Wait after a change notice before listing, so a burst of notices costs one request. */
  settleMs?: number;
  /** Lists again this often even without a notice: core notices can be lost across a reconnect. */
  refreshMs?: number;
}

/**
 * Feeds one SSE stream with the caller's pending approvals: an `approvals` event with the whole
 * list at once, and again whenever it changes. The toolbus announces every park, decision and
 * timeout on the team's `toolApprovalChanged` subject; each notice (and a slow periodic refresh)
 * lists again, and only a list that differs from the last one sent is sent. Runs until the stream ends.
 */
export async function feedApprovals({ bus, caller, stream, settleMs = 150, refreshMs = 15_000 }: ApprovalFeedOptions): Promise<void> {
  let last = '';
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const refresh = async () => {
    const list = await listApprovals(bus, caller);
    const text = JSON.stringify(list);
    if (text === last) return;
    last = text;
    await stream.send({ event: 'approvals', data: list });
  };
  const schedule = () => {
    if (timer || stream.closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      running = running.then(refresh).catch(() => schedule());
    }, settleMs);
  };
  const sub = bus.subscribe(bus.subjects.toolApprovalChanged(caller.team), schedule);
  const periodic = setInterval(schedule, refreshMs);
  periodic.unref();
  try {
    await bus.flush();
    await refresh();
    await new Promise<void>((resolve) => stream.signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    sub.unsubscribe();
    clearInterval(periodic);
    clearTimeout(timer);
  }
}
