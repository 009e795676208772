export { DistributedSemaphore } from './distributed-semaphore.js';
export type { SemaphoreOptions, AcquireOptions, Permit, Reservation } from './distributed-semaphore.js';
export { readPoolStatus, setPoolCapacity } from './pool-admin.js';
export type { PoolStatus } from './pool-admin.js';
export { SemaphoreError, PermitTimeoutError, PermitAbortedError } from './errors.js';
export { AGING_MS, DEFAULT_SERVICE_POLICY, FAILURES_BEFORE_BACKOFF, MAX_FAILURE_BACKOFF_MS, backgroundShare } from './pool-state.js';
export type { PoolSettings, ReleaseReport, ServicePolicy } from './pool-state.js';
export type { SemaphoreClock, ClockTimer } from './server-clock.js';
