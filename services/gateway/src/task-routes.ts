import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  admissionOf,
  followTaskEvents,
  lastTaskEvent,
  OutgoingPayloadError,
  request,
  submitTask,
  type AdmissionBounds,
  type Bus,
  type QueueGauge,
} from '@hermes/bus';
import {
  contracts,
  Id,
  isTerminalStatus,
  limitsAt,
  PAYLOAD_LIMITS,
  requestDigest,
  taskIdFor,
  TaskListRequest,
  TaskRequest,
  TERMINAL_EVENT_KINDS,
  taskEventKind,
  validate,
  type TaskPlanView,
  type TaskView,
} from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import type { Caller } from './auth.js';
import { HttpError, httpErrorFromBus, problemOf, sendJson } from './http-errors.js';
import { readJsonBody } from './json-body.js';
import type { SseStream } from './sse.js';

/** What a route handler gets: the exchange, the authenticated caller and the path parameters. */
export interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly caller: Caller;
  readonly params: readonly string[];
  /** Adds fields (a task id the handler made) to the request's log line and span. */
  annotate(fields: Record<string, string>): void;
}

export type RouteHandler = (ctx: RouteContext) => Promise<void>;

export interface TaskRouteDeps {
  bus: Bus;
  logger: Logger;
  maxBodyBytes: number;
  /** How long an event stream waits for a just-submitted task to be accepted before answering 404. */
  acceptWaitMs: number;
  openEventStream(res: ServerResponse): SseStream;
  /** The runtime job queue, its bounds and TASK_TIMEOUT_MS: a submission admission refuses is answered 503 and not published. */
  admission?: { gauge: Pick<QueueGauge, 'estimate'>; bounds: AdmissionBounds; taskTimeoutMs: number };
}

const SUBMISSION_BODY_LIMITS = limitsAt(PAYLOAD_LIMITS.taskSubmission, '/data');

