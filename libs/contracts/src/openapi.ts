import type { TSchema } from '@sinclair/typebox';
import { stringify } from 'yaml';
import { McpApproveChangeReply, McpStatusReply } from './schemas/mcp.js';
import { MemoryForgetOneReply, MemoryForgetReply, MemoryListReply, MemoryStatus } from './schemas/long-term-memory.js';
import { ScheduleDeleteReply, ScheduleListReply, ScheduleSpec, ScheduleView } from './schemas/schedules.js';
import { Trigger, TriggerDeleteReply, TriggerListReply, TriggerSpec } from './schemas/triggers.js';
import { SessionListReply } from './schemas/session-list.js';
import { TaskEvent } from './schemas/task-events.js';
import { TaskListReply, TaskStatus, TaskView } from './schemas/task-state.js';
import { ApprovalDecisionReply, ApprovalListReply } from './schemas/tool-calls.js';
import { ToolsListReply } from './schemas/toolbus.js';
import {
  ApprovalDecisionBody,
  TaskInputBody,
  CallerView,
  HttpTaskRequest,
  LlmPoolsReply,
  PROBLEM_JSON,
  ProblemDetails,
  SessionDeletedView,
  SessionMessagesView,
  TaskAuditView,
  TaskPlanView,
  TaskSubmitted,
} from './schemas/http-api.js';
import { packageVersion, plain, SchemaRegistry, sortedByKey, type JsonObject } from './schema-doc.js';

/** A path or query parameter of an operation. */
interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly description: string;
  readonly schema: JsonObject;
  readonly required?: boolean;
}

/** One answer of an operation: JSON of a schema, an event stream whose events carry a schema, or no body. */
interface Answer {
  readonly description: string;
  readonly json?: TSchema;
  readonly events?: TSchema;
  /** Any JSON object (the OpenAPI document itself). */
  readonly anyJson?: boolean;
  /** Bodies of these media types that are not JSON of a contract schema (the console's files). */
  readonly media?: readonly string[];
  readonly headers?: Record<string, string>;
}

/** One operation of the gateway's HTTP API: the single list the gateway routes from and the OpenAPI document describes. */
export interface HttpOperation {
  readonly operationId: string;
  readonly method: 'get' | 'post' | 'delete';
  /** OpenAPI path template; `{name}` segments are the handler's parameters, in order. */
  readonly path: string;
  readonly summary: string;
  readonly tag: 'tasks' | 'approvals' | 'schedules' | 'triggers' | 'platform' | 'sessions' | 'mcp' | 'console' | 'api';
  readonly parameters?: readonly Parameter[];
  readonly body?: TSchema;
  readonly responses: Readonly<Record<string, Answer>>;
  /** Answered without an API key (the API description itself). */
  readonly public?: boolean;
}

const idSchema: JsonObject = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_:@-]*$' };
const pathId = (name: string, description: string): Parameter => ({ name, in: 'path', required: true, description, schema: idSchema });
const query = (name: string, description: string, schema: JsonObject): Parameter => ({ name, in: 'query', description, schema });
/** The path id of a schedule or trigger, and the `user` an admin names its owner with. */
const ownedIdParams = (kind: 'schedule' | 'trigger'): Parameter[] => [pathId('id', `the ${kind} id`), query('user', `an admin: that user's ${kind}`, idSchema)];
const TASK_ID = pathId('id', 'the task id');
const USER = pathId('user', "the user acted for: the caller's own, or any of the team's for an admin");
const LIMIT = (max: number) => query('limit', `page size (1-${max})`, { type: 'integer', minimum: 1, maximum: max });
const CURSOR = query('cursor', 'next_cursor of the previous page', { type: 'string' });

