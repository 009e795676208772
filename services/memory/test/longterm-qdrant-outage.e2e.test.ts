import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts } from '@hermes/contracts';
import { Bus, request } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, freePort, startNatsServer, startRedisServer } from '@hermes/testkit';
import { HashingEmbedder } from '../src/longterm/hashing-embedder.js';
import { QdrantVectorStore } from '../src/longterm/qdrant-vector-store.js';
import { startMemoryService } from '../src/memory-service.js';
import { closeRedis, connectRedis } from '../src/redis-client.js';
import { eventually, remoteError, testLongTermTuning, testTuning } from './support.js';
import { natsHandles } from '@hermes/bus/internal';

const logger = createLogger({ service: 'test', level: 'silent' });

/** Qdrant down (QDRANT_URL names a port nobody listens on): writes wait in the queue, requests say unavailable. */
describe('long-term memory with Qdrant unreachable', () => {
  let redis: Redis;
  let service: Bus;
  let memory: ReturnType<typeof startMemoryService>;

  beforeAll(async () => {
    const [nats, redisServer] = await Promise.all([startNatsServer({ jetstream: true }), startRedisServer()]);
    redis = await connectRedis({ url: redisServer.url, logger, commandTimeoutMs: 2000 });
    service = await Bus.connect({ servers: nats.url, name: 'memory-test', logger });
    await service.ensureStreams(['memoryJobs']);
    await service.ensureConsumers(['memoryExtract', 'memoryWrites']);
    const embedder = new HashingEmbedder();
    const store = new QdrantVectorStore({ url: `http://127.0.0.1:${await freePort()}`, dimensions: embedder.dimensions, timeoutMs: 1000 });
    memory = startMemoryService({
      bus: service,
      redis,
      llm: { chat: () => Promise.reject(new Error('no model in this test')) },
      logger,
      tuning: testTuning({ keyPrefix: 'hermes-q:' }),
      longTerm: { store, embedder, tuning: testLongTermTuning({ retryMaxMs: 500 }) },
    });
    await memory.longTerm!.ready;
  });

  afterAll(async () => {
    await memory?.stop();
    await service?.drain();
    if (redis) await closeRedis(redis);
    await cleanupAll();
  });

  it('keeps a write queued and retrying instead of losing it, and answers recall and list with a retryable unavailable', async () => {
    await service.publish(contracts.memoryWrite, {
      memory_id: 'm_queued',
      user_id: 'frank',
      type: 'fact',
      content: 'The user is on call this week.',
      confidence: 0.9,
      created_at: new Date().toISOString(),
    });
    const writes = () => natsHandles(service).jsm.consumers.info(service.subjects.streams.memoryJobs, service.subjects.consumers.memoryWrites);
    const info = await eventually(async () => {
      const i = await writes();
      return i.num_redelivered > 0 && i.delivered.stream_seq >= 1 ? i : undefined;
    }, 'the write to be retried');
    // Still held by the queue (pending redelivery), not acked away.
    expect(info.num_ack_pending + info.num_pending).toBe(1);
    const recall = await remoteError(request(service, contracts.memoryRecall, { user_id: 'frank', query: 'who is on call this week?' }));
    expect(recall.wire).toMatchObject({ code: 'unavailable', retryable: true, details: { operation: 'search' } });
    expect((await remoteError(request(service, contracts.memoryList, { user_id: 'frank' }))).wire).toMatchObject({ code: 'unavailable', retryable: true });
  });
});
