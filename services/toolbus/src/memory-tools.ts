import { createHash } from 'node:crypto';
import { contracts, ownerFields, provenanceLabel } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import { ToolRefusedError } from './toolbus-errors.js';
import type { BuiltinTool } from './tool-types.js';

/**
 * `remember` and `recall`: the model's own handle on the user's long-term memory, which the
 * memory service owns. The user is always the caller's (from the call context, never from the
 * arguments), so a model cannot reach another user's memories whatever it is told.
 */
export function memoryTools(bus: Bus, o: { recallTimeoutMs?: number } = {}): BuiltinTool[] {
  const remember: BuiltinTool = {
    spec: {
      name: 'remember',
      description:
        'Store something about the user for later conversations: a preference, a fact, progress on a long task, or a correction of something remembered before. Use it only for what the user would expect you to remember.',
      parameters: {
        type: 'object',
        properties: {
          content: { type: 'string', minLength: 1, maxLength: 2000, description: 'What to remember, as one self-contained sentence.' },
          type: { type: 'string', enum: ['preference', 'fact', 'task_progress', 'correction'], description: 'What kind of memory it is (default fact).' },
        },
        required: ['content'],
        additionalProperties: false,
      },
      timeout_ms: 5000,
    },
    async run(args, ctx) {
      // Derived from the call's idempotency key: a replayed or retried call rewrites the same memory.
      const memoryId = `m_${createHash('sha256').update(ctx.idempotencyKey).digest('hex').slice(0, 32)}`;
      try {
        await bus.publish(
          contracts.memoryWrite,
          {
            memory_id: memoryId,
            // The owner's memories: a user id names a user only inside its team.
            ...ownerFields(ctx),
            type: (args.type as 'preference' | 'fact' | 'task_progress' | 'correction' | undefined) ?? 'fact',
            content: String(args.content),
            confidence: 1,
            created_at: new Date().toISOString(),
            source: { task_id: ctx.task_id },
            // Decided by the toolbus from the task's earlier results (ResultTrust), never by the model.
            provenance: ctx.provenance ?? { kind: 'model', task_id: ctx.task_id },
          },
          { msgId: memoryId },
        );
      } catch (err) {
        throw new ToolRefusedError(`long-term memory is not available right now (${(err as Error).message}); carry on without storing it`, { cause: err });
      }
      // Queued: the memory service embeds and stores it (retrying through store outages).
      return { remembered: true, memory_id: memoryId };
    },
  };

  const recall: BuiltinTool = {
    spec: {
      name: 'recall',
      description:
        'Search what is remembered about the user (preferences, facts, earlier progress). Returns the closest memories with their dates and confidence.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 2000, description: 'What to look for, in plain words.' },
          limit: { type: 'integer', minimum: 1, maximum: 20, description: 'At most this many memories (default 5).' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      timeout_ms: 5000,
    },
    async run(args, ctx) {
      const reply = await request(
        bus,
        contracts.memoryRecall,
        { ...ownerFields(ctx), query: String(args.query), k: typeof args.limit === 'number' ? args.limit : 5 },
        { timeoutMs: o.recallTimeoutMs ?? 4000 },
      ).catch((err: unknown) => {
        throw new ToolRefusedError(`long-term memory is not available right now (${(err as Error).message}); answer without it and say so`, { cause: err });
      });
      return {
        memories: reply.memories.map((m) => ({
          content: m.memory.content,
          type: m.memory.type,
          remembered_at: m.memory.created_at,
          confidence: m.memory.confidence,
          // Where it came from: a memory planted by a tool result says so (`tool_result:<tool>`), so the model can weigh it.
          provenance: provenanceLabel(m.memory.provenance),
          score: round(m.score),
        })),
      };
    },
  };

  return [remember, recall];
}

const round = (n: number) => Math.round(n * 1000) / 1000;