/** Idempotency keys become CloudEvent ids: visible ASCII, at most the 256 characters an id may have. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,256}$/;

/** `POST /v1/tasks`, `GET /v1/tasks/:id` and `GET /v1/tasks/:id/events`. */
export function createTaskRoutes(deps: TaskRouteDeps): {
  submit: RouteHandler;
  list: RouteHandler;
  get: RouteHandler;
  plan: RouteHandler;
  events: RouteHandler;
} {
  return {
    /** `GET /v1/tasks/:id/plan`: the plan DAG as the dispatcher holds it (null until planned). */
    async plan({ res, caller, params }) {
      const view = await getTask(deps.bus, taskIdParam(params[0]), caller);
      sendJson(res, 200, { task_id: view.task_id, status: view.status, plan: view.plan ?? null } satisfies TaskPlanView);
    },

    /**
     * `GET /v1/tasks?status=&since=&until=&limit=&cursor=&user=`: the caller's tasks, newest first;
     * `all=true` lists everyone's and `user=` one user's (admins only; `user` wins over `all`).
     * A non-admin naming anyone but themselves is refused, as `all=true` is, rather than quietly
     * answered with their own tasks under another user's name.
     */
    async list({ req, res, caller }) {
      const query = new URL(req.url ?? '/', 'http://gateway').searchParams;
      const all = query.get('all') === 'true';
      const user = query.get('user') ?? undefined;
      if (user !== undefined && !validate(Id, user).ok) throw new HttpError(400, { code: 'invalid_query', message: 'user must be a user id' });
      if (user !== undefined && user !== caller.user_id && !caller.isAdmin) {
        throw new HttpError(403, { code: 'forbidden', message: "only an admin may list another user's tasks" });
      }
      if (all && user === undefined && !caller.isAdmin) throw new HttpError(403, { code: 'forbidden', message: "only an admin may list every user's tasks" });
      const limit = query.get('limit');
      const body = {
        user_id: user ?? (all ? null : caller.user_id),
        ...(query.get('status') ? { status: query.get('status') } : {}),
        ...(limit ? { limit: Number(limit) } : {}),
        ...(query.get('cursor') ? { cursor: query.get('cursor') } : {}),
        ...timeRange(query),
      };
      const checked = validate(TaskListRequest, body);
      if (!checked.ok) throw new HttpError(400, { code: 'invalid_query', message: 'invalid status, limit, cursor, since or until', issues: checked.issues });
      try {
        sendJson(res, 200, await request(deps.bus, contracts.teamTaskList, checked.value, { subject: deps.bus.subjects.teamTaskList(caller.team) }));
      } catch (err) {
        if (err instanceof OutgoingPayloadError) throw err;
        throw httpErrorFromBus(err);
      }
    },

    async submit({ req, res, caller, annotate }) {
      const idempotencyKey = header(req, 'idempotency-key');
      if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
        throw new HttpError(400, { code: 'invalid_idempotency_key', message: 'Idempotency-Key must be 1-256 visible ASCII characters' });
      }
      // Bounded as the submission's `data` it becomes, so what passes here the dispatcher accepts.
      const body = await readJsonBody(req, deps.maxBodyBytes, SUBMISSION_BODY_LIMITS);
      if (isObject(body) && body.user_id === undefined) body.user_id = caller.user_id;
      const checked = validate(TaskRequest, body);
      if (!checked.ok) {
        throw new HttpError(400, { code: 'invalid_payload', message: 'the body is not a valid task request', issues: checked.issues });
      }
      if (checked.value.user_id !== caller.user_id && !caller.isAdmin) {
        throw new HttpError(403, { code: 'forbidden', message: 'only an admin may submit a task for another user' });
      }
      // The source names the caller and the task id hashes the team in too, so idempotency keys of
      // different callers never collide, and no team can pre-create another team's task.
      const source = `/hermes/gateway/${caller.user_id}`;
      const team = caller.team;
      // A retry of a task that exists is answered from it, without publishing again.
      const existing =
        idempotencyKey === undefined ? false : await refuseConflictingRetry(deps, taskIdFor(team, source, idempotencyKey), checked.value, caller);
      if (!existing && deps.admission) refuseWhenOverloaded(deps.admission, checked.value.budget?.timeout_ms);
      let submitted;
      try {
        submitted = existing
          ? { taskId: taskIdFor(team, source, idempotencyKey!), duplicate: true }
          : await submitTask(deps.bus, checked.value, { team, source, ...(idempotencyKey ? { id: idempotencyKey } : {}) });
      } catch (err) {
        if (err instanceof OutgoingPayloadError) throw err;
        const answer = httpErrorFromBus(err);
        if (answer.status >= 500) deps.logger.warn({ err }, 'task submission was not acknowledged');
        throw answer;
      }
      // Published in the window JetStream de-duplicates in: the task may not exist yet, so wait for it.
      if (submitted.duplicate && !existing && idempotencyKey !== undefined)
        await refuseConflictingRetry(deps, submitted.taskId, checked.value, caller, { waitMs: deps.acceptWaitMs });
      // The request's span roots the task's trace: the task id makes it findable by tag.
      annotate({ task_id: submitted.taskId });
      const self = `/v1/tasks/${submitted.taskId}`;
      sendJson(
        res,
        submitted.duplicate ? 200 : 202,
        { task_id: submitted.taskId, status: 'submitted', duplicate: submitted.duplicate, links: { self, events: `${self}/events` } },
        { location: self },
      );
    },

    async get({ res, caller, params }) {
      sendJson(res, 200, await getTask(deps.bus, taskIdParam(params[0]), caller));
    },

    async events({ req, res, caller, params }) {
      const taskId = taskIdParam(params[0]);
      const afterSeq = lastEventId(req);
      const view = await waitUntilVisible(deps, taskId, caller, res);
      if (await nothingMoreToSend(deps.bus, view, afterSeq)) {
        // 204 is how SSE tells an EventSource that reconnected after the last event to stop trying.
        res.writeHead(204, { 'cache-control': 'no-store' }).end();
        return;
      }
      const stream = deps.openEventStream(res);
      try {
        for await (const { seq, event } of followTaskEvents(deps.bus, { team: caller.team, task_id: taskId }, { afterSeq, signal: stream.signal })) {
          await stream.send({ id: seq, event: taskEventKind(event), data: event });
        }
      } catch (err) {
        if (!stream.closed) {
          deps.logger.warn({ err, task_id: taskId }, 'event stream failed');
          // Not named `error`: EventSource reserves that name for its own connection errors.
          await stream.send({ event: 'stream_error', data: problemOf(httpErrorFromBus(err)) });
        }
      } finally {
        stream.end();
      }
    },
  };
}

