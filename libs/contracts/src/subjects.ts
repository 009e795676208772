/** A NATS subject token for the prefix: letters, digits, `_` and `-` only. */
const PREFIX_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/** Every subject, stream, consumer and bucket name Hermes uses, derived from one prefix. */
export interface Subjects {
  readonly prefix: string;
  /** JetStream (work queue): CloudEvents task submissions of one team (the dispatcher takes the team from the subject). */
  taskSubmit(team: string): string;
  /** Every team's submit subject (what the submit stream captures). */
  readonly taskSubmitAll: string;
  /** The bare submit subject of the release before teams: read as the default team's. */
  readonly taskSubmitLegacy: string;
  /** JetStream (limits): every event about one task of one team. */
  taskEvents(team: string, taskId: string): string;
  /** Every event of one team's tasks (what a team account imports). */
  teamTaskEvents(team: string): string;
  /** Wildcard over all task event subjects. */
  readonly taskEventsAll: string;
  /** JetStream: a team's submissions that cannot be answered on a task's own subject. */
  taskRejected(team: string): string;
  readonly taskRejectedAll: string;
  /** Request/reply to the dispatcher: read any task's state (operators, Hermes services). */
  readonly taskGet: string;
  /** Request/reply to the dispatcher: list tasks of any team. */
  readonly taskList: string;
  /** Request/reply to the dispatcher: cancel any task. */
  readonly taskCancel: string;
  /** Request/reply to the dispatcher: answer the question a task asked (ask_user). */
  readonly taskInput: string;
  /** Request/reply to the dispatcher for one team: answered only from that team's tasks. */
  teamTaskGet(team: string): string;
  teamTaskList(team: string): string;
  teamTaskCancel(team: string): string;
  teamTaskInput(team: string): string;
  /** Request/reply to the dispatcher: schedules (cron-fired tasks) of an owner. */
  readonly scheduleCreate: string;
  readonly scheduleGet: string;
  readonly scheduleList: string;
  readonly scheduleUpdate: string;
  readonly scheduleDelete: string;
  /** Request/reply to the dispatcher: triggers (event-started tasks) of an owner. */
  readonly triggerCreate: string;
  readonly triggerGet: string;
  readonly triggerList: string;
  readonly triggerUpdate: string;
  readonly triggerDelete: string;
  /** JetStream (work queue): an event of one team for its triggers, `subject` relative to the team's events. */
  teamEvent(team: string, subject: string): string;
  /** Every event of one team (what a team's triggers may listen to). */
  teamEvents(team: string): string;
  /** Every team's events (what the team events stream captures). */
  readonly teamEventsAll: string;
  /** Core pub/sub: a task was cancelled (runtimes stop its jobs). */
  taskCancelled(taskId: string): string;
  readonly taskCancelledAll: string;
  /** JetStream (work queue): jobs for the runtime pool (new tasks' opening jobs, low priority work). */
  readonly runtimeJobs: string;
  /**
   * JetStream (work queue): jobs that go ahead of runtimeJobs (priority 2 and up: the work of tasks
   * already running, high-priority tasks). A stream of its own, so the runtime pulls it first.
   */
  readonly runtimeJobsAhead: string;
  /** JetStream (work queue): job outcomes for the dispatcher. */
  readonly runtimeResults: string;
  /** Request/reply to the toolbus: tools a caller may use. */
  readonly toolsList: string;
  /** Request/reply to the toolbus: run one tool call (exactly once per idempotency key). */
  readonly toolCall: string;
  /** Request/reply to the toolbus: approve or deny a parked tool call. */
  readonly toolApprovalDecide: string;
  readonly toolApprovalList: string;
  toolApprovalChanged(team: string): string;
  /** Core pub/sub: a parked call of this task was decided (the loop stops waiting and asks again). */
  toolCallSettled(taskId: string): string;
  /** JetStream: an audit record per tool call, by task. */
  toolAudit(taskId: string): string;
  readonly toolAuditAll: string;
  /**
   * Core pub/sub: a remote provider announces its tools on its own subject, which only its NATS
   * user may publish to; the toolbus takes an announcement for a provider only from that subject.
   */
  toolProviderAnnounce(provider: string): string;
  /** Wildcard over every provider's announce subject (what the toolbus listens to). */
  readonly toolProvidersAnnounceAll: string;
  /** Core pub/sub: the toolbus asks every provider to announce itself now. */
  readonly toolProvidersDiscover: string;
  /** Request/reply to a remote provider (queue group per provider). */
  toolExec(provider: string): string;
  /** A tool's own endpoint of a provider hosted as a NATS micro service: under the provider's exec subject, so only its user may serve it. */
  toolExecEndpoint(provider: string, tool: string): string;
  /** Request/reply to the toolbus: a tool call for debugging, through the whole ToolBus path. */
  readonly toolDebugCall: string;
  /** Request/reply to the toolbus: a tool call of an MCP host through the gateway's `/mcp`, as the API key's owner. */
  readonly toolHostCall: string;
  /** Request/reply to the toolbus: MCP servers' state, reload, direct calls, resources, approving changed tools. */
  readonly mcpStatus: string;
  readonly mcpReload: string;
  readonly mcpCall: string;
  readonly mcpResources: string;
  readonly mcpApproveChange: string;
  /** Core pub/sub: every toolbus replica re-reads its MCP config. */
  readonly mcpReloadAll: string;
  /** Request/reply to the memory service. */
  readonly sessionAppend: string;
  readonly sessionRead: string;
  readonly sessionContext: string;
  readonly sessionMessage: string;
  readonly sessionPin: string;
  readonly sessionSummarize: string;
  readonly sessionCompact: string;
  readonly sessionLock: string;
  readonly sessionRenew: string;
  readonly sessionUnlock: string;
  readonly sessionList: string;
  readonly sessionDelete: string;
  /** Request/reply to the memory service: a task's working memory. */
  readonly workingSet: string;
  readonly workingGet: string;
  readonly workingClear: string;
  /** Request/reply to the memory service: a user's long-term memories. */
  readonly memoryRecall: string;
  readonly memoryList: string;
  readonly memoryForget: string;
  readonly memoryForgetOne: string;
  readonly memoryRestore: string;
  /** JetStream (work queue): extraction jobs (a session has new messages to learn from). */
  readonly memoryExtract: string;
  /** JetStream (work queue): one extracted memory to embed and store, retried until it is. */
  readonly memoryWrite: string;
  /** JetStream (limits): dead-letter records of messages a work-queue consumer gave up on, by the stream they came from. */
  deadLetter(stream: string): string;
  /** Wildcard over the dead letters of every stream. */
  readonly deadLetterAll: string;
  /** JetStream (limits): one task's recording (LLM exchanges, tool calls), under its owner so forgetting a user purges them. */
  recording(team: string, userId: string, taskId: string): string;
  /** Every recording subject of one task, whoever owns it. */
  recordingOfTask(taskId: string): string;
  /** Every recording of one user. */
  recordingsOfUser(team: string, userId: string): string;
  readonly recordingsAll: string;
  readonly streams: {
    readonly taskSubmit: string;
    readonly taskEvents: string;
    readonly runtimeJobs: string;
    readonly runtimeJobsAhead: string;
    readonly runtimeResults: string;
    readonly toolAudit: string;
    readonly memoryJobs: string;
    readonly deadLetters: string;
    readonly teamEvents: string;
    readonly recordings: string;
  };
  readonly consumers: {
    readonly dispatcherIntake: string;
    readonly dispatcherResults: string;
    readonly runtimeJobs: string;
    readonly runtimeJobsAhead: string;
    readonly memoryExtract: string;
    readonly memoryWrites: string;
    readonly dispatcherTriggers: string;
  };
  readonly buckets: {
    readonly tasks: string;
    /** Index of tasks by user (`<user_id>.<task_id>`), for listing; also marks tasks a sweep must watch. */
    readonly taskIndex: string;
    /** Schedules by id (the dispatcher's, see schedules.ts in the contracts). */
    readonly schedules: string;
    /** Triggers, keyed by team (the dispatcher's, see triggers.ts in the contracts). */
    readonly triggers: string;
    readonly llmSemaphore: string;
    /** Tool call records: exactly-once, pending approvals, full results. */
    readonly toolCalls: string;
    /** Tool calls waiting for a human decision (every toolbus replica watches it). */
    readonly toolApprovals: string;
    /** Results of idempotent tools, expiring after their TTL. */
    readonly toolCache: string;
    /** Agent loop checkpoints, one per job. */
    readonly checkpoints: string;
  };
  /** Queue group shared by all replicas of one service for request/reply. */
  queueGroup(service: string): string;
}

