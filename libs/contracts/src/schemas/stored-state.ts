import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp, TokenUsage } from './common.js';
import { MemoryProvenance, MemorySource, MemoryStatus, MemoryType } from './long-term-memory.js';
import { TaskView } from './task-state.js';
import { ArgumentAdjustment, ToolCallReply, ToolCallRequest } from './tool-calls.js';

// Records kept in JetStream KV are read back by other replicas, and during a rolling upgrade by
// other versions of the code: they are contracts like the messages. Unlike a message schema, a
// record's top level tolerates properties it does not know, so that a newer version may add an
// optional field without an older replica refusing the record; `v` changes when a field changes
// meaning or becomes required. Records written before they carried `v` read as version 1.

const version1 = Type.Optional(Type.Literal(1, { description: 'record version; absent in records written before the field existed, which read as 1' }));

/** A tool call the model asked for, as an assistant turn carries it. */
const StoredToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

/**
 * One chat message of a checkpointed conversation, in the OpenAI chat format. Only what the agent
 * loop relies on is checked (the role, a tool turn's call id, an assistant turn's calls); the rest
 * is the provider's format and passes as it is.
 */
export const StoredChatMessage = Type.Union(
  [
    Type.Object({
      role: Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user')]),
      content: Type.Union([Type.String(), Type.Array(Type.Unknown())]),
    }),
    Type.Object({
      role: Type.Literal('assistant'),
      content: Type.Optional(Type.Union([Type.String(), Type.Null(), Type.Array(Type.Unknown())])),
      tool_calls: Type.Optional(Type.Array(StoredToolCall)),
    }),
    Type.Object({ role: Type.Literal('tool'), tool_call_id: Type.String(), content: Type.Union([Type.String(), Type.Array(Type.Unknown())]) }),
  ],
  { title: 'StoredChatMessage' },
);
export type StoredChatMessage = Static<typeof StoredChatMessage>;

/** Bucket `checkpoints`, key `job.<job id>`: what the agent loop needs to resume a job without repeating a finished LLM call. */
export const StoredCheckpoint = Type.Object(
  {
    v: Type.Literal(1),
    job_id: Type.String({ minLength: 1 }),
    step: Type.Integer({ minimum: 0, description: 'LLM calls completed' }),
    messages: Type.Array(StoredChatMessage, { description: 'the conversation after the system prompt: opening messages, assistant turns, tool results' }),
    usage: TokenUsage,
    calls: Type.Array(Type.String(), { description: 'tool calls made so far, as `name + canonical arguments`, for the loop detector' }),
    pending: Type.Boolean({
      description: 'the last assistant turn has tool calls that have not all returned (they run again on resume; the toolbus replays finished ones)',
    }),
    session_written: Type.Optional(Type.Boolean({ description: 'the final turn was written to the session (a redelivery does not write it twice)' })),
  },
  { title: 'StoredCheckpoint' },
);
export type StoredCheckpoint = Static<typeof StoredCheckpoint>;

/**
 * Bucket `checkpoints`, key `job.<job id>`: the head of a job's checkpoint since v2, small and
 * fixed in size whatever the task's length. It carries the compare-and-set fence (its revision)
 * and says which turn records make up the conversation; the conversation itself lives in those
 * records, one per saved step, so a step writes its own turn and this head, not the whole history.
 */
export const StoredCheckpointHead = Type.Object(
  {
    v: Type.Literal(2),
    job_id: Type.String({ minLength: 1 }),
    step: Type.Integer({ minimum: 0, description: 'LLM calls completed' }),
    usage: TokenUsage,
    pending: StoredCheckpoint.properties.pending,
    session_written: StoredCheckpoint.properties.session_written,
    turns: Type.Integer({ minimum: 0, description: 'the number of the last turn record of the conversation (0: none yet)' }),
    base: Type.Integer({
      minimum: 1,
      description: 'the first turn record of the conversation: one that starts it afresh (the opening, a compacted conversation, a v1 checkpoint rewritten)',
    }),
    writers: Type.Array(
      Type.Object({
        token: Type.String({ pattern: '^[A-Za-z0-9]{1,32}$', description: 'the delivery that wrote these turns; part of their keys' }),
        from: Type.Integer({ minimum: 1, description: "the first turn it wrote (it wrote all up to the next writer's first)" }),
      }),
      {
        description:
          'who wrote which turns, one entry per delivery that saved (not per step): turn n is key `job.<job id>.<token>.<n>`, so a runtime that lost the job never overwrites the turns of the one that took it over',
      },
    ),
  },
  { title: 'StoredCheckpointHead' },
);
export type StoredCheckpointHead = Static<typeof StoredCheckpointHead>;

