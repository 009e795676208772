import { OutgoingPayloadError, request, type Bus } from '@hermes/bus';
import { ApprovalDecision, ApprovalDecisionBody, contracts, ownerKey, validate } from '@hermes/contracts';
import type { ServerResponse } from 'node:http';
import type { Logger } from '@hermes/telemetry';
import { feedApprovals, listApprovals } from './approval-feed.js';
import type { Caller } from './auth.js';
import { ask, HttpError, httpErrorFromBus, problemOf, sendJson } from './http-errors.js';
import type { SseStream } from './sse.js';
import { readJsonBody } from './json-body.js';
import { getTask, taskIdParam, type RouteHandler } from './task-routes.js';

export interface ApprovalRouteDeps {
  bus: Bus;
  maxBodyBytes: number;
  openEventStream(res: ServerResponse): SseStream;
  logger: Logger;
  /** How often an approval stream lists again without a change notice. */
  refreshMs?: number;
}

/**
 * `POST /v1/tasks/:id/approvals/:call_id`: approve or deny a tool call parked for approval;
 * `GET /v1/approvals`: the pending calls the caller may decide; `GET /v1/approvals/events`: the
 * same list as Server-Sent Events, again on every change.
 */
export function createApprovalRoutes(deps: ApprovalRouteDeps): { decide: RouteHandler; list: RouteHandler; events: RouteHandler } {
  return {
    async list({ res, caller }) {
      sendJson(res, 200, await listApprovals(deps.bus, caller));
    },

    async events({ res, caller }) {
      // The first list is asked before the stream opens, so a toolbus that is down is a plain 503.
      await listApprovals(deps.bus, caller);
      const stream = deps.openEventStream(res);
      try {
        await feedApprovals({ bus: deps.bus, caller, stream, ...(deps.refreshMs ? { refreshMs: deps.refreshMs } : {}) });
      } catch (err) {
        if (!stream.closed) {
          deps.logger.warn({ err }, 'approval stream failed');
          await stream.send({ event: 'stream_error', data: problemOf(httpErrorFromBus(err)) });
        }
      } finally {
        stream.end();
      }
    },

    async decide({ req, res, caller, params }) {
      const taskId = taskIdParam(params[0]);
      const callId = callIdParam(params[1]);
      const body = validate(ApprovalDecisionBody, await readJsonBody(req, deps.maxBodyBytes));
      if (!body.ok) {
        throw new HttpError(400, {
          code: 'invalid_payload',
          message: 'the body must be { "decision": "approve" | "deny", "reason"?: string }',
          issues: body.issues,
        });
      }
      // An approver (or admin) decides any task of the team; an owner their own, unless approver roles
      // are configured. Anyone else gets the same 404 as for no task, so task ids cannot be probed.
      if (!(await isHostCallOf(deps.bus, taskId, callId, caller))) await getTask(deps.bus, taskId, caller, { anyUser: caller.approves === 'team' });
      if (caller.approves === 'none') {
        throw new HttpError(403, { code: 'forbidden', message: 'approvals are decided by the roles in HERMES_APPROVER_ROLES, which this key does not hold' });
      }
      const { decision, reason } = body.value;
      try {
        const reply = await request(deps.bus, contracts.toolApprovalDecide, {
          task_id: taskId,
          call_id: callId,
          decision,
          decided_by: ownerKey(caller),
          ...(reason !== undefined ? { reason } : {}),
        });
        sendJson(res, 200, reply);
      } catch (err) {
        if (err instanceof OutgoingPayloadError) throw err;
        throw httpErrorFromBus(err);
      }
    },
  };
}

/** The synthesised task of an MCP host's tool call (see the toolbus's hostCall): no dispatcher task to read. */
const HOST_CALL_TASK = /^mcp_[0-9a-f]{32}$/;

/**
 * Whether the call is a parked MCP host call the caller may decide as its owner, or as an
 * approver or admin of its team. The dispatcher has no task for it, so the toolbus's list of
 * pending approvals (scoped like the task read) stands in for the task's owner.
 */
async function isHostCallOf(bus: Bus, taskId: string, callId: string, caller: Caller): Promise<boolean> {
  if (!HOST_CALL_TASK.test(taskId)) return false;
  const anyUser = caller.isAdmin || caller.approves === 'team';
  const { approvals } = await ask(() => request(bus, contracts.toolApprovalList, { team: caller.team, user_id: anyUser ? null : caller.user_id }));
  // Not listed (decided, expired, another's, or a dispatcher task of that name): the task read answers.
  return approvals.some((a) => a.task_id === taskId && a.call_id === callId);
}

function callIdParam(raw: string | undefined): string {
  let id: string;
  try {
    id = decodeURIComponent(raw ?? '');
  } catch {
    id = '';
  }
  if (!validate(ApprovalDecision.properties.call_id, id).ok) throw new HttpError(400, { code: 'invalid_call_id', message: 'the call id must not be empty' });
  return id;
}
