import { randomUUID } from 'node:crypto';
import { request, type Bus } from '@hermes/bus';
import { contracts, type ToolCallReply } from '@hermes/contracts';
import type { Caller } from './auth.js';
import { ask } from './http-errors.js';

/** Where an MCP host call stands while it waits for a person's decision. */
export interface ApprovalWait {
  call_id: string;
  /** When the toolbus stops waiting and ends the call with `approval_timeout`. */
  expires_at: string;
  /** 1 when the call is parked, then one more each time the gateway asks again. */
  round: number;
}

export interface HostToolCallOptions {
  bus: Bus;
  caller: Caller;
  tool: string;
  /** The arguments as JSON text; the same text every time the call is asked again. */
  arguments: string;
  /** While the call waits for approval, ask again this often even without a settled notice. */
  approvalPollMs: number;
  /** Aborts the wait (the MCP host went away); the call stays parked and runs if approved later. */
  signal?: AbortSignal;
  /** Called when the call is parked and at each poll while it waits (the endpoint sends MCP progress). */
  onWaiting?: (wait: ApprovalWait) => Promise<void>;
}

/** Past the approval deadline, how long the toolbus gets to notice and end the call before we ask. */
const EXPIRY_SLACK_MS = 250;

/**
 * One tool call of an MCP host through the toolbus (`toolHostCall`). A call of a `require_confirm`
 * tool is parked there; this then waits for the decision, as the runtime's tool caller does for an
 * agent's call: woken by `toolCallSettled` for the call's task (or a poll, or the approval deadline)
 * it asks again under the same synthesised task with the same tool and arguments, which the toolbus
 * answers from the call record (`pending_approval` until decided; then the result, `approval_denied`
 * or `approval_timeout`), so the tool runs at most once however often it is asked.
 */
export async function hostToolCall(o: HostToolCallOptions): Promise<ToolCallReply> {
  const taskId = `mcp_${randomUUID().replace(/-/g, '')}`;
  const send = () =>
    ask(() =>
      request(o.bus, contracts.toolHostCall, {
        tool: o.tool,
        arguments: o.arguments,
        user_id: o.caller.user_id,
        team: o.caller.team,
        roles: [...o.caller.roles],
        task_id: taskId,
      }),
    );
  let reply = await send();
  if (reply.status !== 'pending_approval') return reply;

  // A decision may land between an ask and the wait after it: remember it rather than sleep through it.
  let notified = false;
  let wake: () => void = () => {};
  const settled = o.bus.subscribe(o.bus.subjects.toolCallSettled(taskId), () => {
    notified = true;
    wake();
  });
  try {
    // Asked once more with the subscription in place: a decision made before it was is not missed.
    await o.bus.flush();
    reply = await send();
    for (let round = 1; reply.status === 'pending_approval'; round++) {
      const expiresAt = reply.approval_expires_at ?? new Date().toISOString();
      await o.onWaiting?.({ call_id: reply.call_id, expires_at: expiresAt, round });
      if (o.signal?.aborted) return reply;
      if (!notified) {
        const untilExpiry = Math.max(0, Date.parse(expiresAt) - Date.now()) + EXPIRY_SLACK_MS;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(o.approvalPollMs, untilExpiry));
          wake = () => (clearTimeout(timer), resolve());
          o.signal?.addEventListener('abort', wake, { once: true });
        });
        o.signal?.removeEventListener('abort', wake);
        if (o.signal?.aborted) return reply;
      }
      notified = false;
      reply = await send();
    }
    return reply;
  } finally {
    settled.unsubscribe();
  }
}
