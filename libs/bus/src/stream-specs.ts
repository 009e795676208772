import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, type ConsumerConfig, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Subjects } from '@hermes/contracts';

export type StreamKey =
  | 'taskSubmit'
  | 'taskEvents'
  | 'runtimeJobs'
  | 'runtimeJobsAhead'
  | 'runtimeResults'
  | 'toolAudit'
  | 'memoryJobs'
  | 'deadLetters'
  | 'teamEvents'
  | 'recordings';
export type ConsumerKey =
  'dispatcherIntake' | 'dispatcherResults' | 'runtimeJobs' | 'runtimeJobsAhead' | 'memoryExtract' | 'memoryWrites' | 'dispatcherTriggers';
/** The KV buckets of the catalog (`subjects.buckets`). */
export type BucketKey = keyof Subjects['buckets'];

export interface StreamTuning {
  /** How long JetStream remembers a submission's Nats-Msg-Id to drop a duplicate publish. */
  duplicateWindowMs?: number;
  /** How long task events stay replayable (SSE, `hermes run`). */
  eventsMaxAgeMs?: number;
  /** How long tool audit records are kept. */
  auditMaxAgeMs?: number;
  /** How long task recordings are kept (RECORDING_MAX_AGE_MS; the runtime declares the stream). */
  recordingsMaxAgeMs?: number;
  /** How long a runtime may hold a job without a heartbeat before it is redelivered. */
  runtimeAckWaitMs?: number;
  /**
   * Deliveries a work consumer of this connection makes before it dead-letters a message
   * (HERMES_MAX_DELIVERIES; the runtime's RUNTIME_MAX_ATTEMPTS). JetStream's max_deliver is set
   * a little above it, as a backstop.
   */
  maxDeliveries?: number;
  /** How long a work consumer keeps a delivery through a dependency's outage (HERMES_OUTAGE_BUDGET_MS). */
  outageBudgetMs?: number;
  /** Longest a cached tool result is kept (the cache bucket's TTL). */
  toolCacheMaxTtlMs?: number;
  /**
   * Copies of every stream and bucket in a JetStream cluster (HERMES_JS_REPLICAS): 1 keeps each on
   * one node, whose loss stops Hermes until it returns (and whose disk's loss loses its state); 3
   * survives the loss of any one node.
   */
  replicas?: number;
}

const DAY = 86_400_000;

/** How long a delivery is kept through a dependency's outage when the service sets no budget. */
export const DEFAULT_OUTAGE_BUDGET_MS = 300_000;

/** Deliveries before a message is dead-lettered when the service sets no bound. */
export const DEFAULT_MAX_DELIVERIES = 5;

/**
 * The bound of long-term memory writes: a write waits out a vector-store outage, retried with
 * back-off (MEMORY_RETRY_MAX_MS, 1 min by default), for about the week the stream keeps it
 * rather than five tries; a write that can never succeed is still dead-lettered at once.
 */
export const MEMORY_WRITE_MAX_DELIVERIES = 10_080;

/** Memory extraction's attempts; the handler gives up by itself at the last (see longterm-handlers). */
export const MEMORY_EXTRACT_MAX_DELIVERIES = 8;

/**
 * JetStream's own bound, above ours: one delivery past the bound lets the consumer dead-letter a
 * message whose handler crashed its process on the last attempt, and two more let it retry a
 * dead-letter publish that failed. Without it a message no consumer can settle would circle forever.
 */
export const maxDeliverBackstop = (maxDeliveries: number): number => maxDeliveries + 3;

/**
 * How many consumers each stream takes at most, so that no caller can exhaust the server with
 * durables (issue 17: 200 were created). Work queues hold their service's durables and a few
 * spare (a work queue takes only non-overlapping consumers anyway); streams read through ordered
 * consumers allow one per concurrent reader (an SSE client, a `hermes run`, a submitter following
 * a task), with room for many on the task events.
 */