/** Every route of the gateway. The gateway refuses to start without a handler for each, and serves no other. */
export const HTTP_OPERATIONS = [
  {
    operationId: 'submitTask',
    method: 'post',
    path: '/v1/tasks',
    tag: 'tasks',
    summary:
      'Submit a task. With Idempotency-Key a retry is the same task (200, duplicate true); the same key with another body is 422 duplicate_conflict; 503 overloaded with Retry-After when the runtimes are further behind than the admission bound (nothing published).',
    parameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        description: '1-256 visible ASCII characters; becomes the CloudEvent id',
        schema: { type: 'string', minLength: 1, maxLength: 256 },
      },
    ],
    body: HttpTaskRequest,
    responses: {
      '202': { description: 'submitted; follow it at links.events', json: TaskSubmitted, headers: { Location: 'the task' } },
      '200': { description: 'a retry of a task that exists (nothing published again)', json: TaskSubmitted, headers: { Location: 'the task' } },
    },
  },
  {
    operationId: 'listTasks',
    method: 'get',
    path: '/v1/tasks',
    tag: 'tasks',
    summary:
      "The caller's tasks, newest first; all=true lists every user's of the team, user=<id> one user's (admins only: a non-admin naming another user is 403 forbidden; user wins over all).",
    parameters: [
      query('status', 'only tasks in this status', plain(TaskStatus)),
      query('since', 'only tasks created at or after this ISO 8601 time; unparsable: 400 invalid_query, after until: 400 invalid_time_range', {
        type: 'string',
        format: 'date-time',
      }),
      query('until', 'only tasks created at or before this ISO 8601 time', { type: 'string', format: 'date-time' }),
      LIMIT(100),
      CURSOR,
      query('all', "true: every user's tasks (admins)", { type: 'boolean' }),
      query('user', "only this user's tasks: an admin names anyone of the team; anyone else only themselves (403 otherwise)", idSchema),
    ],
    responses: { '200': { description: 'one page of tasks', json: TaskListReply } },
  },
  {
    operationId: 'getTask',
    method: 'get',
    path: '/v1/tasks/{id}',
    tag: 'tasks',
    summary: "The task's state. Another user's task is 404 (unless admin), so ids cannot be probed.",
    parameters: [TASK_ID],
    responses: { '200': { description: 'the task', json: TaskView } },
  },
  {
    operationId: 'cancelTask',
    method: 'delete',
    path: '/v1/tasks/{id}',
    tag: 'tasks',
    summary: 'Cancel the task; a task that already ended is returned as it is.',
    parameters: [TASK_ID, query('reason', 'why (default: cancelled by <user>)', { type: 'string', maxLength: 2000 })],
    responses: { '200': { description: 'the task after the cancel', json: TaskView } },
  },
  {
    operationId: 'answerTask',
    method: 'post',
    path: '/v1/tasks/{id}/input',
    tag: 'tasks',
    summary:
      "Answer the question the task asked (ask_user; its input_required event carries it): the task resumes where it stopped. Only the task's owner or an admin; a task waiting for no answer is 409 not_waiting_for_input.",
    parameters: [TASK_ID],
    body: TaskInputBody,
    responses: { '200': { description: 'the task after the answer (running again, or waiting on another question)', json: TaskView } },
  },
  {
    operationId: 'taskEvents',
    method: 'get',
    path: '/v1/tasks/{id}/events',
    tag: 'tasks',
    summary:
      "Server-Sent Events: the task's events in order (id: the stream sequence; event: the kind), from the start or after Last-Event-ID, ending after the terminal one.",
    parameters: [
      TASK_ID,
      { name: 'Last-Event-ID', in: 'header', description: 'resume after this event id', schema: { type: 'string', pattern: '^\\d{1,15}$' } },
    ],
    responses: {
      '200': { description: 'the event stream; each data is a TaskEvent (a stream_error event carries ProblemDetails)', events: TaskEvent },
      '204': { description: 'the task ended and nothing is left after Last-Event-ID' },
    },
  },
  {
    operationId: 'getTaskPlan',
    method: 'get',
    path: '/v1/tasks/{id}/plan',
    tag: 'tasks',
    summary: "The task's plan DAG: subtasks with dependencies, status, attempts and re-plan generation; null before planning.",
    parameters: [TASK_ID],
    responses: { '200': { description: 'the plan', json: TaskPlanView } },
  },
  {
    operationId: 'getTaskAudit',
    method: 'get',
    path: '/v1/tasks/{id}/audit',
    tag: 'tasks',
    summary:
      "The audit records of the task's tool calls (who, what, arguments, outcome, duration, who decided), one per attempt, oldest first, as long as the audit stream keeps them.",
    parameters: [TASK_ID],
    responses: { '200': { description: 'the audit records', json: TaskAuditView } },
  },
  {
    operationId: 'decideApproval',
    method: 'post',
    path: '/v1/tasks/{id}/approvals/{call_id}',
    tag: 'approvals',
    summary: "Approve or deny a tool call of the task that waits for approval (the task's owner or an admin).",
    parameters: [TASK_ID, { name: 'call_id', in: 'path', required: true, description: 'the parked call', schema: { type: 'string', minLength: 1 } }],
    body: ApprovalDecisionBody,
    responses: { '200': { description: 'decided', json: ApprovalDecisionReply } },
  },
  {
    operationId: 'listApprovals',
    method: 'get',
    path: '/v1/approvals',
    tag: 'approvals',
    summary: "Tool calls waiting for approval that the caller may decide: their own tasks', every task's of the team for an admin; oldest first.",
    responses: { '200': { description: 'the pending calls', json: ApprovalListReply } },
  },
  {
    operationId: 'approvalEvents',
    method: 'get',
    path: '/v1/approvals/events',
    tag: 'approvals',
    summary: 'Server-Sent Events: an `approvals` event with the whole pending list at once, and again whenever it changes.',
    responses: { '200': { description: 'the event stream; each approvals event carries the list', events: ApprovalListReply } },
  },
  {
    operationId: 'listTools',
    method: 'get',
    path: '/v1/tools',
    tag: 'platform',
    summary: "The tools the API key's roles may use (built-in, providers, MCP).",
    responses: { '200': { description: 'the tools', json: ToolsListReply } },
  },
  {
    operationId: 'mcpServers',
    method: 'get',
    path: '/v1/mcp/servers',
    tag: 'platform',
    summary: 'The MCP servers of one toolbus replica: state, health, tools, held description changes, config problems (admins only).',
    responses: { '200': { description: 'the MCP status', json: McpStatusReply } },
  },
  {
    operationId: 'approveMcpChange',
    method: 'post',
    path: '/v1/mcp/servers/{server}/approve-change',
    tag: 'platform',
    summary:
      "Accept an MCP server's held description or schema changes (all of them, or one tool's), offering those tools again (admins only; logged with the admin's id). Answers the tools approved, empty when nothing was held.",
    parameters: [
      {
        name: 'server',
        in: 'path',
        required: true,
        description: 'the MCP server (or remote tool provider) name',
        schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
      },
      query('tool', "only this tool's change", { type: 'string', minLength: 1 }),
    ],
    responses: { '200': { description: 'the approved tools', json: McpApproveChangeReply } },
  },
  {
    operationId: 'llmPools',
    method: 'get',
    path: '/v1/llm/pools',
    tag: 'platform',
    summary: 'The LLM pools of the cluster-wide semaphore: capacity, calls in flight, waiters, back-off, token budget.',
    responses: { '200': { description: 'the pools', json: LlmPoolsReply } },
  },
  {
    operationId: 'listSessions',
    method: 'get',
    path: '/v1/users/{user}/sessions',
    tag: 'sessions',
    summary: "The user's sessions, most recently written first.",
    parameters: [USER, LIMIT(100), CURSOR],
    responses: { '200': { description: 'one page of sessions', json: SessionListReply } },
  },
  {
    operationId: 'readSession',
    method: 'get',
    path: '/v1/users/{user}/sessions/{id}',
    tag: 'sessions',
    summary: "The session's latest messages (default 50), oldest first.",
    parameters: [USER, pathId('id', 'the session id'), LIMIT(1000)],
    responses: { '200': { description: 'the messages', json: SessionMessagesView } },
  },
  {
    operationId: 'deleteSession',
    method: 'delete',
    path: '/v1/users/{user}/sessions/{id}',
    tag: 'sessions',
    summary: 'Delete the session with everything stored for it; 404 when there is none, 409 session_busy while a loop holds it.',
    parameters: [USER, pathId('id', 'the session id')],
    responses: { '200': { description: 'deleted', json: SessionDeletedView } },
  },
  {
    operationId: 'forgetUser',
    method: 'delete',
    path: '/v1/users/{id}/memory',
    tag: 'sessions',
    summary: 'Forget the user: every long-term memory and every session.',
    parameters: [pathId('id', 'the user')],
    responses: { '200': { description: 'what was removed', json: MemoryForgetReply } },
  },
  {
    operationId: 'forgetMemory',
    method: 'delete',
    path: '/v1/users/{id}/memory/{memory_id}',
    tag: 'sessions',
    summary: "Forget one of the user's long-term memories (its record and vector are deleted); 404 not_found when the user has no memory under that id.",
    parameters: [
      pathId('id', 'the user'),
      { ...pathId('memory_id', 'the memory'), schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' } },
    ],
    responses: { '200': { description: 'forgotten', json: MemoryForgetOneReply } },
  },
  {
    operationId: 'listMemories',
    method: 'get',
    path: '/v1/users/{id}/memory',
    tag: 'sessions',
    summary: "The user's long-term memories with their provenance (where each came from), newest first.",
    parameters: [
      pathId('id', 'the user'),
      query('status', 'only memories in this status (default: every status the memory service lists)', plain(MemoryStatus)),
      LIMIT(1000),
    ],
    responses: { '200': { description: 'the memories', json: MemoryListReply } },
  },
  {
    operationId: 'createSchedule',
    method: 'post',
    path: '/v1/schedules',
    tag: 'schedules',
    summary:
      'Create a schedule: a cron expression in a time zone and the task it starts on each firing (docs/schedules.md). The same id and spec again answer the schedule; another spec under the id is 409 duplicate_conflict.',
    body: ScheduleSpec,
    responses: { '201': { description: 'the schedule with its next fire time', json: ScheduleView } },
  },
  {
    operationId: 'listSchedules',
    method: 'get',
    path: '/v1/schedules',
    tag: 'schedules',
    summary: "The caller's schedules; an admin gets every user's of the team, or user's.",
    parameters: [query('user', "an admin: only this user's", idSchema)],
    responses: { '200': { description: 'the schedules', json: ScheduleListReply } },
  },
  {
    operationId: 'getSchedule',
    method: 'get',
    path: '/v1/schedules/{id}',
    tag: 'schedules',
    summary: "One of the caller's schedules (an admin names the user with user), with its next fire time.",
    parameters: ownedIdParams('schedule'),
    responses: { '200': { description: 'the schedule', json: ScheduleView } },
  },
  {
    operationId: 'deleteSchedule',
    method: 'delete',
    path: '/v1/schedules/{id}',
    tag: 'schedules',
    summary: 'Delete the schedule: it fires no more; tasks it started stay.',
    parameters: ownedIdParams('schedule'),
    responses: { '200': { description: 'deleted', json: ScheduleDeleteReply } },
  },
  {
    operationId: 'pauseSchedule',
    method: 'post',
    path: '/v1/schedules/{id}/pause',
    tag: 'schedules',
    summary: 'Pause the schedule: it fires nothing until resumed.',
    parameters: ownedIdParams('schedule'),
    responses: { '200': { description: 'the schedule', json: ScheduleView } },
  },
  {
    operationId: 'resumeSchedule',
    method: 'post',
    path: '/v1/schedules/{id}/resume',
    tag: 'schedules',
    summary: 'Resume the schedule, counting fire times from now (nothing missed while paused fires).',
    parameters: ownedIdParams('schedule'),
    responses: { '200': { description: 'the schedule', json: ScheduleView } },
  },
  {
    operationId: 'createTrigger',
    method: 'post',
    path: '/v1/triggers',
    tag: 'triggers',
    summary:
      "Create a trigger: a subject filter on the team's own events (<prefix>.events.<team>.<subject>), an optional condition on the payload and the task it starts for each matching event (docs/schedules.md). A filter naming other subjects, an unreadable condition or placeholder is 400 invalid_trigger; the same id and spec again answer the trigger; another spec under the id is 409 duplicate_conflict.",
    body: TriggerSpec,
    responses: { '201': { description: 'the trigger', json: Trigger } },
  },
  {
    operationId: 'listTriggers',
    method: 'get',
    path: '/v1/triggers',
    tag: 'triggers',
    summary: "The caller's triggers; an admin gets every user's of the team, or user's.",
    parameters: [query('user', "an admin: only this user's triggers", idSchema)],
    responses: { '200': { description: 'the triggers', json: TriggerListReply } },
  },
  {
    operationId: 'getTrigger',
    method: 'get',
    path: '/v1/triggers/{id}',
    tag: 'triggers',
    summary: "One of the caller's triggers (an admin names the user with user), with its firings and last task.",
    parameters: ownedIdParams('trigger'),
    responses: { '200': { description: 'the trigger', json: Trigger } },
  },
  {
    operationId: 'deleteTrigger',
    method: 'delete',
    path: '/v1/triggers/{id}',
    tag: 'triggers',
    summary: 'Delete the trigger: it starts no more tasks; tasks it started stay.',
    parameters: ownedIdParams('trigger'),
    responses: { '200': { description: 'deleted', json: TriggerDeleteReply } },
  },
  {
    operationId: 'pauseTrigger',
    method: 'post',
    path: '/v1/triggers/{id}/pause',
    tag: 'triggers',
    summary: 'Pause the trigger: events that arrive meanwhile start nothing (they are not kept for later).',
    parameters: ownedIdParams('trigger'),
    responses: { '200': { description: 'the trigger', json: Trigger } },
  },
  {
    operationId: 'resumeTrigger',
    method: 'post',
    path: '/v1/triggers/{id}/resume',
    tag: 'triggers',
    summary: 'Resume the trigger: events from now on start tasks again.',
    parameters: ownedIdParams('trigger'),
    responses: { '200': { description: 'the trigger', json: Trigger } },
  },
  {
    operationId: 'whoAmI',
    method: 'get',
    path: '/v1/me',
    tag: 'api',
    summary: 'Who the API key acts for: user, team, roles.',
    responses: { '200': { description: 'the caller', json: CallerView } },
  },
  {
    operationId: 'mcpPost',
    method: 'post',
    path: '/mcp',
    tag: 'mcp',
    summary:
      'The MCP endpoint (Streamable HTTP, stateless): a JSON-RPC request or notification of the Model Context Protocol; tools hermes_submit_task and hermes_task_status act for the API key (docs/http-api.md).',
    responses: {
      '200': { description: 'the JSON-RPC response (errors of the protocol itself are JSON-RPC errors, not problem details)', media: ['application/json'] },
      '202': { description: 'a notification, accepted' },
    },
  },
  {
    operationId: 'mcpGet',
    method: 'get',
    path: '/mcp',
    tag: 'mcp',
    summary:
      'The MCP endpoint: the standalone event stream of the transport (Accept must include text/event-stream, 406 otherwise); a stateless server sends nothing on it of its own.',
    responses: { '200': { description: 'the event stream', media: ['text/event-stream'] } },
  },
  {
    operationId: 'mcpDelete',
    method: 'delete',
    path: '/mcp',
    tag: 'mcp',
    summary: 'The MCP endpoint: ends a session; stateless, nothing is kept between requests, so there is nothing to end (200).',
    responses: { '200': { description: 'nothing to end' } },
  },
  {
    operationId: 'consoleRoot',
    method: 'get',
    path: '/console',
    tag: 'console',
    summary: 'The web console: redirects to /console/.',
    public: true,
    responses: { '308': { description: 'to the console page', headers: { location: '/console/' } } },
  },
  {
    operationId: 'consolePage',
    method: 'get',
    path: '/console/',
    tag: 'console',
    summary: 'The web console page (it asks for an API key and sends it with each API call; the page itself needs none).',
    public: true,
    responses: { '200': { description: 'the page', media: ['text/html'] } },
  },
  {
    operationId: 'consoleFile',
    method: 'get',
    path: '/console/{file}',
    tag: 'console',
    summary: "One of the console's files (scripts, styles, config.json); any other name is 404.",
    public: true,
    parameters: [
      { name: 'file', in: 'path', required: true, description: 'the file name', schema: { type: 'string', pattern: '^[a-z0-9-]+\\.(html|css|js|json)$' } },
    ],
    responses: { '200': { description: 'the file', media: ['text/html', 'text/css', 'text/javascript', 'application/json'] } },
  },
  {
    operationId: 'openApi',
    method: 'get',
    path: '/v1/openapi.json',
    tag: 'api',
    summary: 'This document.',
    public: true,
    responses: { '200': { description: 'the OpenAPI 3.1 description of the gateway' } },
  },
] as const satisfies readonly HttpOperation[];

