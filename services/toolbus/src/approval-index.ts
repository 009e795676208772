import type { KV, KvEntry } from '@nats-io/kv';
import { decodeStored, StoredPendingApproval, StoredStateError } from '@hermes/contracts';
import type { Logger } from '@hermes/telemetry';

/** One call waiting for a human, as every replica knows it (schema `StoredPendingApproval`). */
export type PendingApproval = Omit<StoredPendingApproval, 'v'>;

// setTimeout cannot wait longer than this; a later expiry is re-armed when the timer fires.
const MAX_TIMER_MS = 2_147_000_000;

/**
 * The calls waiting for approval, in a KV bucket of their own (key = call record key) that every
 * replica watches. It survives restarts, and whichever replica's timer fires first at the
 * deadline times the call out (the record's compare-and-set makes that happen once).
 */
export class ApprovalIndex {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly known = new Map<string, PendingApproval>();
  private watcher?: Awaited<ReturnType<KV['watch']>>;
  private watching?: Promise<void>;

  constructor(
    private readonly o: {
      kv: KV;
      /** Called on every replica when a pending call reaches its deadline. */
      onExpired: (key: string) => Promise<void>;
      logger: Logger;
    },
  ) {}

  /** Loads every pending approval, then follows changes. */
  async start(): Promise<void> {
    for await (const key of await this.o.kv.keys()) {
      const entry = await this.o.kv.get(key);
      if (entry) this.apply(entry);
    }
    const watcher = await this.o.kv.watch();
    this.watcher = watcher;
    this.watching = (async () => {
      for await (const entry of watcher) this.apply(entry);
    })().catch((err: unknown) => this.o.logger.error({ err }, 'approval index watch ended'));
  }

  /** Adds a pending call (idempotent). */
  async add(key: string, entry: PendingApproval): Promise<void> {
    const stored: StoredPendingApproval = { ...entry, v: 1 };
    await this.o.kv.put(key, JSON.stringify(stored));
  }

  /** Forgets a decided call. */
  async remove(key: string): Promise<void> {
    if (this.known.has(key) || (await this.o.kv.get(key))?.operation === 'PUT') await this.o.kv.delete(key);
  }

  /** Whether the index lists this call (as this replica last heard). */
  has(key: string): boolean {
    return this.known.has(key);
  }

  /** The pending calls this replica knows of. */
  pending(): Map<string, PendingApproval> {
    return new Map(this.known);
  }

  async stop(): Promise<void> {
    this.watcher?.stop();
    await this.watching;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private apply(entry: KvEntry): void {
    clearTimeout(this.timers.get(entry.key));
    this.timers.delete(entry.key);
    if (entry.operation !== 'PUT' || entry.length === 0) {
      this.known.delete(entry.key);
      return;
    }
    let pending: PendingApproval;
    try {
      const { v: _version, ...fields } = decodeStored(StoredPendingApproval, entry);
      pending = fields;
    } catch (err) {
      if (!(err instanceof StoredStateError)) throw err;
      // Nobody will time this entry out; the call record stays authoritative (an approval still
      // finds it there), so one bad entry must not end the watch for every other pending call.
      this.known.delete(entry.key);
      this.o.logger.error({ err, call_id: entry.key, issues: err.issues }, 'unreadable pending approval ignored');
      return;
    }
    this.known.set(entry.key, pending);
    this.arm(entry.key, Date.parse(pending.expires_at));
  }

  private arm(key: string, deadline: number): void {
    const wait = Math.max(0, deadline - Date.now());
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        if (Date.now() < deadline) return this.arm(key, deadline);
        this.o.onExpired(key).catch((err: unknown) => this.o.logger.error({ err, call_id: key }, 'could not time out a pending approval'));
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    timer.unref();
    this.timers.set(key, timer);
  }
}
