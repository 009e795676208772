import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Bus } from '@hermes/bus';
import { contextFromTraceparent, DEFAULT_TEAM, type CallerView } from '@hermes/contracts';
import { buildOpenApi } from '@hermes/contracts/openapi';
import { hermesTracer, type Logger } from '@hermes/telemetry';
import { createApprovalRoutes } from './approval-routes.js';
import { createAuditRoute } from './audit-routes.js';
import { createCancelRoute } from './cancel-routes.js';
import { createInputRoute } from './input-routes.js';
import { createAuthenticator, type Authenticator, type Caller } from './auth.js';
import { createCors, type Cors } from './cors.js';
import { consoleAssets } from './console-assets.js';
import { HttpError, sendError, sendJson } from './http-errors.js';
import { MAX_BODY_BYTES } from './json-body.js';
import { createMcpEndpoint } from './mcp-endpoint.js';
import { createSessionRoutes } from './session-routes.js';
import { createForgetMemoryRoute, createForgetRoute, createMemoryListRoute } from './memory-routes.js';
import { createScheduleRoutes } from './schedule-routes.js';
import { createTriggerRoutes } from './trigger-routes.js';
import { createPlatformRoutes } from './platform-routes.js';
import { routeTable, type Route } from './route-table.js';
import type { ApiKeyEntry } from './settings.js';
import { KEEP_ALIVE_MS, SseStream } from './sse.js';
import { createTaskRoutes, type RouteHandler, type TaskRouteDeps } from './task-routes.js';

export interface GatewayServerOptions {
  bus: Bus;
  apiKeys: readonly ApiKeyEntry[];
  logger: Logger;
  /** Interval of SSE keep-alive comments; 15 s by default. */
  keepAliveMs?: number;
  maxBodyBytes?: number;
  /** How long an event stream waits for a new task to be accepted; 3 s by default. */
  acceptWaitMs?: number;
  /** Origins whose pages may call the API (CORS); none by default, which leaves CORS off. */
  corsOrigins?: readonly string[];
  /** Time to receive a request's headers (Node's default is 60 s); 10 s by default. */
  headersTimeoutMs?: number;
  /** Time to receive a whole request (Node's default is 300 s); 30 s by default. */
  requestTimeoutMs?: number;
  /** Open connections held at most; 1024 by default. */
  maxConnections?: number;
  /** How often Node checks connections against the two timeouts (its default is 30 s); 1 s by default. */
  timeoutCheckIntervalMs?: number;
  /** How often an approval stream lists again without a change notice; 15 s by default. */
  approvalRefreshMs?: number;
  /** The tracing UI's URL for a trace, `{trace_id}` replaced (Jaeger: `http://jaeger:16686/trace/{trace_id}`); the console links to it. */
  traceUrlTemplate?: string;
  /** Roles whose holders decide every approval of their team (HERMES_APPROVER_ROLES); none by default: owners decide their own. */
  approverRoles?: readonly string[];
  /** Admission control of POST /v1/tasks (the dispatcher's rule, applied before publishing); none: every valid request is published. */
  admission?: TaskRouteDeps['admission'];
}

export interface GatewayServer {
  readonly server: Server;
  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(opts: { port: number; host?: string }): Promise<{ port: number }>;
  /** Stops accepting, ends open event streams, and waits up to `timeoutMs` for requests in flight. */
  close(timeoutMs?: number): Promise<void>;
}

/** The caller of a route that needs no key: it may read nothing of anyone's. */
const ANONYMOUS = { user_id: 'anonymous', team: DEFAULT_TEAM, roles: [], isAdmin: false, approves: 'none' } as const;

/** The span attribute for each log field a route or handler names. */
const SPAN_ATTRIBUTES: Record<string, string> = {
  task_id: 'hermes.task.id',
  call_id: 'hermes.tool.call_id',
  session_id: 'hermes.session.id',
  schedule_id: 'hermes.schedule.id',
  trigger_id: 'hermes.trigger.id',
};

