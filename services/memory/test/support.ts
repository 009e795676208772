import { expect } from 'vitest';
import { RemoteError, type Bus } from '@hermes/bus';
import { openLlmClient } from '@hermes/llm';
import { eventually as pollUntil } from '@hermes/testkit';
import type { LongTermTuning } from '../src/longterm/longterm-memory.js';
import type { MemoryTuning } from '../src/memory-service.js';
import { memoryConfig, memoryTuning } from '../src/memory-host.js';

/** The structured error a request was answered with; fails the test if it succeeded. */
export async function remoteError(promise: Promise<unknown>): Promise<RemoteError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RemoteError);
  return err as RemoteError;
}

/**
 * Polls `check` until it returns a value, or fails after `timeoutMs`. Errors count as not yet: these
 * checks read through the memory service, which a test may be restarting or cutting off meanwhile.
 */
export function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  return pollUntil(() => check().catch(() => undefined), timeoutMs, what);
}

/** Session tuning of the memory tests: what each file does not set itself. */
export function testTuning(over: Partial<MemoryTuning> & Pick<MemoryTuning, 'keyPrefix'>): MemoryTuning {
  const config = memoryConfig({
    MEMORY_LOCK_LEASE_MS: '5000',
    MEMORY_TOOL_RESULT_MAX_TOKENS: '200',
    MEMORY_SUMMARY_TRIGGER_TOKENS: '100000',
    MEMORY_SUMMARY_KEEP_RECENT: '4',
    MEMORY_SUMMARY_INPUT_TOKENS: '100000',
    MEMORY_WORKING_TTL_MS: '60000',
  });
  return { ...memoryTuning(config), ...over };
}

/** Long-term memory tuning of the tests: a fast debounce, the service's recall defaults. */
export function testLongTermTuning(over: Partial<LongTermTuning> = {}): LongTermTuning {
  return {
    extractMinConfidence: 0.7,
    extractDebounceMs: 50,
    recall: { minScore: 0.35, halfLifeDays: 30, recencyWeight: 0.3 },
    archiveAfterMs: 86_400_000,
    archiveSweepMs: 3_600_000,
    retryMaxMs: 1000,
    ...over,
  };
}

/** The LLM client as the service opens it (its settings, through the semaphore on `bus`), against `baseUrl`. */
export async function testLlmClient(bus: Bus, baseUrl: string) {
  const config = memoryConfig({ OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'k', HERMES_MODEL_WORKER: 'gpt-4o-mini', LLM_MAX_RETRIES: '0' });
  return openLlmClient(config, await bus.kv('llmSemaphore'));
}