/**
 * The dispatcher's admission rule, applied before publishing: over the bound the caller gets 503
 * `overloaded` with Retry-After, and nothing is stored, so the same Idempotency-Key may be sent again.
 */
function refuseWhenOverloaded(admission: NonNullable<TaskRouteDeps['admission']>, budgetTimeoutMs: number | undefined): void {
  const verdict = admissionOf(admission.gauge.estimate(), admission.bounds, budgetTimeoutMs ?? admission.taskTimeoutMs);
  if (verdict.admit) return;
  const seconds = Math.ceil(verdict.retryAfterMs / 1000);
  throw new HttpError(
    503,
    {
      code: 'overloaded',
      message: `${verdict.queue.jobs_ahead} jobs are queued ahead, more than the runtimes start within the admission bound; submit again in ${seconds} s`,
      retryable: true,
      details: { retry_after_ms: verdict.retryAfterMs, ...verdict.queue },
    },
    { 'retry-after': String(seconds) },
  );
}

/**
 * A retry under an Idempotency-Key must repeat its request: the same key with another body
 * would silently answer with a task that does something else, so it is refused (422). A task
 * stored before digests were kept (none) counts as the same request. True when the task exists.
 */
async function refuseConflictingRetry(
  deps: TaskRouteDeps,
  taskId: string,
  requested: TaskRequest,
  caller: Caller,
  opts: { waitMs?: number } = {},
): Promise<boolean> {
  let view: TaskView;
  try {
    view = await getTask(deps.bus, taskId, caller);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    if (!opts.waitMs) return false;
    await firstEventOf(deps, taskId, caller, { waitMs: opts.waitMs });
    try {
      view = await getTask(deps.bus, taskId, caller);
    } catch (again) {
      if (!isNotFound(again)) throw again;
      return false;
    }
  }
  if (view.request_digest !== undefined && view.request_digest !== requestDigest(requested)) {
    throw new HttpError(422, {
      code: 'duplicate_conflict',
      message: 'this Idempotency-Key was already used for a different request; use a new key for a new task',
      details: { task_id: taskId },
    });
  }
  return true;
}

/** The task does not exist, for this caller. */
const isNotFound = (err: unknown): boolean => err instanceof HttpError && err.code === 'not_found';

/** Reads a task as the caller may see it: another user's task is not_found unless the caller is an admin of its team; another team's always is. */
export async function getTask(bus: Bus, taskId: string, caller: Caller, opts: { anyUser?: boolean } = {}): Promise<TaskView> {
  try {
    // A non-admin asking for another user's task gets not_found, so task ids cannot be probed
    // (`anyUser`: an approver reads any task of the team to decide its approvals).
    return await request(
      bus,
      contracts.teamTaskGet,
      { task_id: taskId, user_id: caller.isAdmin || opts.anyUser ? null : caller.user_id },
      { subject: bus.subjects.teamTaskGet(caller.team) },
    );
  } catch (err) {
    if (err instanceof OutgoingPayloadError) throw err;
    throw httpErrorFromBus(err);
  }
}

/**
 * Authorises an event stream by reading the task. Right after `POST /v1/tasks` the dispatcher may
 * not have stored the task yet. Its first event is published only after the task is stored, so the
 * gateway waits (at most acceptWaitMs) for that event and reads once more, instead of polling the
 * dispatcher with reads that each answer not_found.
 */
