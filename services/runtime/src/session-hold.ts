import { RemoteError, request, type Bus } from '@hermes/bus';
import { contracts, ownerFields, wireError, type RuntimeJob, type WireError } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';
import { noWaiting, type WaitOut } from './dependency-wait.js';

/** What a job does when another task's loop holds its session (RUNTIME_SESSION_BUSY). */
export type SessionBusyPolicy = 'fail' | 'wait';

// One lock request waits at most this long inside the memory service; a longer wait is several
// requests, so a cancelled job stops waiting within one of them.
const WAIT_SLICE_MS = 5000;

/** The job could not hold its session: it fails with this wire error (session_busy, session_lock_lost). */
export class SessionHoldError extends Error {
  readonly code: string;
  constructor(readonly wire: WireError) {
    super(wire.message);
    this.name = new.target.name;
    this.code = wire.code;
  }
}

export interface SessionHoldsOptions {
  bus: Bus;
  logger: Logger;
  policy: SessionBusyPolicy;
  /** With `wait`: how long a job waits for a busy session before failing with session_busy. */
  waitMs: number;
}

/**
 * One agent loop per session. A job's loop holds its session's lock from before it reads the
 * session's context until after it wrote its final turn, so a second task's turns can neither
 * interleave with it nor be planned on a context that misses them. The subtasks of one task share
 * the lock (its group is the task id): they are parts of one turn and may run in parallel.
 */
export class SessionHolds {
  constructor(private readonly o: SessionHoldsOptions) {}

  /** Takes the job's session lock, waiting per the policy; SessionHoldError(session_busy) when it stays busy. */
  async acquire(job: RuntimeJob, signal?: AbortSignal, waitOut: WaitOut = noWaiting): Promise<SessionHold> {
    const started = Date.now();
    const deadline = started + (this.o.policy === 'wait' ? this.o.waitMs : 0);
    for (;;) {
      const waitMs = Math.max(0, Math.min(WAIT_SLICE_MS, deadline - Date.now()));
      try {
        const lock = await waitOut('memory', () =>
          request(
            this.o.bus,
            contracts.sessionLock,
            { ...ownerFields(job), session_id: job.session_id, group: job.task_id, holder: job.job_id, wait_ms: waitMs },
            { timeoutMs: waitMs + 5000 },
          ),
        );
        return new SessionHold({ bus: this.o.bus, logger: this.o.logger, job, token: lock.token, leaseMs: lock.lease_ms, retake: () => this.retake(job) });
      } catch (err) {
        if (!(err instanceof RemoteError) || err.code !== 'session_busy') throw err;
      }
      signal?.throwIfAborted();
      if (Date.now() >= deadline) {
        // Not retryable here: with `fail` the submitter asked not to queue (a dispatcher retry would
        // queue in disguise), and with `wait` the job already waited its bound.
        const message = `session ${job.session_id} is in use by another task's agent loop (RUNTIME_SESSION_BUSY=${this.o.policy})`;
        const details = { session_id: job.session_id, policy: this.o.policy, waited_ms: Date.now() - started };
        throw new SessionHoldError(wireError('session_busy', message, details, false));
      }
    }
  }

  /** Takes a vanished lock again for a job already holding it, if nobody else took it since (no wait). */
  private async retake(job: RuntimeJob): Promise<{ token: string } | undefined> {
    try {
      return await request(
        this.o.bus,
        contracts.sessionLock,
        { ...ownerFields(job), session_id: job.session_id, group: job.task_id, holder: job.job_id, wait_ms: 0 },
        { timeoutMs: 5000 },
      );
    } catch (err) {
      if (err instanceof RemoteError && err.code === 'session_busy') return undefined;
      throw err;
    }
  }
}

/**
 * A held session lock, renewed in the background until released; `signal` aborts if it is lost.
 * A renewal refused because the lock is gone is not yet a loss: Redis may have restarted without
 * its data, or lapsed it while the memory service was away. The hold then takes the lock again,
 * and only if someone else holds it now is it lost for good.
 */
export class SessionHold {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  /** Why the lock was lost (session_lock_lost), if it was. */
  lost: WireError | undefined;

  private token: string;

  constructor(
    private readonly o: { bus: Bus; logger: Logger; job: RuntimeJob; token: string; leaseMs: number; retake?: () => Promise<{ token: string } | undefined> },
  ) {
    this.token = o.token;
    this.schedule();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops renewing without releasing: the hold lapses within one lease unless the task's next attempt joins it first. */
  abandon(): void {
    this.released = true;
    clearTimeout(this.timer);
  }

  /** Stops renewing and releases the lock; a failed release only leaves it to lapse within a lease. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearTimeout(this.timer);
    const { job } = this.o;
    try {
      await request(this.o.bus, contracts.sessionUnlock, { ...ownerFields(job), session_id: job.session_id, token: this.token });
    } catch (err) {
      this.o.logger.warn({ err, session_id: job.session_id }, 'session lock not released; it lapses within its lease');
    }
  }

  // A third of the lease: two renewals may fail (a memory replica restarting) before it lapses.
  private schedule(): void {
    this.timer = setTimeout(() => void this.renew(), Math.max(100, Math.floor(this.o.leaseMs / 3)));
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    const { job } = this.o;
    try {
      await request(this.o.bus, contracts.sessionRenew, { ...ownerFields(job), session_id: job.session_id, token: this.token, lease_ms: this.o.leaseMs });
    } catch (err) {
      if (!(err instanceof RemoteError && err.code === 'session_lock_lost')) {
        this.o.logger.warn({ err, session_id: job.session_id }, 'session lock renewal failed; retrying');
      } else if (!this.released) {
        let retaken: { token: string } | undefined;
        try {
          retaken = await this.o.retake?.();
        } catch (retakeErr) {
          this.o.logger.warn({ err: retakeErr, session_id: job.session_id }, 'vanished session lock not taken again yet; retrying');
          if (!this.released) this.schedule();
          return;
        }
        if (!retaken) {
          // Another loop owns the session now: this one must stop before it writes anything more.
          this.lost = err.wire;
          this.o.logger.warn({ session_id: job.session_id }, 'session lock lost; stopping the loop');
          this.controller.abort(new SessionHoldError(err.wire));
          return;
        }
        this.token = retaken.token;
        this.o.logger.warn({ session_id: job.session_id }, 'session lock had vanished (nobody else held it); taken again');
        if (this.released) {
          // Released while it was being taken again: let this one go too.
          this.released = false;
          await this.release();
          return;
        }
      }
    }
    if (!this.released) this.schedule();
  }
}

/** The signal a held loop runs with: aborted by a cancellation or by losing the session's lock. */
export function loopSignal(cancel: AbortSignal | undefined, hold: SessionHold | undefined): AbortSignal | undefined {
  if (!hold) return cancel;
  return cancel ? AbortSignal.any([cancel, hold.signal]) : hold.signal;
}
