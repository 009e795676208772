import { Type, type TSchema } from '@sinclair/typebox';
import type { Subjects } from './subjects.js';
import { PAYLOAD_LIMITS, type PayloadLimits } from './limits.js';
import { WireError } from './schemas/common.js';
import { TaskSubmitEvent } from './schemas/task-submission.js';
import { TaskEvent, TaskRejectedEvent } from './schemas/task-events.js';
import { TaskCancelledNotice, TaskCancelRequest, TaskGetRequest, TaskInputRequest, TaskListReply, TaskListRequest, TaskView } from './schemas/task-state.js';
import { RuntimeJob, RuntimeResult } from './schemas/runtime.js';
import {
  ScheduleCreateRequest,
  ScheduleDeleteReply,
  ScheduleDeleteRequest,
  ScheduleGetRequest,
  ScheduleListReply,
  ScheduleListRequest,
  ScheduleUpdateRequest,
  ScheduleView,
} from './schemas/schedules.js';
import {
  TriggerCreateRequest,
  TriggerDeleteReply,
  TriggerDeleteRequest,
  TriggerGetRequest,
  TriggerListReply,
  TriggerListRequest,
  TriggerUpdateRequest,
  Trigger,
} from './schemas/triggers.js';
import { DeadLetter } from './schemas/dead-letter.js';
import { MicroControlRequest, microSubject } from './schemas/micro-services.js';
import { RecordingEntry } from './schemas/recordings.js';
import { ToolsListReply, ToolsListRequest } from './schemas/toolbus.js';
import { SessionAppendRequest, SessionMessagesReply, SessionReadRequest } from './schemas/memory.js';
import {
  SessionContextReply,
  SessionContextRequest,
  SessionMessageReply,
  SessionMessageRequest,
  SessionPinReply,
  SessionPinRequest,
  SessionSummarizeReply,
  SessionSummarizeRequest,
  SessionCompactReply,
  SessionCompactRequest,
} from './schemas/session-context.js';
import { SessionLockReply, SessionLockRequest, SessionRenewRequest, SessionUnlockReply, SessionUnlockRequest } from './schemas/session-lock.js';
import { SessionDeleteReply, SessionDeleteRequest, SessionListReply, SessionListRequest } from './schemas/session-list.js';
import { WorkingClearReply, WorkingClearRequest, WorkingEntriesReply, WorkingGetRequest, WorkingSetRequest } from './schemas/working-memory.js';
import {
  MemoryExtractJob,
  MemoryForgetReply,
  MemoryForgetRequest,
  MemoryForgetOneReply,
  MemoryForgetOneRequest,
  MemoryListReply,
  MemoryListRequest,
  MemoryRecallReply,
  MemoryRecallRequest,
  MemoryRestoreReply,
  MemoryRestoreRequest,
  MemoryWriteJob,
} from './schemas/long-term-memory.js';
import {
  ApprovalDecision,
  ApprovalChanged,
  ApprovalListReply,
  ApprovalListRequest,
  ApprovalDecisionReply,
  ToolAuditRecord,
  ToolCallReply,
  ToolCallRequest,
  ToolExecReply,
  ToolExecRequest,
  ToolProviderAnnouncement,
  ToolProviderDiscover,
} from './schemas/tool-calls.js';
import {
  McpApproveChangeReply,
  McpApproveChangeRequest,
  McpCallReply,
  McpCallRequest,
  McpReloadBroadcast,
  McpReloadReply,
  McpReloadRequest,
  McpResourcesReply,
  McpResourcesRequest,
  McpStatusReply,
  McpStatusRequest,
  ToolDebugCallRequest,
  ToolHostCallRequest,
} from './schemas/mcp.js';

export type ServiceName = 'gateway' | 'dispatcher' | 'runtime' | 'toolbus' | 'memory' | 'submitter' | 'tool-provider' | 'cli';

/** A message published to a subject (usually captured by a JetStream stream). */
export interface MessageContract<P extends TSchema = TSchema> {
  readonly kind: 'message';
  readonly name: string;
  readonly summary: string;
  readonly subject: (s: Subjects) => string;
  readonly stream?: (s: Subjects) => string;
  readonly payload: P;
  /** Bounds the payload is decoded within; absent = PAYLOAD_LIMITS.envelope. */
  readonly limits?: PayloadLimits;
  readonly producers: readonly ServiceName[];
  readonly consumers: readonly ServiceName[];
}

