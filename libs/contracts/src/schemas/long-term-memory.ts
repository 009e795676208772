import { Type, type Static } from '@sinclair/typebox';
import { Id, Timestamp } from './common.js';
import { Team } from '../owner.js';

export const MemoryType = Type.Union([Type.Literal('preference'), Type.Literal('fact'), Type.Literal('task_progress'), Type.Literal('correction')], {
  description: 'what kind of thing was learnt about the user',
});
export type MemoryType = Static<typeof MemoryType>;

/** `archived`: in cold storage (not recalled, restorable); `superseded`: a later memory corrected it. */
export const MemoryStatus = Type.Union([Type.Literal('active'), Type.Literal('superseded'), Type.Literal('deleted'), Type.Literal('archived')]);
export type MemoryStatus = Static<typeof MemoryStatus>;

const MemoryId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' });
const Confidence = Type.Number({ minimum: 0, maximum: 1 });
const MemoryContent = Type.String({ minLength: 1, maxLength: 2000 });

/** Where a memory came from, for whoever reads it later. */
export const MemorySource = Type.Object(
  { session_id: Type.Optional(Id), task_id: Type.Optional(Id), message_ids: Type.Optional(Type.Array(Type.String(), { maxItems: 200 })) },
  { title: 'MemorySource', additionalProperties: false },
);

/**
 * How a memory came to be written, for whoever reads it later (the model in its background block,
 * `hermes memory`, the audit of a planted memory): `conversation`, extracted by the judge from a
 * session's user and assistant turns; `model`, the `remember` tool called in a task where no
 * untrusted tool result had come back before; `tool_result`, `remember` called after results of
 * the untrusted tools in `tools` (such a write waits for a person's approval by default, and
 * `approved_by` names them). Records written before the field existed have none: unknown.
 */
export const MemoryProvenance = Type.Object(
  {
    kind: Type.Union([Type.Literal('conversation'), Type.Literal('model'), Type.Literal('tool_result')]),
    tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
        maxItems: 32,
        description: 'tool_result: the untrusted tools whose results came back earlier in the task',
      }),
    ),
    task_id: Type.Optional(Id),
    session_id: Type.Optional(Id),
    call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'the remember call (its approval and audit name it)' })),
    approved_by: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { title: 'MemoryProvenance', additionalProperties: false },
);
export type MemoryProvenance = Static<typeof MemoryProvenance>;

/** A provenance as one short label: `conversation`, `model`, `tool_result:<tool>[,<tool>…]`; `unknown` for records without one. */
export function provenanceLabel(p: MemoryProvenance | undefined): string {
  if (!p) return 'unknown';
  return p.kind === 'tool_result' ? `tool_result:${(p.tools ?? []).join(',')}` : p.kind;
}

/** One long-term memory of one user, as the memory service shows it. */
export const LongTermMemory = Type.Object(
  {
    memory_id: MemoryId,
    user_id: Id,
    team: Type.Optional(Team),
    type: MemoryType,
    content: Type.String(),
    confidence: Confidence,
    status: MemoryStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
    last_recalled_at: Type.Optional(Timestamp),
    superseded_by: Type.Optional(MemoryId),
    source: Type.Optional(MemorySource),
    provenance: Type.Optional(MemoryProvenance),
  },
  { title: 'LongTermMemory', additionalProperties: false },
);
export type LongTermMemory = Static<typeof LongTermMemory>;

/**
 * Work-queue job: read a session's messages not yet looked at and extract memories from them.
 * It names the session only; the worker reads from its own cursor, so a lost or duplicated job
 * costs nothing.
 */
export const MemoryExtractJob = Type.Object(
  { user_id: Id, team: Type.Optional(Team), session_id: Id, requested_at: Timestamp },
  { title: 'MemoryExtractJob', additionalProperties: false },
);
export type MemoryExtractJob = Static<typeof MemoryExtractJob>;