/** Builds the subject catalogue; throws on a prefix that is not one NATS token. */
export function subjectsFor(prefix = 'hermes'): Subjects {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new Error(`subject prefix "${prefix}" must match ${PREFIX_PATTERN} (one NATS subject token)`);
  }
  const upper = prefix.toUpperCase().replace(/-/g, '_');
  return {
    prefix,
    taskSubmit: (team: string) => `${prefix}.tasks.submit.${team}`,
    taskSubmitAll: `${prefix}.tasks.submit.*`,
    taskSubmitLegacy: `${prefix}.tasks.submit`,
    taskEvents: (team: string, taskId: string) => `${prefix}.tasks.events.${team}.${taskId}`,
    teamTaskEvents: (team: string) => `${prefix}.tasks.events.${team}.>`,
    taskEventsAll: `${prefix}.tasks.events.>`,
    taskRejected: (team: string) => `${prefix}.tasks.rejected.${team}`,
    taskRejectedAll: `${prefix}.tasks.rejected.*`,
    taskGet: `${prefix}.tasks.get`,
    taskList: `${prefix}.tasks.list`,
    taskCancel: `${prefix}.tasks.cancel`,
    taskInput: `${prefix}.tasks.input`,
    teamTaskGet: (team: string) => `${prefix}.tasks.get.${team}`,
    teamTaskList: (team: string) => `${prefix}.tasks.list.${team}`,
    teamTaskCancel: (team: string) => `${prefix}.tasks.cancel.${team}`,
    teamTaskInput: (team: string) => `${prefix}.tasks.input.${team}`,
    scheduleCreate: `${prefix}.schedules.create`,
    scheduleGet: `${prefix}.schedules.get`,
    scheduleList: `${prefix}.schedules.list`,
    scheduleUpdate: `${prefix}.schedules.update`,
    scheduleDelete: `${prefix}.schedules.delete`,
    triggerCreate: `${prefix}.triggers.create`,
    triggerGet: `${prefix}.triggers.get`,
    triggerList: `${prefix}.triggers.list`,
    triggerUpdate: `${prefix}.triggers.update`,
    triggerDelete: `${prefix}.triggers.delete`,
    teamEvent: (team: string, subject: string) => `${prefix}.events.${team}.${subject}`,
    teamEvents: (team: string) => `${prefix}.events.${team}.>`,
    teamEventsAll: `${prefix}.events.>`,
    taskCancelled: (taskId: string) => `${prefix}.tasks.cancelled.${taskId}`,
    taskCancelledAll: `${prefix}.tasks.cancelled.>`,
    runtimeJobs: `${prefix}.runtime.jobs`,
    runtimeJobsAhead: `${prefix}.runtime.jobs-ahead`,
    runtimeResults: `${prefix}.runtime.results`,
    toolsList: `${prefix}.toolbus.tools.list`,
    toolCall: `${prefix}.toolbus.call`,
    toolApprovalDecide: `${prefix}.toolbus.approvals.decide`,
    toolApprovalList: `${prefix}.toolbus.approvals.list`,
    toolApprovalChanged: (team: string) => `${prefix}.toolbus.approvals.changed.${team}`,
    toolCallSettled: (taskId: string) => `${prefix}.toolbus.settled.${taskId}`,
    toolAudit: (taskId: string) => `${prefix}.toolbus.audit.${taskId}`,
    toolAuditAll: `${prefix}.toolbus.audit.>`,
    toolProviderAnnounce: (provider: string) => `${prefix}.toolbus.providers.announce.${provider}`,
    toolProvidersAnnounceAll: `${prefix}.toolbus.providers.announce.*`,
    toolProvidersDiscover: `${prefix}.toolbus.providers.discover`,
    toolExec: (provider: string) => `${prefix}.tools.exec.${provider}`,
    toolExecEndpoint: (provider: string, tool: string) => `${prefix}.tools.exec.${provider}.${tool}`,
    toolDebugCall: `${prefix}.toolbus.tools.call`,
    toolHostCall: `${prefix}.toolbus.tools.host-call`,
    mcpStatus: `${prefix}.toolbus.mcp.status`,
    mcpReload: `${prefix}.toolbus.mcp.reload`,
    mcpCall: `${prefix}.toolbus.mcp.call`,
    mcpResources: `${prefix}.toolbus.mcp.resources`,
    mcpApproveChange: `${prefix}.toolbus.mcp.approve-change`,
    mcpReloadAll: `${prefix}.toolbus.mcp.reload-all`,
    sessionAppend: `${prefix}.memory.session.append`,
    sessionRead: `${prefix}.memory.session.read`,
    sessionContext: `${prefix}.memory.session.context`,
    sessionMessage: `${prefix}.memory.session.message`,
    sessionPin: `${prefix}.memory.session.pin`,
    sessionSummarize: `${prefix}.memory.session.summarize`,
    sessionCompact: `${prefix}.memory.session.compact`,
    sessionLock: `${prefix}.memory.session.lock`,
    sessionRenew: `${prefix}.memory.session.renew`,
    sessionUnlock: `${prefix}.memory.session.unlock`,
    sessionList: `${prefix}.memory.session.list`,
    sessionDelete: `${prefix}.memory.session.delete`,
    workingSet: `${prefix}.memory.working.set`,
    workingGet: `${prefix}.memory.working.get`,
    workingClear: `${prefix}.memory.working.clear`,
    memoryRecall: `${prefix}.memory.longterm.recall`,
    memoryList: `${prefix}.memory.longterm.list`,
    memoryForget: `${prefix}.memory.longterm.forget`,
    memoryForgetOne: `${prefix}.memory.longterm.forget_one`,
    memoryRestore: `${prefix}.memory.longterm.restore`,
    memoryExtract: `${prefix}.memory.jobs.extract`,
    memoryWrite: `${prefix}.memory.jobs.write`,
    deadLetter: (stream: string) => `${prefix}.deadletter.${stream}`,
    deadLetterAll: `${prefix}.deadletter.*`,
    recording: (team: string, userId: string, taskId: string) => `${prefix}.recordings.${team}.${userId}.${taskId}`,
    recordingOfTask: (taskId: string) => `${prefix}.recordings.*.*.${taskId}`,
    recordingsOfUser: (team: string, userId: string) => `${prefix}.recordings.${team}.${userId}.*`,
    recordingsAll: `${prefix}.recordings.>`,
    streams: {
      taskSubmit: `${upper}_TASK_SUBMIT`,
      taskEvents: `${upper}_TASK_EVENTS`,
      runtimeJobs: `${upper}_RUNTIME_JOBS`,
      runtimeJobsAhead: `${upper}_RUNTIME_JOBS_AHEAD`,
      runtimeResults: `${upper}_RUNTIME_RESULTS`,
      toolAudit: `${upper}_TOOL_AUDIT`,
      memoryJobs: `${upper}_MEMORY_JOBS`,
      deadLetters: `${upper}_DEAD_LETTERS`,
      teamEvents: `${upper}_TEAM_EVENTS`,
      recordings: `${upper}_RECORDINGS`,
    },
    consumers: {
      dispatcherIntake: 'dispatcher-intake',
      dispatcherResults: 'dispatcher-results',
      runtimeJobs: 'runtime-jobs',
      runtimeJobsAhead: 'runtime-jobs-ahead',
      memoryExtract: 'memory-extract',
      memoryWrites: 'memory-writes',
      dispatcherTriggers: 'dispatcher-triggers',
    },
    buckets: {
      tasks: `${prefix}_tasks`,
      taskIndex: `${prefix}_task_index`,
      schedules: `${prefix}_schedules`,
      triggers: `${prefix}_triggers`,
      llmSemaphore: `${prefix}_llm_semaphore`,
      toolCalls: `${prefix}_tool_calls`,
      toolApprovals: `${prefix}_tool_approvals`,
      toolCache: `${prefix}_tool_cache`,
      checkpoints: `${prefix}_checkpoints`,
    },
    queueGroup: (service: string) => `${prefix}.${service}`,
  };
}