async function waitUntilVisible(deps: TaskRouteDeps, taskId: string, caller: Caller, res: ServerResponse): Promise<TaskView> {
  try {
    return await getTask(deps.bus, taskId, caller);
  } catch (err) {
    if (!isNotFound(err) || res.destroyed) throw err;
  }
  const deadline = Date.now() + deps.acceptWaitMs;
  const published = await firstEventOf(deps, taskId, caller, { waitMs: deps.acceptWaitMs, res });
  try {
    return await getTask(deps.bus, taskId, caller);
  } catch (err) {
    // Events but no task for this caller: another user's task. Answered after the same wait as a
    // task that never appears, so the time to a 404 does not tell whether a task id exists.
    if (published && isNotFound(err) && !res.destroyed) await sleep(Math.max(0, deadline - Date.now()));
    throw err;
  }
}

/**
 * Waits until the task has published an event (so it is stored), at most waitMs or until the
 * client leaves. True when an event came.
 */
async function firstEventOf(deps: TaskRouteDeps, taskId: string, caller: Caller, opts: { waitMs: number; res?: ServerResponse }): Promise<boolean> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), opts.waitMs);
  const onClose = () => stop.abort();
  opts.res?.once('close', onClose);
  const events = followTaskEvents(deps.bus, { team: caller.team, task_id: taskId }, { signal: stop.signal });
  try {
    return (await events.next()).done !== true;
  } catch (err) {
    // The caller's next read decides: a follower that failed says nothing about the task.
    deps.logger.debug({ err, task_id: taskId }, "waiting for a new task's first event failed");
    return false;
  } finally {
    clearTimeout(timer);
    opts.res?.off('close', onClose);
    await events.return(undefined).catch(() => undefined);
  }
}

/**
 * True when a finished task has no event left to send: its terminal event is at or before
 * `afterSeq`, or its events have aged out of the stream. Following would then wait forever.
 */
async function nothingMoreToSend(bus: Bus, view: TaskView, afterSeq: number | undefined): Promise<boolean> {
  if (!isTerminalStatus(view.status)) return false;
  try {
    const last = await lastTaskEvent(bus, view);
    if (!last) return true;
    return afterSeq !== undefined && last.seq <= afterSeq && TERMINAL_EVENT_KINDS.includes(taskEventKind(last.event));
  } catch {
    // Unsure: follow the stream, which fails (or ends) on its own.
    return false;
  }
}

/** The task id from a path segment; 400 invalid_task_id when it is not an Id. */
export function taskIdParam(raw: string | undefined): string {
  let id: string;
  try {
    id = decodeURIComponent(raw ?? '');
  } catch {
    id = '';
  }
  if (!validate(Id, id).ok) {
    throw new HttpError(400, { code: 'invalid_task_id', message: 'task id must be 1-128 characters of letters, digits, _ : @ -' });
  }
  return id;
}

/** The stream sequence a reconnecting SSE client last saw; events after it are sent. */
function lastEventId(req: IncomingMessage): number | undefined {
  const raw = header(req, 'last-event-id')?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new HttpError(400, { code: 'invalid_last_event_id', message: 'Last-Event-ID must be an event id sent by this stream' });
  }
  return Number(raw);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `since` and `until` as the ISO 8601 instants the dispatcher filters by; unparsable is invalid_query, an empty range invalid_time_range. */
function timeRange(query: URLSearchParams): { since?: string; until?: string } {
  const out: { since?: string; until?: string } = {};
  for (const name of ['since', 'until'] as const) {
    const raw = query.get(name);
    if (raw === null) continue;
    // Date.parse alone would take "3" or "March 1": only ISO 8601 date-times (or dates) are meant.
    const ms = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(raw) ? Date.parse(raw) : NaN;
    if (Number.isNaN(ms)) {
      throw new HttpError(400, {
        code: 'invalid_query',
        message: `${name} must be an ISO 8601 time such as 2026-12-03T14:00:00Z`,
        issues: [{ path: `/${name}`, message: 'not an ISO 8601 time' }],
      });
    }
    out[name] = new Date(ms).toISOString();
  }
  if (out.since && out.until && out.since > out.until) {
    throw new HttpError(400, { code: 'invalid_time_range', message: `since (${out.since}) is after until (${out.until})` });
  }
  return out;
}