/** The operation ids: the gateway must hand in one handler for each. */
export type HttpOperationId = (typeof HTTP_OPERATIONS)[number]['operationId'];

const HEADER = '# Generated by scripts/generate-openapi.mjs from libs/contracts — do not edit.\n';

/** The OpenAPI 3.1 description of the gateway, built from {@link HTTP_OPERATIONS} and the contract schemas. */
export function buildOpenApi(opts: { version?: string } = {}): JsonObject {
  const schemas = new SchemaRegistry();
  const problem = schemas.ref(ProblemDetails);
  const paths: Record<string, JsonObject> = {};
  for (const op of HTTP_OPERATIONS as readonly HttpOperation[]) {
    const responses: JsonObject = {};
    for (const [status, answer] of Object.entries(op.responses)) responses[status] = answerObject(answer, schemas);
    responses['4XX'] = { $ref: '#/components/responses/Problem' };
    responses['5XX'] = { $ref: '#/components/responses/Problem' };
    const operation: JsonObject = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      ...(op.parameters ? { parameters: op.parameters.map((p) => ({ ...p }) as JsonObject) } : {}),
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemas.ref(op.body) } } } } : {}),
      responses,
      ...(op.public ? { security: [] } : {}),
    };
    (paths[op.path] ??= {})[op.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hermes gateway',
      version: opts.version ?? packageVersion(),
      description:
        'The HTTP API of Hermes (see docs/http-api.md). Every request but this document needs `Authorization: Bearer <API key>`; a key acts for one user in one team. ' +
        'Every error is RFC 9457 problem details (`application/problem+json`) with the same `code` as on the bus, `retryable` and the validation `issues`.',
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'a local gateway (npm run up)' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'tasks', description: 'submit, list, read, follow and cancel tasks' },
      { name: 'approvals', description: 'tool calls waiting for a person' },
      { name: 'platform', description: 'tools, MCP servers, LLM pools' },
      { name: 'sessions', description: "a user's sessions and memory" },
      { name: 'mcp', description: 'Hermes as an MCP server (Streamable HTTP)' },
      { name: 'console', description: 'the web console (static files, no key needed)' },
      { name: 'api', description: 'the caller and this description' },
    ],
    paths: sortedByKey(paths),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'an API key from HERMES_API_KEYS' } },
      responses: { Problem: { description: 'an error as RFC 9457 problem details', content: { [PROBLEM_JSON]: { schema: problem } } } },
      schemas: schemas.sorted(),
    },
  };
}

/** The text of docs/openapi.yaml: a header line, then the document as YAML. */
export function renderOpenApiYaml(opts: { version?: string } = {}): string {
  return HEADER + stringify(buildOpenApi(opts), { aliasDuplicateObjects: false, lineWidth: 0 });
}

function answerObject(answer: Answer, schemas: SchemaRegistry): JsonObject {
  const out: JsonObject = { description: answer.description };
  if (answer.json) out.content = { 'application/json': { schema: schemas.ref(answer.json) } };
  // OpenAPI 3.1 has no event-stream model: the schema is that of each event's data.
  if (answer.events)
    out.content = { 'text/event-stream': { schema: { type: 'string', description: 'Server-Sent Events' }, 'x-hermes-event-data': schemas.ref(answer.events) } };
  if (answer.anyJson) out.content = { 'application/json': { schema: { type: 'object' } } };
  if (answer.media)
    out.content = Object.fromEntries(answer.media.map((type) => [type, { schema: type === 'application/json' ? { type: 'object' } : { type: 'string' } }]));
  if (answer.headers)
    out.headers = Object.fromEntries(Object.entries(answer.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]));
  return out;
}
