import { randomBytes } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import { PermitAbortedError, PermitTimeoutError } from './errors.js';
import { ServerClock, type ClockTimer, type SemaphoreClock } from './server-clock.js';
import {
  backgroundShare,
  DEFAULT_SERVICE_POLICY,
  expire,
  grant,
  grantable,
  inUse,
  newPoolState,
  release,
  type PoolSettings,
  type PoolState,
  type ReleaseReport,
  type ServicePolicy,
} from './pool-state.js';
import { nextWakeUp } from './wake-up.js';
import { lostCompareAndSet } from './kv-conflict.js';

export interface SemaphoreOptions {
  /** The bucket holding one key per pool (`pool.<name>`). */
  kv: KV;
  /** Settings of a pool by name; called the first time a pool is used and on every config reload. */
  poolSettings: (pool: string) => PoolSettings;
  /** A permit (or a place in the queue) not renewed for this long is given back. Default 15 s. */
  leaseMs?: number;
  /**
   * A permit released while nobody waits for the pool stays with this process this long, and its
   * next acquire takes it back after one read of the pool instead of a queue entry and a grant (an
   * agent loop's next call follows a fast tool within milliseconds). It still counts against the
   * cap, and is given back at once when someone starts waiting. 0 turns keeping off. Default 0.
   */
  keepMs?: number;
  /** The time leases, back-offs, budgets, kept permits and acquire timeouts go by. Default: the NATS server's clock. */
  clock?: SemaphoreClock;
  /** Aging and the background share (default 30 s, 0.1 and 0.5); the same in every process of a cluster. */
  policy?: Partial<ServicePolicy>;
  logger?: { warn(obj: object, msg: string): void };
}

export interface AcquireOptions {
  /** Tokens the call is expected to use, for the pool's tokens-per-minute budget. */
  estimatedTokens?: number;
  /** Higher is served first (0 batch, 1 normal, 2 interactive); waiting raises it over time. */
  priority?: number;
  /** Background work: served within the pool's background share (see ServicePolicy). */
  background?: boolean;
  signal?: AbortSignal;
  /** Give up waiting after this long with PermitTimeoutError. Default: wait as long as it takes. */
  timeoutMs?: number;
}

/** A granted permit. Release it exactly once when the call ends, success or failure. */
export interface Permit {
  readonly id: string;
  readonly pool: string;
  /** How long the acquire waited. */
  readonly waitedMs: number;
  release(report?: ReleaseReport): Promise<void>;
}

/**
 * A kept permit taken back ahead of the call that will use it (see `reserve`). `claim` hands it
 * over (undefined if it could not be taken back, or the reservation ended); `cancel` releases it.
 */
export interface Reservation {
  claim(): Promise<Permit | undefined>;
  cancel(): Promise<void>;
}

interface LocalWaiter {
  id: string;
  t: number;
  prio: number;
  est: number;
  bg: boolean;
  enqueued: boolean;
  startedAt: number;
  settle(permit: Permit | Error): void;
}

interface LocalPool {
  name: string;
  key: string;
  cached?: { state: PoolState; revision: number };
  waiters: LocalWaiter[];
  holders: Set<string>;
  releases: Map<string, { report: ReleaseReport; done: () => void }>;
  /** Permits released by their caller but kept for our next acquire (see `keepMs`), with their give-back timers. */
  kept: Map<string, ClockTimer>;
  /** Open reservations, by their cancel. */
  reservations: Set<() => Promise<void>>;
  cancels: Set<string>;
  /** The write cycles running now, if any. */
  pumping?: Promise<void>;
  again: boolean;
  timer?: ClockTimer;
}

/**
 * A counting semaphore shared by every process connected to the same NATS: one KV value per
 * pool, changed only by compare-and-set. Each process batches its own pending acquires, releases
 * and lease renewals into one write, and a KV watch tells it when others changed the pool.
 */
export class DistributedSemaphore {
  private readonly pools = new Map<string, LocalPool>();
  private readonly clock: SemaphoreClock;
  private readonly processId = randomBytes(6).toString('hex');
  private readonly leaseMs: number;
  private readonly policy: ServicePolicy;
  private seq = 0;
  private closed = false;
  /** Set once close begins: released permits are no longer kept. */
  private closing = false;
  private watcher?: { stop(): void };

  private constructor(private readonly o: SemaphoreOptions) {
    this.leaseMs = o.leaseMs ?? 15_000;
    this.policy = { ...DEFAULT_SERVICE_POLICY, ...o.policy };
    this.clock = o.clock ?? new ServerClock();
  }

