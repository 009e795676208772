import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { Bus } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { startNatsServer, startRedisServer, startScriptedLlm, type Responder, type ScriptedLlm } from '@hermes/testkit';
import { EmbeddedVectorStore } from '../src/longterm/embedded-vector-store.js';
import { HashingEmbedder } from '../src/longterm/hashing-embedder.js';
import type { LongTermTuning } from '../src/longterm/longterm-memory.js';
import { startMemoryService } from '../src/memory-service.js';
import { closeRedis, connectRedis } from '../src/redis-client.js';
import { testLlmClient, testLongTermTuning, testTuning } from './support.js';

const logger = createLogger({ service: 'test', level: 'silent' });

/**
 * A memory service with long-term memory on real parts: nats-server (JetStream), redis-server,
 * the scripted model as the judge (`responder`), the embedded store in a temporary directory and
 * the hashing embedder; `client` is a second connection asking as the runtime would.
 */
export async function startLongTermStack(o: { responder: Responder; keyPrefix: string; tuning?: Partial<LongTermTuning> }) {
  const [nats, redisServer] = await Promise.all([startNatsServer({ jetstream: true }), startRedisServer()]);
  const llm: ScriptedLlm = await startScriptedLlm({ responder: o.responder });
  const redis: Redis = await connectRedis({ url: redisServer.url, logger, commandTimeoutMs: 2000 });
  const service = await Bus.connect({ servers: nats.url, name: 'memory-test', logger });
  const client = await Bus.connect({ servers: nats.url, name: 'runtime-test', logger });
  await service.ensureStreams(['memoryJobs']);
  await service.ensureConsumers(['memoryExtract', 'memoryWrites']);
  const opened = await testLlmClient(service, llm.baseUrl);
  const dataDir = await mkdtemp(join(tmpdir(), 'hermes-ltm-'));
  const embedder = new HashingEmbedder();
  const store = new EmbeddedVectorStore({ dataDir, dimensions: embedder.dimensions, durable: false });
  await store.init();
  const memory = startMemoryService({
    bus: service,
    redis,
    llm: opened.llm,
    logger,
    tuning: testTuning({ keyPrefix: o.keyPrefix }),
    longTerm: { store, embedder, tuning: testLongTermTuning(o.tuning) },
  });
  await memory.longTerm!.ready;
  return {
    redis,
    service,
    client,
    llm,
    store,
    dataDir,
    memory,
    async close(): Promise<void> {
      await memory.stop();
      await store.close();
      await opened.close();
      await client.drain();
      await service.drain();
      await closeRedis(redis);
      await llm.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