export const STREAM_MAX_CONSUMERS: Readonly<Record<StreamKey, number>> = {
  taskSubmit: 16,
  runtimeJobs: 16,
  runtimeJobsAhead: 16,
  runtimeResults: 16,
  memoryJobs: 16,
  teamEvents: 16,
  taskEvents: 10_000,
  // Read by operators (hermes audit, trace, deadletter) only.
  toolAudit: 64,
  deadLetters: 64,
  // Read by the runtime (one replay source per replayed job) and the CLI.
  recordings: 256,
};

/** The JetStream streams Hermes declares. Only features of nats-server 2.9 are used. */
export function streamConfig(s: Subjects, key: StreamKey, t: StreamTuning = {}): Partial<StreamConfig> & { name: string; subjects: string[] } {
  // Only the submit stream's window is tunable: every service declares the shared streams, and
  // they must all compute the same config or each start would undo the others'.
  const base = {
    storage: StorageType.File,
    num_replicas: t.replicas ?? 1,
    duplicate_window: nanos(120_000),
    discard: DiscardPolicy.Old,
    max_consumers: STREAM_MAX_CONSUMERS[key],
  };
  switch (key) {
    case 'taskSubmit':
      return {
        ...base,
        name: s.streams.taskSubmit,
        // The bare subject is the default team's, as publishers of the release before teams send it.
        subjects: [s.taskSubmitAll, s.taskSubmitLegacy],
        retention: RetentionPolicy.Workqueue,
        max_age: nanos(7 * DAY),
        duplicate_window: nanos(t.duplicateWindowMs ?? 120_000),
      };
    case 'taskEvents':
      return {
        ...base,
        name: s.streams.taskEvents,
        subjects: [s.taskEventsAll, s.taskRejectedAll],
        retention: RetentionPolicy.Limits,
        max_age: nanos(t.eventsMaxAgeMs ?? 7 * DAY),
      };
    case 'runtimeJobs':
      return { ...base, name: s.streams.runtimeJobs, subjects: [s.runtimeJobs], retention: RetentionPolicy.Workqueue, max_age: nanos(7 * DAY) };
    case 'runtimeJobsAhead':
      return { ...base, name: s.streams.runtimeJobsAhead, subjects: [s.runtimeJobsAhead], retention: RetentionPolicy.Workqueue, max_age: nanos(7 * DAY) };
    case 'toolAudit':
      return {
        ...base,
        name: s.streams.toolAudit,
        subjects: [s.toolAuditAll],
        retention: RetentionPolicy.Limits,
        max_age: nanos(t.auditMaxAgeMs ?? 30 * DAY),
      };
    case 'recordings':
      return {
        ...base,
        name: s.streams.recordings,
        subjects: [s.recordingsAll],
        retention: RetentionPolicy.Limits,
        max_age: nanos(t.recordingsMaxAgeMs ?? 14 * DAY),
      };
    case 'runtimeResults':
      return { ...base, name: s.streams.runtimeResults, subjects: [s.runtimeResults], retention: RetentionPolicy.Workqueue, max_age: nanos(7 * DAY) };
    case 'memoryJobs':
      // Extraction and memory writes; 7 days bounds how long a write waits out a vector-store outage.
      return {
        ...base,
        name: s.streams.memoryJobs,
        subjects: [s.memoryExtract, s.memoryWrite],
        retention: RetentionPolicy.Workqueue,
        max_age: nanos(7 * DAY),
      };
    case 'teamEvents':
      // A work queue read by the triggers' one durable: an event is gone once every trigger it matched has its task.
      return {
        ...base,
        name: s.streams.teamEvents,
        subjects: [s.teamEventsAll],
        retention: RetentionPolicy.Workqueue,
        max_age: nanos(7 * DAY),
        max_msg_size: 1024 * 1024,
      };
    case 'deadLetters':
      // Kept for two weeks: long enough to notice, fix the cause and replay, without a janitor.
      // The 2 min de-duplication window drops a record published twice (`<stream>:<seq>`).
      return { ...base, name: s.streams.deadLetters, subjects: [s.deadLetterAll], retention: RetentionPolicy.Limits, max_age: nanos(14 * DAY) };
  }
}