  static async open(opts: SemaphoreOptions): Promise<DistributedSemaphore> {
    const sem = new DistributedSemaphore(opts);
    await sem.watch();
    return sem;
  }

  acquire(pool: string, opts: AcquireOptions = {}): Promise<Permit> {
    if (this.closed) return Promise.reject(new PermitAbortedError(pool));
    const lp = this.pool(pool);
    if (opts.signal?.aborted) return Promise.reject(new PermitAbortedError(pool, { cause: opts.signal.reason }));
    if (lp.kept.size > 0) {
      return this.reuseKept(lp).then((id) => (id ? this.permit(lp, id, 0) : this.wait(lp, pool, opts)));
    }
    return this.wait(lp, pool, opts);
  }

  /**
   * Takes back a permit this process keeps for `pool` ahead of the call that will use it, so that
   * the read of the pool overlaps other work (an agent loop's tool calls) instead of delaying the
   * call. Undefined when no permit is kept: the call then acquires as usual. Until claimed, the
   * reservation is released like a used permit (kept again while nobody waits) when cancelled,
   * after `keepMs`, or as soon as someone starts waiting for the pool, so it never holds capacity
   * longer than keeping would.
   */
  reserve(pool: string): Reservation | undefined {
    const lp = this.pools.get(pool);
    if (!lp || this.closing || lp.kept.size === 0 || lp.waiters.length > 0) return undefined;
    const taken = this.reuseKept(lp);
    let open = true;
    const end = (): Promise<string | undefined> => {
      open = false;
      timer.cancel();
      lp.reservations.delete(cancel);
      return taken;
    };
    const cancel = async (): Promise<void> => {
      if (!open) return;
      const id = await end();
      if (id) await this.permit(lp, id, 0).release();
    };
    const timer = this.clock.setTimer(cancel, this.o.keepMs ?? 0);
    lp.reservations.add(cancel);
    return {
      claim: async () => {
        if (!open) return undefined;
        const id = await end();
        return id ? this.permit(lp, id, 0) : undefined;
      },
      cancel,
    };
  }

  private wait(lp: LocalPool, pool: string, opts: AcquireOptions): Promise<Permit> {
    return new Promise<Permit>((resolve, reject) => {
      let timer: ClockTimer | undefined;
      const onAbort = () => giveUp(new PermitAbortedError(pool, { cause: opts.signal?.reason }));
      const w: LocalWaiter = {
        id: `${this.processId}.${++this.seq}`,
        t: this.clock.now(),
        prio: opts.priority ?? 1,
        est: Math.max(0, Math.ceil(opts.estimatedTokens ?? 0)),
        bg: opts.background === true,
        enqueued: false,
        startedAt: this.clock.now(),
        settle: (result) => {
          timer?.cancel();
          opts.signal?.removeEventListener('abort', onAbort);
          if (result instanceof Error) reject(result);
          else resolve(result);
        },
      };
      const giveUp = (err: Error) => {
        const i = lp.waiters.indexOf(w);
        if (i < 0) return;
        lp.waiters.splice(i, 1);
        // A write in flight may be putting it in the shared queue right now; cancel it there too,
        // or it would sit at the head, ungrantable, until its lease ran out.
        if (w.enqueued || lp.pumping) lp.cancels.add(w.id);
        w.settle(err);
        void this.pump(lp);
      };
      if (opts.timeoutMs !== undefined) timer = this.clock.setTimer(() => giveUp(new PermitTimeoutError(pool, opts.timeoutMs!)), opts.timeoutMs);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      lp.waiters.push(w);
      void this.pump(lp);
    });
  }

  /** Gives back kept permits, then stops watching and renewing; permits still held run out with their lease. */
  async close(): Promise<void> {
    this.closing = true;
    const givenBack = [...this.pools.values()].flatMap((lp) => [...[...lp.reservations].map((cancel) => cancel()), ...this.giveBackKept(lp)]);
    if (givenBack.length) await Promise.race([Promise.all(givenBack), new Promise((r) => setTimeout(r, 1000).unref())]);
    this.closed = true;
    this.watcher?.stop();
    for (const lp of this.pools.values()) {
      lp.timer?.cancel();
      for (const w of lp.waiters.splice(0)) w.settle(new PermitAbortedError(lp.name));
    }
  }

