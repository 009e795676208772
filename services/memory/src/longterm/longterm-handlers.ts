import { contracts } from '@hermes/contracts';
import { consumeContract, MEMORY_EXTRACT_MAX_DELIVERIES, MEMORY_WRITE_MAX_DELIVERIES, serve, type Bus, type WorkConsumer } from '@hermes/bus';
import type { Logger } from '@hermes/telemetry';
import { answer } from '../reply-errors.js';
import type { Archival } from './archival.js';
import type { Extractor } from './extractor.js';
import type { Forgetting } from './forgetting.js';
import { storeCall } from './longterm-errors.js';
import type { MemoryWriter } from './memory-writer.js';
import { toWireMemory, type Recall } from './recall.js';
import type { VectorStore } from './vector-store.js';
import { scopeOf } from '../owner-scope.js';

type Subscription = ReturnType<typeof serve>;

/** Answers memoryRecall, memoryList, memoryForget, memoryForgetOne and memoryRestore; each is scoped to the request's user. */
export function serveLongTermHandlers(o: { bus: Bus; store: VectorStore; recall: Recall; forgetting: Forgetting; archival: Archival }): Subscription[] {
  const { bus } = o;
  return [
    serve(bus, contracts.memoryRecall, (req) =>
      answer(bus, () =>
        o.recall.recall(scopeOf(req).user, req.query, {
          ...(req.k !== undefined ? { k: req.k } : {}),
          ...(req.min_score !== undefined ? { minScore: req.min_score } : {}),
        }),
      ),
    ),
    serve(bus, contracts.memoryList, (req) =>
      answer(bus, async () => {
        const records = await storeCall('list', () =>
          o.store.list(scopeOf(req).user, { ...(req.status ? { status: req.status } : {}), limit: req.limit ?? 100 }),
        );
        return { memories: records.map(toWireMemory) };
      }),
    ),
    serve(bus, contracts.memoryForget, (req) =>
      answer(bus, () => {
        const sc = scopeOf(req);
        return o.forgetting.forget(sc.user, sc.owner);
      }),
    ),
    serve(bus, contracts.memoryForgetOne, (req) =>
      answer(bus, async () => {
        // The store is partitioned by owner: another user's id (or the same user id in another team) is simply not there.
        await o.forgetting.forgetOne(scopeOf(req).user, req.memory_id);
        return { memory_id: req.memory_id, forgotten: true as const };
      }),
    ),
    serve(bus, contracts.memoryRestore, (req) =>
      answer(bus, async () => ({ restored: (await o.archival.restore(scopeOf(req).user, req.memory_id)).map(toWireMemory) })),
    ),
  ];
}

/** Exponential back-off for a redelivered job: 0.5 s, 1 s, 2 s, … capped at `maxMs`. */
export function backoffMs(deliveryCount: number, maxMs = 60_000): number {
  return Math.min(maxMs, 500 * 2 ** Math.max(0, deliveryCount - 1));
}

/**
 * The two work-queue consumers of long-term memory. A write that fails (store or embedder down)
 * is nak-ed with back-off and retried until it succeeds or the stream's max age passes; an
 * extraction that fails for a retryable reason is retried a bounded number of times, after which
 * its messages wait behind the session's cursor for the next append.
 */
export async function startLongTermConsumers(o: {
  bus: Bus;
  logger: Logger;
  extractor: Extractor;
  writer: MemoryWriter;
  maxExtractAttempts?: number;
  retryMaxMs?: number;
  extractConcurrency?: number;
}): Promise<WorkConsumer[]> {
  const { bus, logger } = o;
  const retryDelayMs = (n: number) => backoffMs(n, o.retryMaxMs);
  const writes = await consumeContract(
    bus,
    contracts.memoryWrite,
    {
      stream: bus.subjects.streams.memoryJobs,
      durable: bus.subjects.consumers.memoryWrites,
      concurrency: 8,
      retryDelayMs,
      maxDeliveries: MEMORY_WRITE_MAX_DELIVERIES,
    },
    async (job, msg) => {
      const outcome = await o.writer.write(job);
      if (msg.info.deliveryCount > 1 || outcome !== 'written')
        logger.info({ memory_id: job.memory_id, outcome, delivery: msg.info.deliveryCount }, 'memory write');
    },
  );
  // Extraction gives up on its own at its last attempt (the messages wait for the next append):
  // its bound is that attempt, so it is never dead-lettered for a retryable failure.
  const extractAttempts = o.maxExtractAttempts ?? MEMORY_EXTRACT_MAX_DELIVERIES;
  const extractions = await consumeContract(
    bus,
    contracts.memoryExtract,
    {
      stream: bus.subjects.streams.memoryJobs,
      durable: bus.subjects.consumers.memoryExtract,
      // Not a handful: each job waits for a background permit, and the semaphore's background
      // shares decide how many of them call at once. At 4 (before), a backlog drained at 2 calls/s
      // with 2 s model latency whatever share the pool left it (bench overload: 30,000 tasks).
      concurrency: o.extractConcurrency ?? 128,
      retryDelayMs,
      maxDeliveries: extractAttempts,
    },
    async (job, msg) => {
      try {
        await o.extractor.extract(job);
      } catch (err) {
        if (msg.info.deliveryCount < extractAttempts) throw err;
        logger.error({ err: (err as Error).message, session_id: job.session_id }, 'memory extraction gave up; the messages wait for the next append');
      }
    },
  );
  return [writes, extractions];
}
