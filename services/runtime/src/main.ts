import { Type } from '@sinclair/typebox';
import { contracts } from '@hermes/contracts';
import { consumeContract, hostService } from '@hermes/bus';
import { llmSettings, openLlmClient } from '@hermes/llm';
import { JobRunner } from './job-runner.js';

await hostService({
  service: 'runtime',
  settings: Type.Object({
    ...llmSettings,
    RUNTIME_CONCURRENCY: Type.Integer({ default: 8, minimum: 1, description: 'jobs one replica runs at once' }),
    RUNTIME_ACK_WAIT_MS: Type.Integer({ default: 30_000, minimum: 1000, description: 'a job held this long without a heartbeat is redelivered' }),
    RUNTIME_MAX_ATTEMPTS: Type.Integer({ default: 3, minimum: 1, description: 'deliveries of one job before it fails' }),
  }),
  streams: ['runtimeJobs', 'runtimeResults', 'taskEvents'],
  consumers: ['runtimeJobs'],
  tuning: (c) => ({ runtimeAckWaitMs: c.RUNTIME_ACK_WAIT_MS }),
  start: async ({ bus, config, logger }) => {
    const { llm, close } = await openLlmClient(config, await bus.kv(bus.subjects.buckets.llmSemaphore));
    const runner = new JobRunner({ bus, llm, logger, maxAttempts: config.RUNTIME_MAX_ATTEMPTS });
    const consumer = await consumeContract(
      bus,
      contracts.runtimeJobs,
      {
        stream: bus.subjects.streams.runtimeJobs,
        durable: bus.subjects.consumers.runtimeJobs,
        concurrency: config.RUNTIME_CONCURRENCY,
        heartbeatMs: Math.floor(config.RUNTIME_ACK_WAIT_MS / 3),
      },
      (job, msg) => runner.run(job, msg),
    );
    logger.info({ models: { worker: llm.modelFor('worker'), planner: llm.modelFor('planner') }, pool: llm.poolFor('worker'), base_url: config.OPENAI_BASE_URL }, 'runtime consuming jobs');
    return {
      stop: async (timeoutMs) => {
        await consumer.stop(timeoutMs);
        await close();
      },
    };
  },
});