  private pool(name: string): LocalPool {
    let lp = this.pools.get(name);
    if (!lp) {
      lp = {
        name,
        key: `pool.${name}`,
        waiters: [],
        holders: new Set(),
        releases: new Map(),
        kept: new Map(),
        reservations: new Set(),
        cancels: new Set(),
        again: false,
      };
      this.pools.set(name, lp);
    }
    return lp;
  }

  private async watch(): Promise<void> {
    const iter = await this.o.kv.watch({ key: 'pool.>' });
    this.watcher = iter;
    void (async () => {
      for await (const e of iter) {
        if (e.isUpdate) this.clock.observe(e.created);
        const lp = this.pools.get(e.key.slice('pool.'.length));
        if (!lp || e.operation !== 'PUT') continue;
        if (!lp.cached || e.revision > lp.cached.revision) {
          lp.cached = { state: e.json<PoolState>(), revision: e.revision };
          if (!this.mayKeep(lp.cached.state)) {
            if (lp.kept.size > 0) void this.giveBackKept(lp);
            for (const cancel of [...lp.reservations]) void cancel();
          }
          // A grant to one of our waiters written by another process is taken up by the next cycle
          // (adoptGrants), not here, so it never races the settling of a write of ours in flight.
          if (this.hasWork(lp)) void this.pump(lp);
        }
      }
    })();
  }

  private hasWork(lp: LocalPool): boolean {
    return lp.waiters.length > 0 || lp.releases.size > 0 || lp.cancels.size > 0;
  }

  /**
   * Runs write cycles for a pool until nothing local is pending; one at a time per pool. Resolves
   * when the cycles running now have ended (one already running takes this call's work along).
   */
  private pump(lp: LocalPool): Promise<void> {
    if (lp.pumping) {
      lp.again = true;
      return lp.pumping;
    }
    lp.pumping = (async () => {
      try {
        do {
          lp.again = false;
          await this.cycle(lp);
        } while (lp.again && !this.closed);
      } catch (err) {
        this.o.logger?.warn({ err, pool: lp.name }, 'semaphore write failed; retrying');
        // A retry after a failed write waits for the connection, not for pool time: a real timer.
        setTimeout(() => void this.pump(lp), 200).unref();
      } finally {
        lp.pumping = undefined;
        this.schedule(lp);
      }
    })();
    return lp.pumping;
  }

