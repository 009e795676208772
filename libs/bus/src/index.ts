export { Bus } from './bus.js';
export type { BusOptions, PublishOptions } from './bus.js';
export { request, serve } from './request-reply.js';
export type { RequestContext } from './request-reply.js';
export { startWorkConsumer, consumeContract } from './work-consumer.js';
export type { HandlerOutcome, WorkConsumer, WorkConsumerOptions, RawHandler, DeadLetterHook } from './work-consumer.js';
export { deadLetter, isDependencyOutage, isRetryable, isUnansweredRequest, errorAsWire, republishDeadLetter, REPLAY_OF_HEADER } from './dead-letter.js';
export { retryThroughOutage } from './outage-retry.js';
export { ConsumerProgress, DEFAULT_LIVENESS_ACK_WAITS } from './consumer-progress.js';
export type { StalledConsumer } from './consumer-progress.js';
export { followSubject } from './event-follower.js';
export { replaySubject, lastSeqOf } from './subject-replay.js';
export type { FollowedMessage } from './event-follower.js';
export {
  streamConfig,
  consumerConfig,
  bucketConfig,
  STREAM_MAX_CONSUMERS,
  DEFAULT_MAX_DELIVERIES,
  MEMORY_EXTRACT_MAX_DELIVERIES,
  MEMORY_WRITE_MAX_DELIVERIES,
  maxDeliverBackstop,
} from './stream-specs.js';
export type { StreamKey, ConsumerKey, BucketKey, StreamTuning } from './stream-specs.js';
export { isCasConflict, casUpdate, CasRetriesExhaustedError } from './kv-cas.js';
export type { CasUpdateOptions, CasOutcome } from './kv-cas.js';
export { BusError, RemoteError, ReplyError, OutgoingPayloadError, InvalidMessageError, PayloadLimitError, PayloadEncodingError } from './bus-errors.js';
export { encodeJson, decodeJson } from './codec.js';
export type { Decoded } from './codec.js';
export { observeConsumers } from './bus-metrics.js';
export { submitTask, followTaskEvents, lastTaskEvent } from './task-client.js';
export { microServiceReplies, microServiceStats, microServiceTotals } from './micro-services.js';
export type { SubmitOptions, Submitted, TaskEventWithSeq } from './task-client.js';
export { appendRecording, readRecording, purgeUserRecordings } from './recordings.js';
export { QueueGauge, admissionOf, admissionBounds, admissionSettings, QUEUE_SAMPLE_MS, QUEUE_RATE_WINDOW_MS } from './queue-gauge.js';
export type { QueueEstimate, Admission, AdmissionBounds } from './queue-gauge.js';