/**
 * Bucket `checkpoints`, key `job.<job id>.<writer token>.<turn>`: the messages and tool-call
 * signatures one checkpoint save added, written once before the head that counts it. Message
 * contents too large to keep inline are stored once by hash (key `job.<job id>.blob.<sha256 hex>`,
 * the raw text) and named in `refs`, so a turn record stays far below max_payload.
 */
export const StoredCheckpointTurn = Type.Object(
  {
    v: Type.Literal(1),
    job_id: Type.String({ minLength: 1 }),
    turn: Type.Integer({ minimum: 1 }),
    fresh: Type.Optional(Type.Boolean({ description: 'the conversation starts afresh here (messages and calls replace all before)' })),
    messages: Type.Array(StoredChatMessage, { description: 'the messages this save added, in order; a referenced content is an empty string here' }),
    calls: Type.Array(Type.String(), { description: 'the tool-call signatures this save added, for the loop detector' }),
    refs: Type.Optional(
      Type.Array(
        Type.Object({
          message: Type.Integer({ minimum: 0, description: 'index into `messages`' }),
          sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
          bytes: Type.Integer({ minimum: 0, description: 'UTF-8 bytes of the content' }),
        }),
      ),
    ),
  },
  { title: 'StoredCheckpointTurn' },
);
export type StoredCheckpointTurn = Static<typeof StoredCheckpointTurn>;

/** Bucket `tasks`, key the task id: the task state, which is also what taskGet answers. */
export const StoredTask = Type.Object(
  // Strict like TaskView: the replicas of the release before this one validate stored tasks
  // against TaskView, which refuses unknown properties, so `v` is accepted here but not yet written.
  { ...TaskView.properties, v: version1 },
  { title: 'StoredTask', additionalProperties: false },
);
export type StoredTask = Static<typeof StoredTask>;

/** The life of a tool call: `running` (a toolbus holds the lease), `pending_approval` (waits for a human), `done` (the reply is final and replayed). */
export const CallState = Type.Union([Type.Literal('running'), Type.Literal('pending_approval'), Type.Literal('done')]);
export type CallState = Static<typeof CallState>;

/** Who asked, as the audit and the approval event need it; the raw arguments cut to 4 KiB. */
export const CallOrigin = Type.Object(
  { ...Type.Omit(ToolCallRequest, ['arguments', 'allow', 'resumed']).properties, raw_arguments: Type.String() },
  { title: 'CallOrigin' },
);
export type CallOrigin = Static<typeof CallOrigin>;

/** A parked call's approval: until when it may be decided, and the decision once made. */
export const ApprovalState = Type.Object(
  {
    expires_at: Timestamp,
    decision: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('deny'), Type.Literal('timeout')])),
    decided_by: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
  },
  { title: 'ApprovalState' },
);
export type ApprovalState = Static<typeof ApprovalState>;