/** A core NATS request/reply; replies are wrapped in `{ ok, result | error }`. */
export interface RequestContract<Req extends TSchema = TSchema, Res extends TSchema = TSchema> {
  readonly kind: 'request';
  readonly name: string;
  readonly summary: string;
  readonly subject: (s: Subjects) => string;
  readonly request: Req;
  /** Bounds the request is decoded within; absent = PAYLOAD_LIMITS.envelope. */
  readonly limits?: PayloadLimits;
  readonly reply: Res;
  readonly responder: ServiceName;
  readonly requesters: readonly ServiceName[];
}

/** The reply envelope for a request whose result has schema `T`. */
export const replyEnvelope = <T extends TSchema>(result: T) =>
  Type.Union([
    Type.Object({ ok: Type.Literal(true), result }, { additionalProperties: false }),
    Type.Object({ ok: Type.Literal(false), error: WireError }, { additionalProperties: false }),
  ]);

const message = <P extends TSchema>(c: Omit<MessageContract<P>, 'kind'>): MessageContract<P> => ({ kind: 'message', ...c });
const request = <Req extends TSchema, Res extends TSchema>(c: Omit<RequestContract<Req, Res>, 'kind'>): RequestContract<Req, Res> => ({
  kind: 'request',
  ...c,
});

/** A request carrying a tool call's `arguments` as an object: those are bounded as tool arguments. */
const TOOL_ARGUMENTS_MEMBER: PayloadLimits = { ...PAYLOAD_LIMITS.envelope, members: { '/arguments': PAYLOAD_LIMITS.toolArguments } };

/** Task queries for any team: operators and Hermes services, inside the HERMES account. */
const taskQueries = {
  taskGet: request({
    name: 'taskGet',
    summary: "Read any team's task (operators and Hermes services, inside the HERMES account).",
    subject: (s) => s.taskGet,
    request: TaskGetRequest,
    reply: TaskView,
    responder: 'dispatcher',
    // The toolbus takes a call's owner and roles from the task record (by task id, whatever its
    // team), and refuses calls of ended tasks.
    requesters: ['cli', 'toolbus'],
  }),
  taskList: request({
    name: 'taskList',
    summary: "List a user's tasks (or everyone's, of every team, for operators), newest first, optionally by status, one page at a time.",
    subject: (s) => s.taskList,
    request: TaskListRequest,
    reply: TaskListReply,
    responder: 'dispatcher',
    requesters: ['cli'],
  }),
  taskCancel: request({
    name: 'taskCancel',
    summary:
      'Cancel any task: it ends `cancelled`, running jobs stop, their results are ignored. Cancelling an ended task changes nothing and returns it as it is.',
    subject: (s) => s.taskCancel,
    request: TaskCancelRequest,
    reply: TaskView,
    responder: 'dispatcher',
    requesters: ['cli'],
  }),
  taskInput: request({
    name: 'taskInput',
    summary:
      'Answer the question a task asked with ask_user: the waiting subtask resumes from its checkpoint with the answer as the tool result. A task that waits for nothing answers not_waiting_for_input.',
    subject: (s) => s.taskInput,
    request: TaskInputRequest,
    reply: TaskView,
    responder: 'dispatcher',
    requesters: ['cli'],
  }),
};