  /** Reads the pool (from the watch cache), applies everything pending here, writes it with CAS. */
  private async cycle(lp: LocalPool): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      if (!lp.cached) await this.load(lp);
      const cached = lp.cached!;
      this.adoptGrants(lp, cached.state);
      const now = this.clock.now();
      const s = structuredClone(cached.state);
      const granted: string[] = [];
      const applied = { releases: [...lp.releases.keys()], cancels: [...lp.cancels] };
      if (!this.applyLocal(lp, s, now, granted)) return;
      try {
        const revision = await this.o.kv.update(lp.key, JSON.stringify(s), cached.revision);
        if (!lp.cached || lp.cached.revision < revision) lp.cached = { state: s, revision };
        this.settle(lp, s, granted, applied);
        return;
      } catch (err) {
        if (!lostCompareAndSet(err)) throw err;
        // The write that beat ours has usually reached us through the watch by now; read only if not.
        if (!lp.cached || lp.cached.revision <= cached.revision) await this.load(lp);
      }
    }
    throw new Error(`pool ${lp.name}: too many concurrent writers`);
  }

  private applyLocal(lp: LocalPool, s: PoolState, now: number, granted: string[]): boolean {
    let changed = expire(s, now);
    const settings = this.o.poolSettings(lp.name);
    if (settings.capacity !== s.configured_capacity) {
      s.capacity = s.configured_capacity = settings.capacity;
      changed = true;
    }
    if ((settings.tpm ?? null) !== s.tpm) {
      s.tpm = settings.tpm ?? null;
      s.tokens = Math.min(s.tokens, s.tpm ?? 0);
      changed = true;
    }
    for (const [id, r] of lp.releases) {
      release(s, id, r.report, now);
      changed = true;
    }
    if (lp.cancels.size > 0) {
      s.waiters = s.waiters.filter((w) => !lp.cancels.has(w.id));
      // Another process may have granted it before the cancel landed: give the unused permit back.
      for (const id of lp.cancels) {
        const h = s.holders[id];
        if (!h || lp.holders.has(id)) continue;
        delete s.holders[id];
        if (s.tpm !== null) s.tokens += h.est;
      }
      changed = true;
    }
    // Renew our leases once a third has passed, so a live process never loses what it holds.
    const renewAt = now + (this.leaseMs * 2) / 3;
    for (const id of lp.holders) {
      const h = s.holders[id];
      if (h && h.exp < renewAt) {
        h.exp = now + this.leaseMs;
        changed = true;
      }
    }
    const queued = new Map(s.waiters.map((w) => [w.id, w]));
    for (const w of lp.waiters) {
      const entry = queued.get(w.id);
      if (entry) {
        if (entry.exp < renewAt) {
          entry.exp = now + this.leaseMs;
          changed = true;
        }
      }
    }
    // Of each priority level only as many of our waiters join the shared queue as the pool has
    // permits (of background ones, as its background share); the rest wait here. That keeps the
    // KV value small however many calls a process has queued, without hiding a retry or a
    // background call behind a local backlog of new work.
    const bgLimit = Math.max(1, backgroundShare(s.capacity, this.policy).max);
    const classOf = (w: { bg: boolean; prio: number }) => (w.bg ? 'bg' : `p${w.prio}`);
    const perClass = new Map<string, number>();
    for (const w of lp.waiters) if (queued.has(w.id)) perClass.set(classOf(w), (perClass.get(classOf(w)) ?? 0) + 1);
    for (const w of lp.waiters) {
      if (queued.has(w.id) || s.holders[w.id]) continue;
      const n = perClass.get(classOf(w)) ?? 0;
      if (n >= (w.bg ? bgLimit : Math.max(1, s.capacity))) continue;
      s.waiters.push({ id: w.id, t: w.t, prio: w.prio, est: w.est, exp: now + this.leaseMs, ...(w.bg ? { bg: true as const } : {}) });
      perClass.set(classOf(w), n + 1);
      changed = true;
    }
    // A write grants the head of the queue whichever process it belongs to (the owner learns it
    // from the watch), so a permit freed here is handed on in the same write rather than waiting
    // for the owner to notice and write again. Nobody writes only to grant another's waiter.
    const mine = new Set(lp.waiters.map((w) => w.id));
    const grants = grantable(s, now, this.policy);
    if (changed || grants.some((w) => mine.has(w.id))) {
      for (const w of grants) {
        grant(s, w, now, this.leaseMs);
        if (mine.has(w.id)) granted.push(w.id);
        changed = true;
      }
    }
    return changed;
  }

  private settle(lp: LocalPool, s: PoolState, granted: string[], applied: { releases: string[]; cancels: string[] }): void {
    for (const id of applied.releases) {
      lp.releases.get(id)?.done();
      lp.releases.delete(id);
    }
    for (const id of applied.cancels) lp.cancels.delete(id);
    const queued = new Set(s.waiters.map((w) => w.id));
    for (const w of lp.waiters) w.enqueued = queued.has(w.id);
    for (const id of granted) {
      const i = lp.waiters.findIndex((w) => w.id === id);
      if (i < 0) {
        // Gave up while the grant was being written: hand the permit straight back.
        lp.releases.set(id, { report: {}, done: () => {} });
        lp.again = true;
        continue;
      }
      const [w] = lp.waiters.splice(i, 1);
      lp.holders.add(id);
      w!.settle(this.permit(lp, id, this.clock.now() - w!.startedAt));
    }
  }

  /** Settles our waiters that a write by another process has granted. */
  private adoptGrants(lp: LocalPool, s: PoolState): void {
    if (lp.waiters.length === 0) return;
    for (const w of lp.waiters.filter((x) => s.holders[x.id])) {
      lp.waiters.splice(lp.waiters.indexOf(w), 1);
      lp.holders.add(w.id);
      w.settle(this.permit(lp, w.id, this.clock.now() - w.startedAt));
    }
  }

  private permit(lp: LocalPool, id: string, waitedMs: number): Permit {
    let released: Promise<void> | undefined;
    return {
      id,
      pool: lp.name,
      waitedMs,
      release: (report = {}) => {
        released ??= this.keep(lp, id, report) ? Promise.resolve() : this.giveBack(lp, id, report);
        return released;
      },
    };
  }

  private giveBack(lp: LocalPool, id: string, report: ReleaseReport): Promise<void> {
    return new Promise<void>((done) => {
      lp.holders.delete(id);
      lp.releases.set(id, { report, done });
      void this.pump(lp);
    });
  }

  /**
   * Keeps a released permit for this process's next acquire when that cannot delay anyone: no
   * waiter anywhere, nothing the pool must learn from the call (429, failure, or real token use
   * against a budget), and the pool not over a lowered capacity.
   */
  private keep(lp: LocalPool, id: string, report: ReleaseReport): boolean {
    const keepMs = this.o.keepMs ?? 0;
    const s = lp.cached?.state;
    if (keepMs <= 0 || this.closing || !s || report.failed || report.rateLimitedForMs !== undefined) return false;
    if (lp.waiters.length > 0 || !this.mayKeep(s) || s.tpm !== null || s.failures > 0 || !s.holders[id]) return false;
    const timer = this.clock.setTimer(() => (lp.kept.delete(id) ? this.giveBack(lp, id, {}) : undefined), keepMs);
    lp.kept.set(id, timer);
    return true;
  }

  private mayKeep(s: PoolState): boolean {
    return s.waiters.length === 0 && s.backoff_until <= this.clock.now() && inUse(s) <= s.capacity;
  }

  /**
   * A kept permit for a new acquire, if one is still ours and nobody has started waiting. Our view
   * of the pool may lag a waiter's write by a moment, so the pool is read first: if its latest
   * state still has the permit ours, with time left on its lease, and nobody waiting, the permit is
   * reused without a write (its lease is renewed with our others, by the pump). A waiter whose
   * write lands after the read queues behind a permit that was never free. Otherwise the permit
   * goes back the usual way, to the head of the queue. A read, unlike a write, is not echoed to
   * every process watching the pool.
   */
  private async reuseKept(lp: LocalPool): Promise<string | undefined> {
    const cached = lp.cached;
    const [first] = lp.kept;
    if (!first) return undefined;
    const [id, timer] = first;
    lp.kept.delete(id);
    timer.cancel();
    // Its lease may have run out while we kept it (the process stalled): then it is not ours.
    if (!cached || lp.waiters.length > 0 || !this.mayKeep(cached.state) || !cached.state.holders[id]) {
      void this.giveBackKept(lp);
      if (lp.holders.has(id)) void this.giveBack(lp, id, {});
      return undefined;
    }
    try {
      const entry = await this.o.kv.get(lp.key);
      if (entry?.operation === 'PUT') {
        const state = entry.json<PoolState>();
        if (!lp.cached || lp.cached.revision < entry.revision) lp.cached = { state, revision: entry.revision };
        const lease = state.holders[id]?.exp ?? 0;
        if (lease - this.clock.now() > this.leaseMs / 3 && this.mayKeep(state) && lp.waiters.length === 0) return id;
      }
    } catch (err) {
      this.o.logger?.warn({ err, pool: lp.name }, 'could not read the pool to reuse a kept permit');
    }
    void this.giveBack(lp, id, {});
    return undefined;
  }

  private giveBackKept(lp: LocalPool): Promise<void>[] {
    const out: Promise<void>[] = [];
    for (const [id, timer] of lp.kept) {
      timer.cancel();
      out.push(this.giveBack(lp, id, {}));
    }
    lp.kept.clear();
    return out;
  }

  private async load(lp: LocalPool): Promise<void> {
    let entry: KvEntry | null = await this.o.kv.get(lp.key);
    if (!entry || entry.operation !== 'PUT') {
      const fresh = newPoolState(this.o.poolSettings(lp.name), this.clock.now());
      try {
        const revision = await this.o.kv.create(lp.key, JSON.stringify(fresh));
        lp.cached = { state: fresh, revision };
        return;
      } catch (err) {
        if (!lostCompareAndSet(err)) throw err;
        entry = await this.o.kv.get(lp.key);
      }
    }
    if (!entry) throw new Error(`pool ${lp.name} vanished while loading`);
    lp.cached = { state: entry.json<PoolState>(), revision: entry.revision };
  }

  /** Wakes the pool when time alone changes things: a lease to renew or expire, a back-off or budget to wait out. */
  private schedule(lp: LocalPool): void {
    lp.timer?.cancel();
    if (this.closed || !lp.cached) return;
    const at = nextWakeUp({
      state: lp.cached.state,
      now: this.clock.now(),
      leaseMs: this.leaseMs,
      agingMs: this.policy.agingMs,
      waiting: lp.waiters.length > 0,
      holding: lp.holders.size > 0,
    });
    if (at === undefined) return;
    lp.timer = this.clock.setTimer(() => this.pump(lp), Math.max(1, at - this.clock.now()));
  }
}
