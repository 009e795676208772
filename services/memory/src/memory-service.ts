import type { Redis } from 'ioredis';
import type { Bus } from '@hermes/bus';
import type { LlmClient } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import { serveContextHandlers } from './context-handlers.js';
import { startLongTermMemory, type LongTermTuning } from './longterm/longterm-memory.js';
import type { Embedder } from './longterm/embedder.js';
import type { VectorStore } from './longterm/vector-store.js';
import { SessionDirectory } from './session-directory.js';
import { serveSessionDirectoryHandlers, serveSessionHandlers } from './session-handlers.js';
import { SessionLock } from './session-lock.js';
import { SessionReleaseWatch } from './session-release-watch.js';
import { SessionStore } from './session-store.js';
import { Summarizer } from './summarizer.js';
import { SummaryQueue } from './summary-queue.js';
import { SummaryStore } from './summary-store.js';
import type { EncodingName } from '@hermes/llm';
import { serveWorkingHandlers } from './working-handlers.js';
import { WorkingMemory } from './working-memory.js';
import { SessionNames } from './owner-scope.js';

/** Tunables of the memory service (MEMORY_* settings). */
export interface MemoryTuning {
  keyPrefix: string;
  encoding: EncodingName;
  lockLeaseMs: number;
  toolResultMaxTokens: number;
  summaryTriggerTokens: number;
  summaryKeepRecent: number;
  summaryInputTokens: number;
  workingTtlMs: number;
  summaryDebounceMs?: number;
}

/** Long-term memory's parts: the store (initialised; closed by the caller) and embedder, and its tunables. */
export interface LongTermParts {
  store: VectorStore;
  embedder: Pick<Embedder, 'embed'>;
  tuning: LongTermTuning;
}

/**
 * Serves every memory subject on `bus` (the long-term ones when `longTerm` is given); `stop`
 * drains them and waits for a running summary job.
 */
export function startMemoryService(o: {
  bus: Bus;
  redis: Redis;
  llm: Pick<LlmClient, 'chat'>;
  logger: Logger;
  tuning: MemoryTuning;
  longTerm?: LongTermParts;
}) {
  const { bus, redis, tuning: t } = o;
  const store = new SessionStore({ redis, keyPrefix: t.keyPrefix, encoding: t.encoding });
  const summaries = new SummaryStore({ redis, keyPrefix: t.keyPrefix });
  const summarizer = new Summarizer({
    redis,
    store,
    summaries,
    llm: o.llm,
    keepRecent: t.summaryKeepRecent,
    inputTokens: t.summaryInputTokens,
    toolResultMaxTokens: t.toolResultMaxTokens,
  });
  const queue = new SummaryQueue({
    store,
    summaries,
    summarizer,
    logger: o.logger,
    triggerTokens: t.summaryTriggerTokens,
    ...(t.summaryDebounceMs !== undefined ? { debounceMs: t.summaryDebounceMs } : {}),
  });
  const longTerm = o.longTerm
    ? startLongTermMemory({ bus, redis, logger: o.logger, llm: o.llm, sessions: store, keyPrefix: t.keyPrefix, ...o.longTerm })
    : undefined;
  const released = SessionReleaseWatch.open(redis, o.logger);
  const locks = new SessionLock({ redis, keyPrefix: t.keyPrefix, defaultLeaseMs: t.lockLeaseMs, released });
  const names = new SessionNames({ redis, keyPrefix: t.keyPrefix });
  const subs = [
    ...serveSessionHandlers({
      bus,
      store,
      names,
      onAppended: (req, stored) => {
        queue.consider(stored.user, stored.session);
        longTerm?.onAppended(req);
      },
    }),
    ...serveSessionDirectoryHandlers({ bus, directory: new SessionDirectory({ redis, keyPrefix: t.keyPrefix }), names }),
    ...serveContextHandlers({ bus, store, summaries, summarizer, queue, locks, names, toolResultMaxTokens: t.toolResultMaxTokens }),
    ...serveWorkingHandlers({ bus, working: new WorkingMemory({ redis, keyPrefix: t.keyPrefix, ttlMs: t.workingTtlMs }) }),
  ];
  return {
    queue,
    longTerm,
    async stop(): Promise<void> {
      await Promise.all(subs.map((sub) => sub.drain()));
      await queue.stop();
      await longTerm?.stop();
      released.close();
    },
  };
}