/**
 * The KV buckets Hermes opens, one history entry per key. The first process to open a bucket
 * creates it and later opens keep that config, so every opener must compute the same one: a TTL
 * given by one and not another would depend on start order.
 */
export function bucketConfig(s: Subjects, key: BucketKey, t: StreamTuning = {}): { name: string; history: 1; replicas: number; ttl?: number } {
  const base = { name: s.buckets[key], history: 1 as const, replicas: t.replicas ?? 1 };
  switch (key) {
    // A checkpoint outlives any job (jobs are redelivered for at most the stream's 7 days).
    case 'checkpoints':
      return { ...base, ttl: 7 * DAY };
    case 'toolCache':
      return { ...base, ttl: t.toolCacheMaxTtlMs ?? 3_600_000 };
    case 'tasks':
    case 'taskIndex':
    case 'schedules':
    case 'triggers':
    case 'llmSemaphore':
    case 'toolCalls':
    case 'toolApprovals':
      return base;
  }
}

/**
 * Durable pull consumers. The work consumer counts deliveries and dead-letters a message at its
 * bound; max_deliver is only the server's backstop above that bound (see maxDeliverBackstop).
 */
export function consumerConfig(
  s: Subjects,
  key: ConsumerKey,
  t: StreamTuning = {},
): { stream: string; config: Partial<ConsumerConfig> & { durable_name: string } } {
  const common = {
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    max_deliver: maxDeliverBackstop(t.maxDeliveries ?? DEFAULT_MAX_DELIVERIES),
  };
  switch (key) {
    case 'dispatcherIntake':
      return {
        stream: s.streams.taskSubmit,
        config: { ...common, durable_name: s.consumers.dispatcherIntake, ack_wait: nanos(30_000), max_ack_pending: 1000 },
      };
    case 'dispatcherResults':
      return {
        stream: s.streams.runtimeResults,
        config: { ...common, durable_name: s.consumers.dispatcherResults, ack_wait: nanos(30_000), max_ack_pending: 1000 },
      };
    case 'runtimeJobs':
      return {
        stream: s.streams.runtimeJobs,
        config: { ...common, durable_name: s.consumers.runtimeJobs, ack_wait: nanos(t.runtimeAckWaitMs ?? 30_000), max_ack_pending: 10_000 },
      };
    case 'runtimeJobsAhead':
      return {
        stream: s.streams.runtimeJobsAhead,
        config: { ...common, durable_name: s.consumers.runtimeJobsAhead, ack_wait: nanos(t.runtimeAckWaitMs ?? 30_000), max_ack_pending: 10_000 },
      };
    case 'dispatcherTriggers':
      return {
        stream: s.streams.teamEvents,
        config: { ...common, durable_name: s.consumers.dispatcherTriggers, ack_wait: nanos(30_000), max_ack_pending: 1000 },
      };
    // One stream, two work-queue consumers on disjoint subjects (a work queue allows that).
    case 'memoryExtract':
      return {
        stream: s.streams.memoryJobs,
        config: {
          ...common,
          max_deliver: maxDeliverBackstop(MEMORY_EXTRACT_MAX_DELIVERIES),
          durable_name: s.consumers.memoryExtract,
          filter_subject: s.memoryExtract,
          ack_wait: nanos(60_000),
          max_ack_pending: 1000,
        },
      };
    case 'memoryWrites':
      return {
        stream: s.streams.memoryJobs,
        config: {
          ...common,
          max_deliver: maxDeliverBackstop(MEMORY_WRITE_MAX_DELIVERIES),
          durable_name: s.consumers.memoryWrites,
          filter_subject: s.memoryWrite,
          ack_wait: nanos(30_000),
          max_ack_pending: 10_000,
        },
      };
  }
}
