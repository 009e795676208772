import { contracts, type ToolCallReply, type ToolCallRequest } from '@hermes/contracts';
import { RemoteError, request, type Bus } from '@hermes/bus';
import { traceApprovalWait, traceToolCall } from './agent-spans.js';
import { noWaiting, type WaitOut } from './dependency-wait.js';

export interface ToolCallerOptions {
  bus: Bus;
  /** How long one tool call may take in all, asked again or not (the tool's own timeout is enforced by the toolbus). */
  requestTimeoutMs: number;
  /**
   * How long one request waits for its reply before the call is asked again under the same key
   * (TOOL_REPLY_WAIT_MS). A reply lost with its toolbus (killed mid-call, a NATS restart) is so
   * not waited for until requestTimeoutMs: the ask reaches a live toolbus, which replays the
   * call's result, waits for the replica running it, or takes it over once that replica's lease
   * lapsed. Default: requestTimeoutMs (one request).
   */
  replyWaitMs?: number;
  /** While a call waits for approval, ask again this often even without a settled notice. */
  approvalPollMs: number;
}

/**
 * Sends tool calls to the ToolBus. A call parked for approval is asked again (same idempotency
 * key, so it never runs twice) when the toolbus announces a decision for the task, or on a poll.
 */
export class ToolCaller {
  constructor(private readonly o: ToolCallerOptions) {}

  /** One tool call, in an `execute_tool` span; a call parked for approval waits in an `approval wait` span. */
  call(req: ToolCallRequest, signal?: AbortSignal, waitOut: WaitOut = noWaiting): Promise<ToolCallReply> {
    // A call nobody received (no toolbus listening: one restarting) is sent again with its key.
    const send = () => waitOut('toolbus', () => this.send(req));
    return traceToolCall(req, async () => {
      const reply = await send();
      return reply.status === 'pending_approval' ? traceApprovalWait(req, reply.call_id, () => this.awaitDecision(req, reply, send, signal)) : reply;
    });
  }

  private async awaitDecision(req: ToolCallRequest, first: ToolCallReply, send: () => Promise<ToolCallReply>, signal?: AbortSignal): Promise<ToolCallReply> {
    let reply = first;
    // A decision may land between our ask and our wait: remember it rather than sleep through it.
    let notified = false;
    let wake: () => void = () => {};
    const settled = this.o.bus.subscribe(this.o.bus.subjects.toolCallSettled(req.task_id), () => {
      notified = true;
      wake();
    });
    try {
      while (reply.status === 'pending_approval') {
        if (signal?.aborted) throw signal.reason ?? new Error('aborted');
        if (!notified) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.o.approvalPollMs);
            wake = () => (clearTimeout(timer), resolve());
            signal?.addEventListener('abort', wake, { once: true });
          });
          // One listener per poll would pile up on the job's signal over a long wait.
          signal?.removeEventListener('abort', wake);
        }
        notified = false;
        reply = await send();
      }
      return reply;
    } finally {
      settled.unsubscribe();
    }
  }

  private async send(req: ToolCallRequest): Promise<ToolCallReply> {
    const deadline = Date.now() + this.o.requestTimeoutMs;
    let ask = req;
    for (;;) {
      const left = deadline - Date.now();
      try {
        return await request(this.o.bus, contracts.toolCall, ask, { timeoutMs: Math.max(1, Math.min(this.o.replyWaitMs ?? left, left)) });
      } catch (err) {
        if (!(err instanceof RemoteError && err.code === 'timeout') || Date.now() >= deadline) throw err;
        // The call may have run: the toolbus must look its record up first, as for a resumed job.
        ask = { ...req, resumed: true };
      }
    }
  }
}
