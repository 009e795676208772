import type { Redis } from 'ioredis';
import { purgeUserRecordings, type Bus, type WorkConsumer } from '@hermes/bus';
import type { LlmClient } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import { SessionNames } from '../owner-scope.js';
import { SessionDirectory } from '../session-directory.js';
import type { SessionStore } from '../session-store.js';
import { Archival } from './archival.js';
import { ExtractionScheduler } from './extraction-scheduler.js';
import { Extractor } from './extractor.js';
import { Forgetting } from './forgetting.js';
import { serveLongTermHandlers, startLongTermConsumers } from './longterm-handlers.js';
import { longTermKeys } from './longterm-keys.js';
import { MemoryWriter } from './memory-writer.js';
import { Recall, type RecallTuning } from './recall.js';
import type { Embedder } from './embedder.js';
import type { VectorStore } from './vector-store.js';

/** Tunables of long-term memory (MEMORY_EXTRACT_*, MEMORY_RECALL_*, MEMORY_ARCHIVE_* settings). */
export interface LongTermTuning {
  extractMinConfidence: number;
  extractDebounceMs: number;
  /** Extraction jobs this replica runs at once (MEMORY_EXTRACT_CONCURRENCY; default 128). */
  extractConcurrency?: number;
  recall: RecallTuning;
  archiveAfterMs: number;
  archiveSweepMs: number;
  /** Cap of the back-off between retries of a failed write or extraction. */
  retryMaxMs?: number;
}

export interface LongTermMemoryOptions {
  bus: Bus;
  redis: Redis;
  logger: Logger;
  llm: Pick<LlmClient, 'chat'>;
  sessions: SessionStore;
  /** Initialised by the caller, who also closes it. */
  store: VectorStore;
  embedder: Pick<Embedder, 'embed'>;
  keyPrefix: string;
  tuning: LongTermTuning;
}

/**
 * Long-term memory inside the memory service: extraction after appends, queued writes, recall,
 * forgetting and archival. The memory-jobs stream and its two consumers must exist (hostService
 * declares them from main).
 */
export function startLongTermMemory(o: LongTermMemoryOptions) {
  const { bus, redis, logger, store, embedder, tuning: t } = o;
  const keys = longTermKeys(o.keyPrefix);
  const recall = new Recall({ store, embedder, logger, ...t.recall });
  const archival = new Archival({ store, embedder, redis, keys, logger, archiveAfterMs: t.archiveAfterMs, sweepEveryMs: t.archiveSweepMs });
  const forgetting = new Forgetting({
    store,
    sessions: new SessionDirectory({ redis, keyPrefix: o.keyPrefix }),
    redis,
    keys,
    logger,
    purgeRecordings: (owner) => purgeUserRecordings(bus, owner),
  });
  const extractor = new Extractor({
    bus,
    redis,
    keys,
    sessions: o.sessions,
    store,
    embedder,
    llm: o.llm,
    logger,
    names: new SessionNames({ redis, keyPrefix: o.keyPrefix }),
    minConfidence: t.extractMinConfidence,
  });
  const writer = new MemoryWriter({ store, embedder, redis, keys, logger });
  const scheduler = new ExtractionScheduler({ bus, logger, debounceMs: t.extractDebounceMs });
  const subs = serveLongTermHandlers({ bus, store, recall, forgetting, archival });
  const consumers: Promise<WorkConsumer[]> = startLongTermConsumers({
    bus,
    logger,
    extractor,
    writer,
    ...(t.retryMaxMs !== undefined ? { retryMaxMs: t.retryMaxMs } : {}),
    ...(t.extractConcurrency !== undefined ? { extractConcurrency: t.extractConcurrency } : {}),
  });
  const ready = consumers.then(() => undefined);
  ready.catch((err: unknown) => logger.error({ err: (err as Error).message }, 'long-term memory consumers did not start'));
  archival.start();
  return {
    /** Resolves once the work consumers run (rejects if their stream or consumers are missing). */
    ready,
    archival,
    /** Called after every append: schedules extraction of the session's new messages. */
    onAppended: (req: { user_id: string; team?: string; session_id: string }) => scheduler.schedule(req, req.session_id),
    async stop(timeoutMs = 5000): Promise<void> {
      await Promise.all(subs.map((sub) => sub.drain()));
      await scheduler.stop();
      await archival.stop();
      const running = await consumers.catch(() => [] as WorkConsumer[]);
      await Promise.all(running.map((c) => c.stop(timeoutMs)));
    },
  };
}

export type LongTermMemory = ReturnType<typeof startLongTermMemory>;
