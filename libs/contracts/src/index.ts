export { subjectsFor } from './subjects.js';
export { DEFAULT_TEAM, Team, isTeamName, ownerFields, ownerFromKey, ownerOf, ownerKey, sameOwner, teamField, teamOfSubject } from './owner.js';
export type { Owner } from './owner.js';
export type { Subjects } from './subjects.js';

export { validate, precompile } from './validate.js';
export type { ValidationResult } from './validate.js';

export { ERROR_CODES, wireError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { faultOf, isCallerFault } from './faults.js';
export type { Fault } from './faults.js';
export { HermesError } from './hermes-error.js';
export type { HermesErrorOptions } from './hermes-error.js';

export {
  PAYLOAD_LIMITS,
  FORBIDDEN_KEYS,
  MAX_LIMIT_ISSUES,
  MAX_POINTER_CHARS,
  checkLimits,
  limitsAt,
  decodeBoundedJson,
  parseBoundedJson,
  limitsError,
  payloadLimitError,
  limitValidationIssues,
} from './limits.js';
export type { ValueLimits, PayloadLimits, PayloadKind, LimitName, LimitIssue, BoundedDecode, DecodeOptions } from './limits.js';

export { taskIdFor, decodeCloudEvent, sourceAndId, requestDigest, CLOUDEVENT_HEADER_MAX_CHARS } from './cloudevents.js';
export type { HeaderLookup, DecodedEvent } from './cloudevents.js';

export { contracts, replyEnvelope } from './catalog.js';
export { injectTraceContext, extractTraceContext, currentTraceparent, currentTraceContext, contextFromTraceparent } from './trace-context.js';
export { PUBLISHED_ASYNCAPI_URL, ABSOLUTE_URI_PATTERN, defaultEventSourceBase, eventSourceFor, dataSchemaFor } from './event-source.js';
export type { TraceHeaders } from './trace-context.js';
export type { MessageContract, RequestContract, ServiceName } from './catalog.js';

export { makeTaskEvent, taskEventKind, taskEventData } from './task-event-builder.js';

export { Id, Timestamp, ValidationIssue, WireError, TokenUsage } from './schemas/common.js';
export {
  PROBLEM_JSON,
  problemType,
  problemTitle,
  ProblemDetails,
  TaskPlanView,
  TaskAuditView,
  LlmPoolStatus,
  LlmPoolsReply,
  TaskSubmitted,
  HttpTaskRequest,
  ApprovalDecisionBody,
  TaskInputBody,
  SessionMessagesView,
  SessionDeletedView,
  CallerView,
} from './schemas/http-api.js';
export { TASK_SUBMIT_TYPE, Priority, TaskBudget, TaskRequest, TaskSubmitEvent } from './schemas/task-submission.js';
export {
  TASK_EVENT_KINDS,
  TERMINAL_EVENT_KINDS,
  taskEventType,
  taskEventDataTitle,
  TaskEvent,
  TaskAcceptedEvent,
  TaskRejectedEvent,
  TaskPlannedEvent,
  TaskStartedEvent,
  SubtaskOutcome,
  TaskStepEvent,
  TaskCompletedEvent,
  TaskFailedEvent,
  TaskCancelledEvent,
  TaskInputRequiredEvent,
  TaskReviewStartedEvent,
  TaskReviewVerdictEvent,
  InputRequiredData,
  TaskResult,
  StepKind,
} from './schemas/task-events.js';
export type { TaskEventKind, TaskEventDataByKind } from './schemas/task-events.js';
export {
  TaskStatus,
  TERMINAL_TASK_STATUSES,
  isTerminalStatus,
  TaskView,
  TaskGetRequest,
  TaskCancelRequest,
  TaskInputRequest,
  InputWait,
  TaskCancelledNotice,
  SubtaskStatus,
  SubtaskState,
  CoordinationJob,
  PlanState,
  ReviewState,
  TaskOptions,
  TaskListRequest,
  TaskListReply,
  TaskSummary,
  TraceContext,
} from './schemas/task-state.js';
export { ModelRole, JobKind, PlanSubtask, Plan, RuntimeJob, RuntimeResult, JOB_PRIORITY_MAX, AHEAD_PRIORITY, goesAhead } from './schemas/runtime.js';
export { MAX_REVIEW_ROUNDS, ReviewNote, ReviewVerdict, ReviewOutcome } from './schemas/review.js';
export {
  MAX_CATCH_UP_FIRINGS,
  MissedFirings,
  Schedule,
  ScheduleCreateRequest,
  ScheduleDeleteReply,
  ScheduleDeleteRequest,
  ScheduleGetRequest,
  ScheduleListReply,
  ScheduleListRequest,
  ScheduleSpec,
  ScheduleUpdateRequest,
  ScheduleView,
  TaskTemplate,
} from './schemas/schedules.js';
export {
  Trigger,
  TriggerCreateRequest,
  TriggerDeleteReply,
  TriggerDeleteRequest,
  TriggerGetRequest,
  TriggerListReply,
  TriggerListRequest,
  TriggerSpec,
  TriggerSubject,
  TriggerUpdateRequest,
} from './schemas/triggers.js';
export { ToolDefinition, ToolsListRequest, ToolsListReply } from './schemas/toolbus.js';
export { MessageRole, ToolCall, NewSessionMessage, SessionMessage, SessionAppendRequest, SessionReadRequest, SessionMessagesReply } from './schemas/memory.js';
export {
  SessionContextRequest,
  SessionContextReply,
  ContextMessage,
  SessionMessageRequest,
  SessionMessageReply,
  PinKind,
  PinnedFact,
  SessionPinRequest,
  SessionPinReply,
  SessionSummarizeRequest,
  SessionSummarizeReply,
  SessionCompactRequest,
  SessionCompactReply,
} from './schemas/session-context.js';
export { SessionLockRequest, SessionLockReply, SessionRenewRequest, SessionUnlockRequest, SessionUnlockReply } from './schemas/session-lock.js';
export { SessionListRequest, SessionListReply, SessionSummaryRow, SessionDeleteRequest, SessionDeleteReply } from './schemas/session-list.js';
export { WorkingEntry, WorkingSetRequest, WorkingGetRequest, WorkingEntriesReply, WorkingClearRequest, WorkingClearReply } from './schemas/working-memory.js';
export {
  MemoryType,
  MemoryStatus,
  MemorySource,
  MemoryProvenance,
  provenanceLabel,
  LongTermMemory,
  MemoryExtractJob,
  MemoryWriteJob,
  MemoryRecallRequest,
  RecalledMemory,
  MemoryRecallReply,
  MemoryListRequest,
  MemoryListReply,
  MemoryForgetRequest,
  MemoryForgetReply,
  MemoryForgetOneRequest,
  MemoryForgetOneReply,
  MemoryRestoreRequest,
  MemoryRestoreReply,
} from './schemas/long-term-memory.js';
export {
  ToolSpec,
  ToolCallRequest,
  ToolCallReply,
  ToolError,
  ToolErrorCode,
  ArgumentIssue,
  ApprovalDecision,
  ApprovalDecisionReply,
  ApprovalListRequest,
  ApprovalListReply,
  ApprovalChanged,
  PendingApproval,
  ToolProviderAnnouncement,
  ToolProviderDiscover,
  ToolExecRequest,
  ToolExecReply,
  ToolAuditRecord,
  ArgumentTransform,
  ArgumentRule,
  ArgumentAdjustment,
  UNIT_FACTORS,
} from './schemas/tool-calls.js';
export { Condition, ConditionOperator, FieldTest, FieldPointer } from './schemas/condition.js';
export { CONDITION_LIMITS, conditionProblems, matchCondition, conditionFields, valueAtPointer } from './condition-match.js';
export { argumentPolicyProblems, dimensionOf } from './tool-argument-policy.js';
export {
  McpConfigProblem,
  McpToolChange,
  McpServerStatus,
  McpStatusRequest,
  McpStatusReply,
  McpReloadRequest,
  McpReloadReply,
  McpReloadBroadcast,
  McpCallRequest,
  McpCallReply,
  McpResourcesRequest,
  McpResourcesReply,
  McpApproveChangeRequest,
  McpApproveChangeReply,
  ToolDebugCallRequest,
  ToolHostCallRequest,
} from './schemas/mcp.js';
export { DeadLetter } from './schemas/dead-letter.js';
export {
  MicroServiceStats,
  MicroEndpointStats,
  MicroServicePing,
  MicroServiceInfo,
  MicroEndpointInfo,
  MicroServiceSchema,
  MicroControlRequest,
  MICRO_VERBS,
  MICRO_TYPES,
  TOOL_SPEC_METADATA,
  microSubject,
} from './schemas/micro-services.js';
export type { MicroVerb } from './schemas/micro-services.js';
export {
  ReplaySource,
  RecordedToolCallRequest,
  RecordedLlmExchange,
  RecordedToolExchange,
  RecordedDivergence,
  ScriptCondition,
  ScriptAnswer,
  ScriptTurn,
  RecordedScript,
  RecordingEntry,
} from './schemas/recordings.js';
export { toolCallIdFor } from './tool-call-id.js';
export { StoredStateError, decodeStored } from './stored-state.js';
export type { StoredAt } from './stored-state.js';
export {
  StoredChatMessage,
  StoredCheckpoint,
  StoredCheckpointHead,
  StoredCheckpointTurn,
  StoredTask,
  CallState,
  CallOrigin,
  ApprovalState,
  StoredCallRecord,
  StoredPendingApproval,
  StoredCacheEntry,
  StoredMemoryRecord,
  StoredPoolProfile,
  StoredRunnerCapacity,
  runnerCapacityKey,
} from './schemas/stored-state.js';

export { HTTP_OPERATIONS } from './openapi.js';
export type { HttpOperation, HttpOperationId } from './openapi.js';
export { ArgumentMatcher, EvalGrader, EvalSetupTask, EvalCase, EvalSuite, GraderResult, EvalCaseResult, EvalResults } from './schemas/evals.js';
