import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, type ConsumerConfig, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import type { Subjects } from '@hermes/contracts';

export type StreamKey = 'taskSubmit' | 'taskEvents' | 'runtimeJobs' | 'runtimeResults' | 'toolAudit' | 'memoryJobs';
export type ConsumerKey = 'dispatcherIntake' | 'dispatcherResults' | 'runtimeJobs' | 'memoryExtract' | 'memoryWrites';
/** The KV buckets of the catalog (`subjects.buckets`). */
export type BucketKey = keyof Subjects['buckets'];

export interface StreamTuning {
  /** How long JetStream remembers a submission's Nats-Msg-Id to drop a duplicate publish. */
  duplicateWindowMs?: number;
  /** How long task events stay replayable (SSE, `hermes run`). */
  eventsMaxAgeMs?: number;
  /** How long tool audit records are kept. */
  auditMaxAgeMs?: number;
  /** How long a runtime may hold a job without a heartbeat before it is redelivered. */
  runtimeAckWaitMs?: number;
  /** Longest a cached tool result is kept (the cache bucket's TTL). */
  toolCacheMaxTtlMs?: number;
}

const DAY = 86_400_000;

/** The JetStream streams Hermes declares. Only features of nats-server 2.9 are used. */
export function streamConfig(s: Subjects, key: StreamKey, t: StreamTuning = {}): Partial<StreamConfig> & { name: string; subjects: string[] } {
  // Only the submit stream's window is tunable: every service declares the shared streams, and
  // they must all compute the same config or each start would undo the others'.
  const base = { storage: StorageType.File, num_replicas: 1, duplicate_window: nanos(120_000), discard: DiscardPolicy.Old };
  switch (key) {
    case 'taskSubmit':
      return {
        ...base,
        name: s.streams.taskSubmit,
        subjects: [s.taskSubmit],
        retention: RetentionPolicy.Workqueue,
        max_age: nanos(7 * DAY),
        duplicate_window: nanos(t.duplicateWindowMs ?? 120_000),
      };
    case 'taskEvents':
      return {
        ...base,
        name: s.streams.taskEvents,
        subjects: [s.taskEventsAll, s.taskRejected],
        retention: RetentionPolicy.Limits,
        max_age: nanos(t.eventsMaxAgeMs ?? 7 * DAY),
      };
    case 'runtimeJobs':
      return { ...base, name: s.streams.runtimeJobs, subjects: [s.runtimeJobs], retention: RetentionPolicy.Workqueue, max_age: nanos(7 * DAY) };
    case 'toolAudit':
      return {
        ...base,
        name: s.streams.toolAudit,
        subjects: [s.toolAuditAll],
        retention: RetentionPolicy.Limits,
        max_age: nanos(t.auditMaxAgeMs ?? 30 * DAY),
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
  }
}

/**
 * The KV buckets Hermes opens, one history entry per key. The first process to open a bucket
 * creates it and later opens keep that config, so every opener must compute the same one: a TTL
 * given by one and not another would depend on start order.
 */
export function bucketConfig(s: Subjects, key: BucketKey, t: StreamTuning = {}): { name: string; history: 1; ttl?: number } {
  const name = s.buckets[key];
  switch (key) {
    // A checkpoint outlives any job (jobs are redelivered for at most the stream's 7 days).
    case 'checkpoints':
      return { name, history: 1, ttl: 7 * DAY };
    case 'toolCache':
      return { name, history: 1, ttl: t.toolCacheMaxTtlMs ?? 3_600_000 };
    case 'tasks':
    case 'taskIndex':
    case 'llmSemaphore':
    case 'toolCalls':
    case 'toolApprovals':
      return { name, history: 1 };
  }
}

/** Durable pull consumers; max_deliver is unlimited because handlers count attempts themselves. */
export function consumerConfig(s: Subjects, key: ConsumerKey, t: StreamTuning = {}): { stream: string; config: Partial<ConsumerConfig> & { durable_name: string } } {
  const common = { ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, max_deliver: -1 };
  switch (key) {
    case 'dispatcherIntake':
      return { stream: s.streams.taskSubmit, config: { ...common, durable_name: s.consumers.dispatcherIntake, ack_wait: nanos(30_000), max_ack_pending: 1000 } };
    case 'dispatcherResults':
      return { stream: s.streams.runtimeResults, config: { ...common, durable_name: s.consumers.dispatcherResults, ack_wait: nanos(30_000), max_ack_pending: 1000 } };
    case 'runtimeJobs':
      return {
        stream: s.streams.runtimeJobs,
        config: { ...common, durable_name: s.consumers.runtimeJobs, ack_wait: nanos(t.runtimeAckWaitMs ?? 30_000), max_ack_pending: 10_000 },
      };
    // One stream, two work-queue consumers on disjoint subjects (a work queue allows that).
    case 'memoryExtract':
      return {
        stream: s.streams.memoryJobs,
        config: { ...common, durable_name: s.consumers.memoryExtract, filter_subject: s.memoryExtract, ack_wait: nanos(60_000), max_ack_pending: 1000 },
      };
    case 'memoryWrites':
      return {
        stream: s.streams.memoryJobs,
        config: { ...common, durable_name: s.consumers.memoryWrites, filter_subject: s.memoryWrite, ack_wait: nanos(30_000), max_ack_pending: 10_000 },
      };
  }
}