/** Bucket `toolCalls`, key from the idempotency key: one tool call, which makes it run exactly once. */
export const StoredCallRecord = Type.Object(
  {
    v: version1,
    call_id: Type.String({ minLength: 1 }),
    origin: CallOrigin,
    provider: Type.Optional(Type.String()),
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the validated arguments: what a take-over or an approval executes' })),
    state: CallState,
    owner: Type.Optional(Type.String({ description: 'toolbus instance executing it' })),
    lease_until: Type.Optional(Type.Number({ description: 'epoch ms until which the owner holds it' })),
    attempt: Type.Integer({ minimum: 0 }),
    approval: Type.Optional(ApprovalState),
    reply: Type.Optional(ToolCallReply),
    full_result: Type.Optional(Type.Unknown({ description: 'the untruncated result when the reply carries a truncated one' })),
    full_result_dropped: Type.Optional(Type.String({ description: 'why full_result is missing (larger than a KV value may be)' })),
    call_hash: Type.Optional(Type.String({ description: 'tool and raw arguments hashed: tells a resend of this call from another call under its key' })),
    replaceable: Type.Optional(Type.Boolean({ description: 'nothing with side effects ran for it, so another call under its key may take the record over' })),
    traceparent: Type.Optional(Type.String({ description: 'W3C traceparent of the request that parked the call' })),
    provenance: Type.Optional(MemoryProvenance),
    adjustments: Type.Optional(Type.Array(ArgumentAdjustment, { description: "what the tool's transforms and time normalisation changed in `arguments`" })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'StoredCallRecord' },
);
export type StoredCallRecord = Static<typeof StoredCallRecord>;

/** Bucket `toolApprovals`, key the call record's key: a call waiting for a human, watched by every toolbus replica. */
export const StoredPendingApproval = Type.Object(
  { v: version1, task_id: Id, tool: Type.String({ minLength: 1 }), expires_at: Timestamp },
  { title: 'StoredPendingApproval' },
);
export type StoredPendingApproval = Static<typeof StoredPendingApproval>;

/** Bucket `toolCache`, key `<tool>.<sha256 of the canonical arguments>`: a result of an idempotent tool. */
export const StoredCacheEntry = Type.Object(
  {
    v: version1,
    stored_at: Type.Number({ description: "epoch ms the result was stored; a read compares it with the tool's own TTL" }),
    result: Type.Unknown(),
  },
  { title: 'StoredCacheEntry' },
);
export type StoredCacheEntry = Static<typeof StoredCacheEntry>;

/**
 * A long-term memory as the vector store keeps it (a `put` line of the embedded store's per-user
 * log, a Qdrant point's payload). `user_id` is the owner key (`<team>/<user>` outside the default
 * team). `provenance` came later: records without it read as of unknown origin.
 */
export const StoredMemoryRecord = Type.Object(
  {
    v: version1,
    memory_id: Type.String({ minLength: 1, maxLength: 128 }),
    user_id: Type.String({ minLength: 1 }),
    type: MemoryType,
    content: Type.String(),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
    status: MemoryStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
    last_recalled_at: Type.Optional(Timestamp),
    superseded_by: Type.Optional(Type.String()),
    source: Type.Optional(MemorySource),
    provenance: Type.Optional(MemoryProvenance),
  },
  { title: 'StoredMemoryRecord' },
);
export type StoredMemoryRecord = Static<typeof StoredMemoryRecord>;

/**
 * Bucket `llmSemaphore`, key `profile.<pool>.<role>`: what a service's LLM client knows of the
 * server a role's calls go to, written at its start (after it asked the server for the model's
 * window), read by `hermes llm status`. The pool states (`pool.<name>`) are the semaphore's own.
 */
export const StoredPoolProfile = Type.Object(
  {
    v: Type.Literal(1),
    pool: Type.String({ minLength: 1 }),
    role: Type.String({ minLength: 1, description: 'worker, planner or summarizer' }),
    model: Type.String({ minLength: 1 }),
    provider: Type.String({ minLength: 1, description: "the pool's provider profile (LLM_POOLS provider, or taken from the host)" }),
    provider_name: Type.String({ description: 'gen_ai.provider.name of its spans and metrics' }),
    supports: Type.Object({
      params: Type.Array(Type.String(), { description: 'request parameters sent where a role sets them' }),
      response_format: Type.Array(Type.String()),
      stream_usage: Type.Boolean(),
      tool_choice: Type.Boolean(),
      reasoning: Type.Array(Type.String(), { description: 'where reasoning text arrives' }),
    }),
    context: Type.Object({
      tokens: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'null: neither configured nor detected (MODEL_CONTEXT_TOKENS applies)' }),
      source: Type.Union([Type.Literal('configured'), Type.Literal('detected'), Type.Literal('unknown')]),
      detected_from: Type.Optional(Type.String({ description: 'max_model_len (vLLM /v1/models), num_ctx or model_info (Ollama /api/show)' })),
      detected_at: Type.Optional(Type.String()),
    }),
    reported_by: Type.String({ description: 'the service that wrote it' }),
    reported_at: Type.String(),
  },
  { title: 'StoredPoolProfile' },
);
export type StoredPoolProfile = Static<typeof StoredPoolProfile>;

/**
 * Bucket `llmSemaphore`, key `runner.<pool>.<instance>`: how many jobs one runtime replica runs at
 * once (RUNTIME_CONCURRENCY) for the pool its worker calls go to. Each replica rewrites its record
 * every half minute and deletes it when it stops; one past `expires_at` is a replica that died.
 * `hermes llm status` sums the live ones to say when the pool's cap cannot be reached.
 */
export const StoredRunnerCapacity = Type.Object(
  {
    v: Type.Literal(1),
    pool: Type.String({ minLength: 1 }),
    instance: Type.String({ minLength: 1, description: 'the replica (host, pid and a random part)' }),
    concurrency: Type.Integer({ minimum: 1, description: "the replica's RUNTIME_CONCURRENCY" }),
    reported_at: Type.String(),
    expires_at: Type.String({ description: 'reported_at plus three report intervals' }),
  },
  { title: 'StoredRunnerCapacity' },
);
export type StoredRunnerCapacity = Static<typeof StoredRunnerCapacity>;

/** The key of a runtime replica's capacity record in the semaphore bucket. */
export const runnerCapacityKey = (pool: string, instance: string) => `runner.${pool}.${instance}`;