/** The internal HTTP API: it authenticates callers and translates requests into bus messages. */
export function createGatewayServer(opts: GatewayServerOptions): GatewayServer {
  const streams = new Set<SseStream>();
  const openEventStream = (res: ServerResponse) => {
    const stream = new SseStream(res, { keepAliveMs: opts.keepAliveMs ?? KEEP_ALIVE_MS });
    streams.add(stream);
    stream.signal.addEventListener('abort', () => streams.delete(stream), { once: true });
    return stream;
  };
  const tasks = createTaskRoutes({
    bus: opts.bus,
    logger: opts.logger,
    maxBodyBytes: opts.maxBodyBytes ?? MAX_BODY_BYTES,
    acceptWaitMs: opts.acceptWaitMs ?? 3000,
    openEventStream,
    ...(opts.admission ? { admission: opts.admission } : {}),
  });
  const approvals = createApprovalRoutes({
    bus: opts.bus,
    maxBodyBytes: opts.maxBodyBytes ?? MAX_BODY_BYTES,
    openEventStream,
    logger: opts.logger,
    ...(opts.approvalRefreshMs ? { refreshMs: opts.approvalRefreshMs } : {}),
  });
  const platform = createPlatformRoutes({ bus: opts.bus, logger: opts.logger });
  const sessions = createSessionRoutes({ bus: opts.bus });
  const schedules = createScheduleRoutes({ bus: opts.bus, maxBodyBytes: opts.maxBodyBytes ?? MAX_BODY_BYTES });
  const triggers = createTriggerRoutes({ bus: opts.bus, maxBodyBytes: opts.maxBodyBytes ?? MAX_BODY_BYTES });
  const openApiText = JSON.stringify(buildOpenApi());
  const mcp = createMcpEndpoint({ bus: opts.bus, logger: opts.logger, maxBodyBytes: opts.maxBodyBytes ?? MAX_BODY_BYTES });
  const mcpRoute: RouteHandler = ({ req, res, caller }) => mcp(req, res, caller);
  const assets = consoleAssets({ traceUrlTemplate: opts.traceUrlTemplate });
  const consoleRoute: RouteHandler = ({ req, res }) => assets.serve((req.url ?? '/').split('?')[0]!, res);
  const routes = routeTable({
    submitTask: tasks.submit,
    listTasks: tasks.list,
    getTask: tasks.get,
    cancelTask: createCancelRoute({ bus: opts.bus }),
    answerTask: createInputRoute({ bus: opts.bus, maxBodyBytes: opts.maxBodyBytes ?? MAX_BODY_BYTES }),
    taskEvents: tasks.events,
    getTaskPlan: tasks.plan,
    getTaskAudit: createAuditRoute({ bus: opts.bus }),
    decideApproval: approvals.decide,
    listApprovals: approvals.list,
    approvalEvents: approvals.events,
    listTools: platform.tools,
    mcpServers: platform.mcpServers,
    approveMcpChange: platform.approveMcpChange,
    llmPools: platform.llmPools,
    listSessions: sessions.list,
    readSession: sessions.read,
    deleteSession: sessions.remove,
    forgetUser: createForgetRoute({ bus: opts.bus }),
    forgetMemory: createForgetMemoryRoute({ bus: opts.bus }),
    listMemories: createMemoryListRoute({ bus: opts.bus }),
    createSchedule: schedules.create,
    listSchedules: schedules.list,
    getSchedule: schedules.get,
    deleteSchedule: schedules.remove,
    pauseSchedule: schedules.pause,
    resumeSchedule: schedules.resume,
    createTrigger: triggers.create,
    listTriggers: triggers.list,
    getTrigger: triggers.get,
    deleteTrigger: triggers.remove,
    pauseTrigger: triggers.pause,
    resumeTrigger: triggers.resume,
    whoAmI: async ({ res, caller }) =>
      sendJson(res, 200, {
        user_id: caller.user_id,
        team: caller.team,
        roles: [...caller.roles],
        is_admin: caller.isAdmin,
        approves: caller.approves !== 'none',
        approves_team: caller.approves === 'team',
      } satisfies CallerView),
    openApi: async ({ res }) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' }).end(openApiText);
    },
    mcpPost: mcpRoute,
    mcpGet: mcpRoute,
    mcpDelete: mcpRoute,
    // The console's files need no key: the page asks for one and sends it with each API call.
    consoleRoot: consoleRoute,
    consolePage: consoleRoute,
    consoleFile: consoleRoute,
  });
  const authenticate = createAuthenticator(opts.apiKeys, opts.approverRoles);
  const cors = createCors(opts.corsOrigins ?? []);
  let inFlight = 0;
  let closing = false;
  let drained: (() => void) | undefined;
  // Slow or stalled clients (slowloris) must not hold sockets for Node's defaults of minutes:
  // headers and the whole request are bounded, and so is the number of connections.
  const requestTimeout = opts.requestTimeoutMs ?? 30_000;
  const timeouts = {
    requestTimeout,
    // Node refuses a headers timeout above the request timeout.
    headersTimeout: Math.min(opts.headersTimeoutMs ?? 10_000, requestTimeout),
    connectionsCheckingInterval: opts.timeoutCheckIntervalMs ?? 1000,
  };
  const server = createServer(timeouts, (req, res) => {
    cors.decorate(req, res);
    if (closing) {
      // A keep-alive connection may still send a request during shutdown: send it to another replica.
      const err = new HttpError(
        503,
        { code: 'shutting_down', message: 'this gateway is shutting down; retry', retryable: true },
        { connection: 'close', 'retry-after': '0' },
      );
      return sendError(res, err);
    }
    inFlight++;
    res.once('close', () => {
      if (--inFlight === 0) drained?.();
    });
    void handle(req, res, { routes, authenticate, cors, logger: opts.logger });
  });
  server.maxConnections = opts.maxConnections ?? 1024;

  return {
    server,
    listen: ({ port, host }) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host ?? '127.0.0.1', () => {
          server.off('error', reject);
          resolve({ port: (server.address() as AddressInfo).port });
        });
      }),
    async close(timeoutMs = 5000) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const stream of streams) stream.end();
      // Once no request is in flight, every remaining connection is idle (including ones a client
      // opened but never used, which closeIdleConnections leaves alone), so all can go.
      const idle = new Promise<void>((resolve) => {
        drained = resolve;
        if (inFlight === 0) resolve();
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([idle, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      server.closeAllConnections();
      await closed;
    },
  };
}

interface Handling {
  routes: Route[];
  authenticate: Authenticator;
  cors: Cors;
  logger: Logger;
}

async function handle(req: IncomingMessage, res: ServerResponse, { routes, authenticate, cors, logger }: Handling): Promise<void> {
  const started = performance.now();
  const method = req.method ?? 'GET';
  const path = (req.url ?? '/').split('?')[0]!;
  const match = routes.map((r) => ({ route: r, m: r.pattern.exec(path) })).find((x) => x.m !== null);
  const template = match?.route.template ?? 'unmatched';
  const parent = contextFromTraceparent(single(req.headers.traceparent), single(req.headers.tracestate));
  const span = hermesTracer().startSpan(
    `${method} ${template}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': path, 'http.route': template } },
    parent,
  );
  const fields: Record<string, string> = {};
  const annotate = (more: Record<string, string>) => {
    for (const [k, v] of Object.entries(more)) {
      fields[k] = v;
      span.setAttribute(SPAN_ATTRIBUTES[k] ?? `hermes.${k}`, v);
    }
  };
  match?.route.fields?.forEach((name, i) => {
    const raw = match.m![i + 1];
    if (name !== undefined && raw !== undefined) annotate({ [name]: safeDecode(raw) });
  });
  let caller: string | undefined;
  await context.with(trace.setSpan(parent, span), async () => {
    try {
      if (!match) throw new HttpError(404, { code: 'not_found', message: `no route for ${path}` });
      // A preflight carries no credentials: it is answered before authentication.
      if (cors.preflight(req, res, Object.keys(match.route.methods))) return;
      // HEAD is GET without the body (Node leaves the body out).
      const handler = match.route.methods[method] ?? (method === 'HEAD' ? match.route.methods.GET : undefined);
      if (!handler) {
        const allow = Object.keys(match.route.methods).join(', ');
        throw new HttpError(405, { code: 'method_not_allowed', message: `${method} is not allowed on ${template}` }, { allow });
      }
      if (match.route.open.has(method === 'HEAD' ? 'GET' : method)) {
        await handler({ req, res, caller: ANONYMOUS, params: match.m!.slice(1), annotate });
        return;
      }
      const authenticated = authenticatedCaller(authenticate, req);
      span.setAttribute('enduser.id', authenticated.user_id);
      caller = authenticated.user_id;
      await handler({ req, res, caller: authenticated, params: match.m!.slice(1), annotate });
    } catch (err) {
      if (!(err instanceof HttpError)) {
        logger.error({ err, method, path }, 'request failed');
        span.recordException(err as Error);
      }
      const httpErr = err instanceof HttpError ? err : new HttpError(500, { code: 'internal', message: 'internal error', retryable: true });
      if (!res.headersSent) sendError(res, httpErr);
      else if (!res.writableEnded) res.end();
    } finally {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      logger.info(
        { method, route: template, status: res.statusCode, ms: Math.round(performance.now() - started), ...(caller ? { user_id: caller } : {}), ...fields },
        'request',
      );
    }
  });
}

/** The caller an API key names; 401 (with the Bearer challenge) without a valid one. */
function authenticatedCaller(authenticate: Authenticator, req: IncomingMessage): Caller {
  const auth = authenticate(single(req.headers.authorization));
  if (auth.ok) return auth.caller;
  const challenge = auth.reason === 'invalid' ? 'Bearer realm="hermes", error="invalid_token"' : 'Bearer realm="hermes"';
  throw new HttpError(401, { code: 'unauthorized', message: 'send a valid API key as "Authorization: Bearer <key>"' }, { 'www-authenticate': challenge });
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