/** Schedules: the dispatcher keeps them and fires their tasks (docs/schedules.md). */
const scheduleRequests = {
  scheduleCreate: request({
    name: 'scheduleCreate',
    summary:
      'Create (or, with the same schedule_id and spec, find again) a schedule of an owner: a cron expression in a time zone and the task it starts on each firing.',
    subject: (s) => s.scheduleCreate,
    request: ScheduleCreateRequest,
    reply: ScheduleView,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  scheduleGet: request({
    name: 'scheduleGet',
    summary: "Read one of an owner's schedules with its next fire time (schedule ids are the owner's own: another owner's id is another schedule).",
    subject: (s) => s.scheduleGet,
    request: ScheduleGetRequest,
    reply: ScheduleView,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  scheduleList: request({
    name: 'scheduleList',
    summary: "List an owner's schedules (user_id null: every user's of the team; no team: the default team).",
    subject: (s) => s.scheduleList,
    request: ScheduleListRequest,
    reply: ScheduleListReply,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  scheduleUpdate: request({
    name: 'scheduleUpdate',
    summary: 'Pause or resume a schedule; a resumed one counts fire times from the resumption.',
    subject: (s) => s.scheduleUpdate,
    request: ScheduleUpdateRequest,
    reply: ScheduleView,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  scheduleDelete: request({
    name: 'scheduleDelete',
    summary: 'Delete a schedule: it fires no more; tasks it started are left as they are.',
    subject: (s) => s.scheduleDelete,
    request: ScheduleDeleteRequest,
    reply: ScheduleDeleteReply,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
};

/** Triggers: the dispatcher keeps them and starts a task for each matching team event (docs/schedules.md). */
const triggerRequests = {
  triggerCreate: request({
    name: 'triggerCreate',
    summary:
      "Create (or, with the same trigger_id and spec, find again) a trigger of an owner: a subject filter on the team's own events, an optional condition on the payload and the task it starts.",
    subject: (s) => s.triggerCreate,
    request: TriggerCreateRequest,
    reply: Trigger,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  triggerGet: request({
    name: 'triggerGet',
    summary: "Read one of an owner's triggers (trigger ids are the owner's own).",
    subject: (s) => s.triggerGet,
    request: TriggerGetRequest,
    reply: Trigger,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  triggerList: request({
    name: 'triggerList',
    summary: "List an owner's triggers (user_id null: every user's of the team; no team: the default team).",
    subject: (s) => s.triggerList,
    request: TriggerListRequest,
    reply: TriggerListReply,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  triggerUpdate: request({
    name: 'triggerUpdate',
    summary: 'Pause or resume a trigger; events that arrive while it is paused start nothing.',
    subject: (s) => s.triggerUpdate,
    request: TriggerUpdateRequest,
    reply: Trigger,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
  triggerDelete: request({
    name: 'triggerDelete',
    summary: 'Delete a trigger: it starts no more tasks; tasks it started are left as they are.',
    subject: (s) => s.triggerDelete,
    request: TriggerDeleteRequest,
    reply: TriggerDeleteReply,
    responder: 'dispatcher',
    requesters: ['gateway', 'cli'],
  }),
};

/** A task query on a team's own subject (the only one the team's account reaches), answered only from the team's tasks. */
function forTeam<K extends keyof typeof taskQueries>(
  bare: K,
  summary: string,
  subject: (s: Subjects) => string,
  also: readonly 'cli'[] = [],
): (typeof taskQueries)[K] {
  return { ...taskQueries[bare], name: `team${bare[0]!.toUpperCase()}${bare.slice(1)}`, summary, subject, requesters: ['gateway', 'submitter', ...also] };
}

/** Every subject Hermes uses and what travels on it. The AsyncAPI document is generated from this. */
export const contracts = {
  taskSubmit: message({
    name: 'taskSubmit',
    limits: PAYLOAD_LIMITS.taskSubmission,
    summary:
      "Submit a task for a team: a CloudEvent 1.0 (structured JSON, or binary with ce-* headers). The team is the subject's last token (a team's account maps its own `tasks.submit` here), never the payload. Set Nats-Msg-Id to the task id so a retried publish is dropped.",
    subject: (s) => s.taskSubmit('{team}'),
    stream: (s) => s.streams.taskSubmit,
    payload: TaskSubmitEvent,
    // The dispatcher submits the tasks its schedules fire.
    producers: ['submitter', 'gateway', 'cli', 'dispatcher'],
    consumers: ['dispatcher'],
  }),
  taskEvents: message({
    name: 'taskEvents',
    summary:
      "Everything that happens to one task of a team, in order. Subscribe (or replay from the stream) with the task id from the team, the submission's source and id.",
    subject: (s) => s.taskEvents('{team}', '{task_id}'),
    stream: (s) => s.streams.taskEvents,
    payload: TaskEvent,
    // The toolbus publishes the approval-request step events of parked tool calls.
    producers: ['dispatcher', 'runtime', 'toolbus'],
    consumers: ['submitter', 'gateway', 'cli'],
  }),
  teamEvents: message({
    name: 'teamEvents',
    summary:
      "An event a team publishes for its triggers (a JSON object; `<event subject>` is one or more tokens). The team is the subject's token after `events`, so a team's triggers see only its own events (docs/schedules.md).",
    subject: (s) => s.teamEvent('{team}', '{event_subject}'),
    stream: (s) => s.streams.teamEvents,
    payload: Type.Record(Type.String(), Type.Unknown(), {
      title: 'TeamEvent',
      description: 'a JSON object; a trigger condition and its task placeholders read it with JSON Pointers',
    }),
    limits: PAYLOAD_LIMITS.toolArguments,
    producers: ['submitter', 'gateway', 'cli'],
    consumers: ['dispatcher'],
  }),
  taskRejected: message({
    name: 'taskRejected',
    summary: "A team's submissions too malformed to name a task (no usable source or id), or naming one that exists, are reported here.",
    subject: (s) => s.taskRejected('{team}'),
    stream: (s) => s.streams.taskEvents,
    payload: TaskRejectedEvent,
    producers: ['dispatcher'],
    consumers: ['submitter'],
  }),
  runtimeJobs: message({
    name: 'runtimeJobs',
    summary: 'Agent jobs for the runtime pool (work queue, explicit ack, redelivered when a runtime dies).',
    subject: (s) => s.runtimeJobs,
    stream: (s) => s.streams.runtimeJobs,
    payload: RuntimeJob,
    // The CLI re-publishes dead letters (hermes deadletter replay).
    producers: ['dispatcher', 'cli'],
    consumers: ['runtime'],
  }),
  runtimeJobsAhead: message({
    name: 'runtimeJobsAhead',
    summary:
      'Runtime jobs of priority 2 and up (the work of tasks already running, high-priority tasks): runtimes pull this queue before runtimeJobs, so a deep queue of new tasks does not hold up tasks that have started.',
    subject: (s) => s.runtimeJobsAhead,
    stream: (s) => s.streams.runtimeJobsAhead,
    payload: RuntimeJob,
    producers: ['dispatcher', 'cli'],
    consumers: ['runtime'],
  }),
  runtimeResults: message({
    name: 'runtimeResults',
    summary: 'Outcome of each runtime job, consumed by the dispatcher.',
    subject: (s) => s.runtimeResults,
    stream: (s) => s.streams.runtimeResults,
    payload: RuntimeResult,
    // The CLI re-publishes dead letters (hermes deadletter replay).
    producers: ['runtime', 'cli'],
    consumers: ['dispatcher'],
  }),
  ...taskQueries,
  ...scheduleRequests,
  ...triggerRequests,
  teamTaskGet: forTeam('taskGet', "Read one of the team's tasks; a task of another team (or, with user_id, of another user) is not found.", (s) =>
    s.teamTaskGet('{team}'),
  ),
  // The CLI too: `hermes tasks --team` lists one team's tasks (a bare taskList names default-team users).
  teamTaskList: forTeam(
    'taskList',
    "List a user's tasks of the team (every user's of the team when user_id is null), newest first, optionally by status, one page at a time.",
    (s) => s.teamTaskList('{team}'),
    ['cli'],
  ),
  teamTaskInput: forTeam('taskInput', "Answer a question one of the team's tasks asked (another team's is not found), as taskInput.", (s) =>
    s.teamTaskInput('{team}'),
  ),
  teamTaskCancel: forTeam('taskCancel', "Cancel one of the team's tasks (another team's is not found), as taskCancel.", (s) => s.teamTaskCancel('{team}')),
  taskCancelled: message({
    name: 'taskCancelled',
    summary: 'A task was cancelled; runtimes abort its jobs (LLM calls, permit waits, tool waits) at once.',
    subject: (s) => s.taskCancelled('{task_id}'),
    payload: TaskCancelledNotice,
    producers: ['dispatcher'],
    consumers: ['runtime'],
  }),
  toolsList: request({
    name: 'toolsList',
    summary: 'List the tools a user (with roles, under a task allow-list) may use.',
    subject: (s) => s.toolsList,
    request: ToolsListRequest,
    reply: ToolsListReply,
    responder: 'toolbus',
    requesters: ['runtime', 'cli', 'gateway'],
  }),
  toolCall: request({
    name: 'toolCall',
    summary: 'Run one tool call: validated, permission-checked, approved when required, executed at most once per idempotency key.',
    subject: (s) => s.toolCall,
    request: ToolCallRequest,
    reply: ToolCallReply,
    responder: 'toolbus',
    requesters: ['runtime'],
  }),
  toolApprovalDecide: request({
    name: 'toolApprovalDecide',
    summary: 'Approve or deny a tool call parked for approval.',
    subject: (s) => s.toolApprovalDecide,
    request: ApprovalDecision,
    reply: ApprovalDecisionReply,
    responder: 'toolbus',
    requesters: ['gateway', 'cli'],
  }),
  toolApprovalList: request({
    name: 'toolApprovalList',
    summary: "The tool calls waiting for approval in a team's tasks (one user's, or every user's for an admin), oldest first.",
    subject: (s) => s.toolApprovalList,
    request: ApprovalListRequest,
    reply: ApprovalListReply,
    responder: 'toolbus',
    requesters: ['gateway'],
  }),
  toolApprovalChanged: message({
    name: 'toolApprovalChanged',
    summary: "A tool call of the team's tasks was parked for approval, decided or timed out; the gateway's approval streams list the pending calls again.",
    subject: (s) => s.toolApprovalChanged('{team}'),
    payload: ApprovalChanged,
    producers: ['toolbus'],
    consumers: ['gateway'],
  }),
  toolCallSettled: message({
    name: 'toolCallSettled',
    summary: 'A parked tool call of this task was decided; the waiting loop (or the gateway, for an MCP host call) asks for the result again.',
    subject: (s) => s.toolCallSettled('{task_id}'),
    payload: ApprovalDecisionReply,
    producers: ['toolbus'],
    consumers: ['runtime', 'gateway'],
  }),
  toolAudit: message({
    name: 'toolAudit',
    summary: 'One record per tool call attempt: who, what, arguments, outcome, duration.',
    subject: (s) => s.toolAudit('{task_id}'),
    stream: (s) => s.streams.toolAudit,
    payload: ToolAuditRecord,
    producers: ['toolbus'],
    consumers: ['cli', 'gateway'],
  }),
  toolProvidersAnnounce: message({
    name: 'toolProvidersAnnounce',
    summary:
      "A remote tool provider announces its tools on its own subject (the payload's provider must be the subject's last token; only that provider's NATS user may publish there), and repeats it as a heartbeat within ttl_ms.",
    subject: (s) => s.toolProviderAnnounce('{provider}'),
    payload: ToolProviderAnnouncement,
    producers: ['tool-provider'],
    consumers: ['toolbus'],
  }),
  toolProvidersDiscover: message({
    name: 'toolProvidersDiscover',
    summary: 'The toolbus asks every provider to announce itself now (sent when a toolbus starts).',
    subject: (s) => s.toolProvidersDiscover,
    payload: ToolProviderDiscover,
    producers: ['toolbus'],
    consumers: ['tool-provider'],
  }),
  toolExec: request({
    name: 'toolExec',
    limits: TOOL_ARGUMENTS_MEMBER,
    summary: 'The toolbus runs a validated call on the provider hosting the tool (queue group per provider).',
    subject: (s) => s.toolExec('{provider}'),
    request: ToolExecRequest,
    reply: ToolExecReply,
    responder: 'tool-provider',
    requesters: ['toolbus'],
  }),
  toolExecEndpoint: request({
    name: 'toolExecEndpoint',
    limits: TOOL_ARGUMENTS_MEMBER,
    summary:
      "The toolbus runs a validated call on a tool's endpoint of a provider it found as a NATS micro service ($SRV.INFO; queue group `q`, the services API default).",
    subject: (s) => s.toolExecEndpoint('{provider}', '{tool}'),
    request: ToolExecRequest,
    reply: ToolExecReply,
    responder: 'tool-provider',
    requesters: ['toolbus'],
  }),
  microPing: message({
    name: 'microPing',
    summary: 'The toolbus finds NATS micro services (every instance answers with an io.nats.micro.v1.ping_response), every TOOL_SRV_DISCOVERY_INTERVAL_MS.',
    subject: () => microSubject('PING'),
    payload: MicroControlRequest,
    producers: ['toolbus'],
    consumers: ['tool-provider'],
  }),
  microInfo: message({
    name: 'microInfo',
    summary:
      "The toolbus asks one service name for its endpoints (io.nats.micro.v1.info_response, tool specs in endpoint metadata); only that provider's NATS user may answer on it.",
    subject: () => microSubject('INFO', '{provider}'),
    payload: MicroControlRequest,
    producers: ['toolbus'],
    consumers: ['tool-provider'],
  }),
  microSchema: message({
    name: 'microSchema',
    summary: 'The toolbus reads the tool specs of a Go micro service older than 1.24 (no endpoint metadata) from its io.nats.micro.v1.schema_response.',
    subject: () => microSubject('SCHEMA', '{provider}', '{id}'),
    payload: MicroControlRequest,
    producers: ['toolbus'],
    consumers: ['tool-provider'],
  }),
  microStats: message({
    name: 'microStats',
    summary: 'hermes tools list reads every micro service instance’s counters (io.nats.micro.v1.stats_response).',
    subject: () => microSubject('STATS'),
    payload: MicroControlRequest,
    producers: ['cli'],
    consumers: ['tool-provider'],
  }),
  toolDebugCall: request({
    name: 'toolDebugCall',
    summary: 'Debug a tool (hermes tools call): one call through the whole ToolBus path under a synthesised debug task (task id dbg_<uuid>).',
    subject: (s) => s.toolDebugCall,
    request: ToolDebugCallRequest,
    reply: ToolCallReply,
    responder: 'toolbus',
    requesters: ['cli'],
  }),
  toolHostCall: request({
    name: 'toolHostCall',
    summary:
      "A tool call of an MCP host (the gateway's /mcp): the whole ToolBus path under a synthesised task (task id mcp_<uuid>), as the API key's owner and roles.",
    subject: (s) => s.toolHostCall,
    request: ToolHostCallRequest,
    reply: ToolCallReply,
    responder: 'toolbus',
    requesters: ['gateway'],
  }),
  mcpStatus: request({
    name: 'mcpStatus',
    summary: 'The MCP servers of the answering toolbus replica: state, health, tools, changed tools, config problems.',
    subject: (s) => s.mcpStatus,
    request: McpStatusRequest,
    reply: McpStatusReply,
    responder: 'toolbus',
    requesters: ['cli', 'gateway'],
  }),
  mcpReload: request({
    name: 'mcpReload',
    summary: 'Re-read the MCP config file (the answering replica tells the others with mcpReloadAll).',
    subject: (s) => s.mcpReload,
    request: McpReloadRequest,
    reply: McpReloadReply,
    responder: 'toolbus',
    requesters: ['cli'],
  }),
  mcpReloadAll: message({
    name: 'mcpReloadAll',
    summary: 'Every toolbus replica re-reads its MCP config file.',
    subject: (s) => s.mcpReloadAll,
    payload: McpReloadBroadcast,
    producers: ['toolbus'],
    consumers: ['toolbus'],
  }),
  mcpCall: request({
    name: 'mcpCall',
    limits: TOOL_ARGUMENTS_MEMBER,
    summary: "Call an MCP server's tool directly, bypassing the ToolBus's validation, permissions and records (debugging).",
    subject: (s) => s.mcpCall,
    request: McpCallRequest,
    reply: McpCallReply,
    responder: 'toolbus',
    requesters: ['cli'],
  }),
  mcpResources: request({
    name: 'mcpResources',
    summary: "List an MCP server's resources, templates and prompts, or read one resource or prompt.",
    subject: (s) => s.mcpResources,
    request: McpResourcesRequest,
    reply: McpResourcesReply,
    responder: 'toolbus',
    requesters: ['cli'],
  }),
  mcpApproveChange: request({
    name: 'mcpApproveChange',
    summary: 'Accept the changed description or schema of MCP tools, offering them again (rug-pull defence).',
    subject: (s) => s.mcpApproveChange,
    request: McpApproveChangeRequest,
    reply: McpApproveChangeReply,
    responder: 'toolbus',
    requesters: ['cli', 'gateway'],
  }),
  sessionAppend: request({
    name: 'sessionAppend',
    limits: PAYLOAD_LIMITS.memoryWrite,
    summary: "Append messages to a user's session.",
    subject: (s) => s.sessionAppend,
    request: SessionAppendRequest,
    reply: SessionMessagesReply,
    responder: 'memory',
    requesters: ['runtime'],
  }),
  sessionRead: request({
    name: 'sessionRead',
    summary: "Read the latest messages of a user's session.",
    subject: (s) => s.sessionRead,
    request: SessionReadRequest,
    reply: SessionMessagesReply,
    responder: 'memory',
    requesters: ['runtime', 'gateway', 'cli'],
  }),
  sessionContext: request({
    name: 'sessionContext',
    summary:
      "The part of a user's session that fits a model's context: running summary, pinned facts, then the latest messages verbatim (large tool results truncated).",
    subject: (s) => s.sessionContext,
    request: SessionContextRequest,
    reply: SessionContextReply,
    responder: 'memory',
    requesters: ['runtime'],
  }),
  sessionMessage: request({
    name: 'sessionMessage',
    summary: 'One stored message of a session in full, by id (e.g. a tool result truncated in context).',
    subject: (s) => s.sessionMessage,
    request: SessionMessageRequest,
    reply: SessionMessageReply,
    responder: 'memory',
    requesters: ['runtime', 'cli'],
  }),
  sessionPin: request({
    name: 'sessionPin',
    limits: PAYLOAD_LIMITS.memoryWrite,
    summary: 'Pin a fact, constraint or deadline to a session: it is in every context of the session from now on.',
    subject: (s) => s.sessionPin,
    request: SessionPinRequest,
    reply: SessionPinReply,
    responder: 'memory',
    requesters: ['runtime', 'gateway', 'cli'],
  }),
  sessionSummarize: request({
    name: 'sessionSummarize',
    summary: "Fold a session's older messages into its running summary now (normally done in the background).",
    subject: (s) => s.sessionSummarize,
    request: SessionSummarizeRequest,
    reply: SessionSummarizeReply,
    responder: 'memory',
    requesters: ['cli'],
  }),
  sessionCompact: request({
    name: 'sessionCompact',
    summary: "Summarise a running task's conversation with the session summariser (the runtime's answer to context_too_long); nothing is stored.",
    subject: (s) => s.sessionCompact,
    request: SessionCompactRequest,
    reply: SessionCompactReply,
    responder: 'memory',
    requesters: ['runtime'],
  }),
  sessionLock: request({
    name: 'sessionLock',
    summary: "Take a session's lock, leased, so one agent loop runs per session; a held lock answers session_busy (optionally after waiting wait_ms).",
    subject: (s) => s.sessionLock,
    request: SessionLockRequest,
    reply: SessionLockReply,
    responder: 'memory',
    requesters: ['runtime', 'dispatcher'],
  }),
  sessionRenew: request({
    name: 'sessionRenew',
    summary: "Extend a held session lock's lease (only its token can); session_lock_lost once it lapsed.",
    subject: (s) => s.sessionRenew,
    request: SessionRenewRequest,
    reply: SessionLockReply,
    responder: 'memory',
    requesters: ['runtime', 'dispatcher'],
  }),
  sessionUnlock: request({
    name: 'sessionUnlock',
    summary: 'Release a session lock; only the token that holds it can.',
    subject: (s) => s.sessionUnlock,
    request: SessionUnlockRequest,
    reply: SessionUnlockReply,
    responder: 'memory',
    requesters: ['runtime', 'dispatcher'],
  }),
  sessionList: request({
    name: 'sessionList',
    summary: "List a user's sessions, most recently written first: message count, tokens, first and latest message time.",
    subject: (s) => s.sessionList,
    request: SessionListRequest,
    reply: SessionListReply,
    responder: 'memory',
    requesters: ['gateway', 'cli'],
  }),
  sessionDelete: request({
    name: 'sessionDelete',
    summary: "Delete one of a user's sessions (messages, full tool results, summary, pins, lock); session_busy while an agent loop holds it.",
    subject: (s) => s.sessionDelete,
    request: SessionDeleteRequest,
    reply: SessionDeleteReply,
    responder: 'memory',
    requesters: ['gateway', 'cli'],
  }),
  workingSet: request({
    name: 'workingSet',
    limits: PAYLOAD_LIMITS.memoryWrite,
    summary: "Record entries in a task's working memory (per subtask and key; a later write of the same key replaces it).",
    subject: (s) => s.workingSet,
    request: WorkingSetRequest,
    reply: WorkingEntriesReply,
    responder: 'memory',
    requesters: ['runtime'],
  }),
  workingGet: request({
    name: 'workingGet',
    summary: "Read a task's working memory (all subtasks, or one).",
    subject: (s) => s.workingGet,
    request: WorkingGetRequest,
    reply: WorkingEntriesReply,
    responder: 'memory',
    requesters: ['runtime'],
  }),
  workingClear: request({
    name: 'workingClear',
    summary: "Drop a task's working memory (when the task ends).",
    subject: (s) => s.workingClear,
    request: WorkingClearRequest,
    reply: WorkingClearReply,
    responder: 'memory',
    requesters: ['dispatcher'],
  }),
  memoryRecall: request({
    name: 'memoryRecall',
    summary:
      "A user's active long-term memories closest to a query, scored by similarity and recency, with a background block for the prompt. Only that user's memories are ever searched.",
    subject: (s) => s.memoryRecall,
    request: MemoryRecallRequest,
    reply: MemoryRecallReply,
    responder: 'memory',
    requesters: ['runtime', 'toolbus', 'cli'],
  }),
  memoryList: request({
    name: 'memoryList',
    summary: "A user's long-term memories, any status (or one), newest first.",
    subject: (s) => s.memoryList,
    request: MemoryListRequest,
    reply: MemoryListReply,
    responder: 'memory',
    requesters: ['cli', 'gateway'],
  }),
  memoryForget: request({
    name: 'memoryForget',
    summary:
      'Forget a user: remove every long-term memory, every session (messages, summary, pins) and every task recording of theirs. Writes still queued for the user are dropped.',
    subject: (s) => s.memoryForget,
    request: MemoryForgetRequest,
    reply: MemoryForgetReply,
    responder: 'memory',
    requesters: ['gateway', 'cli'],
  }),
  memoryForgetOne: request({
    name: 'memoryForgetOne',
    summary:
      "Forget one of a user's long-term memories (any status): its record and vector are removed from the store. An id the user has no memory under (another user's included) is not_found.",
    subject: (s) => s.memoryForgetOne,
    request: MemoryForgetOneRequest,
    reply: MemoryForgetOneReply,
    responder: 'memory',
    requesters: ['gateway', 'cli'],
  }),
  memoryRestore: request({
    name: 'memoryRestore',
    summary: "Bring a user's archived memories (one, or all) back into recall.",
    subject: (s) => s.memoryRestore,
    request: MemoryRestoreRequest,
    reply: MemoryRestoreReply,
    responder: 'memory',
    requesters: ['cli'],
  }),
  memoryExtract: message({
    name: 'memoryExtract',
    summary:
      'Extraction job: a session has new messages; an LLM judge reads them and proposes memories (published by the memory service after appends, debounced per session).',
    subject: (s) => s.memoryExtract,
    stream: (s) => s.streams.memoryJobs,
    payload: MemoryExtractJob,
    // The CLI re-publishes dead letters (hermes deadletter replay).
    producers: ['memory', 'cli'],
    consumers: ['memory'],
  }),
  memoryWrite: message({
    name: 'memoryWrite',
    limits: PAYLOAD_LIMITS.memoryWrite,
    summary:
      'One extracted memory to embed and store; nak-ed and retried with back-off while the vector store is down, then dead-lettered (kept on deadLetters, replayable) once its delivery bound is used up.',
    subject: (s) => s.memoryWrite,
    stream: (s) => s.streams.memoryJobs,
    payload: MemoryWriteJob,
    // The CLI re-publishes dead letters (hermes deadletter replay).
    producers: ['memory', 'toolbus', 'cli'],
    consumers: ['memory'],
  }),
  deadLetters: message({
    name: 'deadLetters',
    summary:
      'A work-queue message a consumer gave up on (after HERMES_MAX_DELIVERIES deliveries, or at once on a non-retryable error), on the subject of the stream it came from; it was terminated there. The record keeps the original headers and body, so `hermes deadletter replay` can publish it again. Nats-Msg-Id is `<stream>:<stream_seq>`.',
    subject: (s) => s.deadLetter('{stream}'),
    stream: (s) => s.streams.deadLetters,
    payload: DeadLetter,
    // Every service with a work-queue consumer dead-letters through libs/bus.
    producers: ['dispatcher', 'runtime', 'memory'],
    consumers: ['cli'],
  }),
  recordings: message({
    name: 'recordings',
    summary:
      "One entry of a recorded task (opt-in, docs/evals.md): an LLM exchange (request messages, tools offered, the full answer, usage, latency, model), a tool call with its reply, a replay's divergence, or a scripted model for an eval case. Subject per owner and task, so forgetting a user purges theirs; retention RECORDING_MAX_AGE_MS.",
    subject: (s) => s.recording('{team}', '{user_id}', '{task_id}'),
    stream: (s) => s.streams.recordings,
    payload: RecordingEntry,
    // The CLI stores eval cases' scripted models (hermes eval).
    producers: ['runtime', 'cli'],
    consumers: ['runtime', 'cli'],
  }),
} as const;
