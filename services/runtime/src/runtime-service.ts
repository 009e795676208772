import { Type } from '@sinclair/typebox';
import { contracts } from '@hermes/contracts';
import { consumeContract, type Bus } from '@hermes/bus';
import { serviceConfig, type HostServiceOptions, type ServiceContext } from '@hermes/service-host';
import { llmSettings, openLlmClient, type LlmClient } from '@hermes/llm';
import type { Logger } from '@hermes/telemetry';
import { CheckpointStore } from './checkpoint-store.js';
import { JobRunner, type JobRunnerOptions } from './job-runner.js';
import { SessionHolds } from './session-hold.js';
import { ToolCaller } from './tool-caller.js';
import { CancellationWatch } from './cancellation-watch.js';
import { reportDeadJob } from './dead-jobs.js';
import { JobSeamFactory } from './job-seams.js';
import { recordingPolicy } from './recording-policy.js';
import { reportRunnerCapacity } from './runner-capacity.js';

const settings = Type.Object({
  ...llmSettings,
  RUNTIME_CONCURRENCY: Type.Integer({ default: 8, minimum: 1, description: 'jobs one replica runs at once' }),
  RUNTIME_ACK_WAIT_MS: Type.Integer({ default: 30_000, minimum: 1000, description: 'a job held this long without a heartbeat is redelivered' }),
  RUNTIME_MAX_ATTEMPTS: Type.Integer({
    default: 3,
    minimum: 1,
    description: 'deliveries of one job within which a retryable failure (LLM 5xx, a timeout) is retried; on the last one it fails the job',
  }),
  RUNTIME_MAX_DELIVERIES: Type.Integer({
    default: 10,
    minimum: 1,
    description:
      "deliveries of one job, counting those a runtime died or stalled during, before it is dead-lettered (max_deliveries_exceeded): the job consumer's bound, in place of HERMES_MAX_DELIVERIES; at least RUNTIME_MAX_ATTEMPTS",
  }),
  RUNTIME_STALL_AFTER_MS: Type.Integer({
    default: 900_000,
    minimum: 1000,
    description:
      '/healthz answers 503 when the runtime has held a job this long and finished none meanwhile; longer than any legitimate job (the dispatcher gives one up after SUBTASK_TIMEOUT_MS)',
  }),
  AGENT_MAX_STEPS: Type.Integer({ default: 10, minimum: 1, maximum: 1000, description: 'LLM calls per job unless the task sets budget.max_steps' }),
  AGENT_MAX_REPEATS: Type.Integer({ default: 2, minimum: 1, description: 'identical tool calls (same tool and arguments) repeated this often stop the loop' }),
  TOOL_CALL_TIMEOUT_MS: Type.Integer({
    default: 120_000,
    minimum: 1000,
    description: 'bound on one toolCall request (tools have their own, shorter timeouts)',
  }),
  TOOL_REPLY_WAIT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    description:
      'a tool call whose reply has not come within this is asked again under its key (a toolbus that died mid-call); TOOL_CALL_TIMEOUT_MS still bounds the whole call',
  }),
  APPROVAL_POLL_MS: Type.Integer({ default: 2000, minimum: 100, description: 'while a call waits for approval, ask the toolbus again this often' }),
  MODEL_CONTEXT_TOKENS: Type.Integer({
    default: 128_000,
    minimum: 1024,
    description: "the worker model's context window; the session context sent to it is fitted into this",
  }),
  RUNTIME_SESSION_BUSY: Type.Union([Type.Literal('wait'), Type.Literal('fail')], {
    default: 'wait',
    description: "when another task's loop holds the session: wait for it (up to RUNTIME_SESSION_WAIT_MS), or fail the job at once with session_busy",
  }),
  RUNTIME_SESSION_WAIT_MS: Type.Integer({
    default: 120_000,
    minimum: 0,
    maximum: 3_600_000,
    description: 'with RUNTIME_SESSION_BUSY=wait: how long a job waits for its busy session before failing with session_busy',
  }),
  RECORDING: Type.Union([Type.Literal('opt-in'), Type.Literal('all')], {
    default: 'opt-in',
    description:
      "which tasks are recorded (every LLM exchange and tool call, on the recordings stream; docs/evals.md): 'opt-in' only tasks with record: true and the users in RECORDING_USERS, 'all' every task without record: false",
  }),
  RECORDING_USERS: Type.String({ default: '', description: 'comma-separated users whose tasks are always recorded: `user` (default team) or `team/user`' }),
  RECORDING_MAX_AGE_MS: Type.Integer({
    default: 14 * 86_400_000,
    minimum: 60_000,
    description: 'how long recordings are kept (the max age of the recordings stream, which the runtime declares)',
  }),
  AGENT_TOOL_ERROR_DETAIL: Type.Union([Type.Literal('full'), Type.Literal('none')], {
    default: 'full',
    description:
      "what the model reads of a failed tool call: 'full' (the error and its issues, so it can correct itself) or 'none' (only that it failed): a deliberately broken build for checking that the eval suite notices, never for production",
  }),
  RUNTIME_STEP_TIMING: Type.Boolean({
    default: false,
    description: 'log how long each phase of every agent step took (debug level), to see where the time goes',
  }),
});