/** Work-queue job: embed and store one extracted memory (retried with back-off until the store takes it). */
export const MemoryWriteJob = Type.Object(
  {
    memory_id: MemoryId,
    user_id: Id,
    team: Type.Optional(Team),
    type: MemoryType,
    content: MemoryContent,
    confidence: Confidence,
    created_at: Timestamp,
    supersedes: Type.Optional(MemoryId),
    source: Type.Optional(MemorySource),
    provenance: Type.Optional(MemoryProvenance),
  },
  { title: 'MemoryWriteJob', additionalProperties: false },
);
export type MemoryWriteJob = Static<typeof MemoryWriteJob>;

export const MemoryRecallRequest = Type.Object(
  {
    user_id: Id,
    team: Type.Optional(Team),
    query: Type.String({ minLength: 1, maxLength: 20_000 }),
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'at most this many memories (default 5)' })),
    min_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'minimum combined score (default MEMORY_RECALL_MIN_SCORE, 0.35)' })),
  },
  { title: 'MemoryRecallRequest', additionalProperties: false },
);
export type MemoryRecallRequest = Static<typeof MemoryRecallRequest>;

export const RecalledMemory = Type.Object(
  {
    memory: LongTermMemory,
    similarity: Type.Number({ description: 'cosine similarity of query and memory' }),
    score: Type.Number({ description: 'similarity weighted by recency (see docs/memory.md)' }),
  },
  { title: 'RecalledMemory', additionalProperties: false },
);
export type RecalledMemory = Static<typeof RecalledMemory>;

export const MemoryRecallReply = Type.Object(
  {
    memories: Type.Array(RecalledMemory),
    background: Type.String({ description: 'the memories rendered for a prompt, each with its date and confidence; "" when none' }),
  },
  { title: 'MemoryRecallReply', additionalProperties: false },
);
export type MemoryRecallReply = Static<typeof MemoryRecallReply>;

export const MemoryListRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), status: Type.Optional(MemoryStatus), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
  { title: 'MemoryListRequest', additionalProperties: false },
);
export type MemoryListRequest = Static<typeof MemoryListRequest>;

export const MemoryListReply = Type.Object({ memories: Type.Array(LongTermMemory) }, { title: 'MemoryListReply', additionalProperties: false });
export type MemoryListReply = Static<typeof MemoryListReply>;

/** Forget a user: every long-term memory and every session of theirs. */
export const MemoryForgetRequest = Type.Object({ user_id: Id, team: Type.Optional(Team) }, { title: 'MemoryForgetRequest', additionalProperties: false });
export type MemoryForgetRequest = Static<typeof MemoryForgetRequest>;

export const MemoryForgetReply = Type.Object(
  {
    memories_removed: Type.Integer({ minimum: 0 }),
    sessions_removed: Type.Integer({ minimum: 0 }),
    recordings_removed: Type.Optional(Type.Integer({ minimum: 0, description: "entries of the user's task recordings deleted (docs/evals.md)" })),
  },
  { title: 'MemoryForgetReply', additionalProperties: false },
);
export type MemoryForgetReply = Static<typeof MemoryForgetReply>;

/** Forget one memory of a user: its record and vector leave the store; an id the user has no memory under is not_found. */
export const MemoryForgetOneRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), memory_id: MemoryId },
  { title: 'MemoryForgetOneRequest', additionalProperties: false },
);
export type MemoryForgetOneRequest = Static<typeof MemoryForgetOneRequest>;

export const MemoryForgetOneReply = Type.Object(
  { memory_id: MemoryId, forgotten: Type.Literal(true) },
  { title: 'MemoryForgetOneReply', additionalProperties: false },
);
export type MemoryForgetOneReply = Static<typeof MemoryForgetOneReply>;

/** Bring archived memories back into recall: one, or all of the user's. */
export const MemoryRestoreRequest = Type.Object(
  { user_id: Id, team: Type.Optional(Team), memory_id: Type.Optional(MemoryId) },
  { title: 'MemoryRestoreRequest', additionalProperties: false },
);
export type MemoryRestoreRequest = Static<typeof MemoryRestoreRequest>;

export const MemoryRestoreReply = Type.Object({ restored: Type.Array(LongTermMemory) }, { title: 'MemoryRestoreReply', additionalProperties: false });
export type MemoryRestoreReply = Static<typeof MemoryRestoreReply>;