export type RuntimeConfig = ServiceContext<typeof settings.static>['config'];

/** Reads the runtime's settings (with the common ones) from `env`, defaults for the rest, as the service does at start. */
export function runtimeConfig(env: Record<string, string> = {}): RuntimeConfig {
  return serviceConfig({ service: 'runtime', settings }, env);
}

export interface RuntimeParts {
  bus: Bus;
  config: RuntimeConfig;
  logger: Logger;
  llm: LlmClient;
  /** What a test replaces (a slower checkpoint store, no session locks); the service passes none. */
  overrides?: Partial<JobRunnerOptions>;
}

/** The job runner connected as the service connects it; the caller stops `cancellations`. */
export async function assembleRuntime({ bus, config, logger, llm, overrides = {} }: RuntimeParts) {
  const cancellations = new CancellationWatch(bus);
  const tools = new ToolCaller({
    bus,
    requestTimeoutMs: config.TOOL_CALL_TIMEOUT_MS,
    replyWaitMs: config.TOOL_REPLY_WAIT_MS,
    approvalPollMs: config.APPROVAL_POLL_MS,
  });
  const runner = new JobRunner({
    cancellations,
    bus,
    llm,
    logger,
    maxAttempts: config.RUNTIME_MAX_ATTEMPTS,
    outage: { budgetMs: config.HERMES_OUTAGE_BUDGET_MS },
    checkpoints: new CheckpointStore({
      kv: await bus.kv('checkpoints'),
      bucket: bus.subjects.buckets.checkpoints,
      outageBudgetMs: config.HERMES_OUTAGE_BUDGET_MS,
      logger,
      recheckAfterMs: config.RUNTIME_ACK_WAIT_MS / 2,
    }),
    tools,
    seams: new JobSeamFactory({ bus, policy: recordingPolicy({ mode: config.RECORDING, users: config.RECORDING_USERS }) }),
    toolErrorDetail: config.AGENT_TOOL_ERROR_DETAIL,
    limits: { maxSteps: config.AGENT_MAX_STEPS, maxRepeats: config.AGENT_MAX_REPEATS },
    stepTiming: config.RUNTIME_STEP_TIMING,
    contextTokens: config.MODEL_CONTEXT_TOKENS,
    sessions: new SessionHolds({ bus, logger, policy: config.RUNTIME_SESSION_BUSY, waitMs: config.RUNTIME_SESSION_WAIT_MS }),
    ...overrides,
  });
  return { runner, cancellations };
}

/** The runtime: its settings, streams and wiring (main.ts hosts it; tests start the same). */
export const runtimeService: HostServiceOptions<typeof settings> = {
  service: 'runtime',
  settings,
  // The runtime writes recordings, so it declares their stream, with their retention.
  streams: ['recordings'],
  uses: ['runtimeJobs', 'runtimeJobsAhead', 'runtimeResults', 'taskEvents', 'deadLetters'],
  consumers: ['runtimeJobs', 'runtimeJobsAhead'],
  // The runner reports a job failed on its last attempt; the consumer dead-letters one past it.
  tuning: (c) => ({
    runtimeAckWaitMs: c.RUNTIME_ACK_WAIT_MS,
    maxDeliveries: Math.max(c.RUNTIME_MAX_DELIVERIES, c.RUNTIME_MAX_ATTEMPTS),
    recordingsMaxAgeMs: c.RECORDING_MAX_AGE_MS,
  }),
  start: async ({ bus, config, logger }) => {
    const semaphoreKv = await bus.kv('llmSemaphore');
    const { llm, close } = await openLlmClient(config, semaphoreKv, { service: 'runtime' });
    const { runner, cancellations } = await assembleRuntime({ bus, config, logger, llm });
    const consumer = await consumeContract(
      bus,
      contracts.runtimeJobs,
      {
        stream: bus.subjects.streams.runtimeJobs,
        durable: bus.subjects.consumers.runtimeJobs,
        // Same payload, pulled first: the work of tasks already running, high-priority tasks.
        ahead: { stream: bus.subjects.streams.runtimeJobsAhead, durable: bus.subjects.consumers.runtimeJobsAhead },
        concurrency: config.RUNTIME_CONCURRENCY,
        heartbeatMs: Math.floor(config.RUNTIME_ACK_WAIT_MS / 3),
        // An agent job legitimately runs for minutes without an ack: N × ack wait would call that stalled.
        stallAfterMs: config.RUNTIME_STALL_AFTER_MS,
        onDeadLetter: reportDeadJob({ bus, logger }),
      },
      (job, msg) => runner.run(job, msg),
    );
    const capacity = reportRunnerCapacity({ kv: semaphoreKv, pool: llm.poolFor('worker'), concurrency: config.RUNTIME_CONCURRENCY, logger });
    logger.info(
      { models: { worker: llm.modelFor('worker'), planner: llm.modelFor('planner') }, pool: llm.poolFor('worker'), base_url: config.OPENAI_BASE_URL },
      'runtime consuming jobs',
    );
    return {
      stop: async (timeoutMs) => {
        await capacity.stop();
        await consumer.stop(timeoutMs);
        cancellations.stop();
        await close();
      },
    };
  },
};
