/** Limits of the in-memory record of finished calls. */
export interface CallMemoryOptions {
  /** Finished calls remembered at most (least recently used go first). Default 10 000. */
  maxEntries?: number;
  /** Total size of remembered replies, in bytes. Default 64 MiB. */
  maxBytes?: number;
  /** How long a finished call's reply is remembered. Default 1 hour. */
  ttlMs?: number;
}

/** What a run produced: the encoded reply, and whether a later call with the same key may reuse it. */
export interface RunOutcome {
  reply: Uint8Array;
  remember: boolean;
}

interface Remembered {
  reply: Uint8Array;
  expiresAt: number;
}

/**
 * Runs work at most once per key within one process: a call whose key is running waits for that
 * run, a call whose key finished gets the remembered reply. Finished entries are kept in LRU order
 * under a count, a byte and a time limit. Nothing survives a restart of the process.
 */
export class CallMemory {
  private readonly running = new Map<string, Promise<Uint8Array>>();
  private readonly finished = new Map<string, Remembered>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly ttlMs: number;

  constructor(opts: CallMemoryOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
    this.ttlMs = opts.ttlMs ?? 3_600_000;
  }

  /** The reply for `key`: remembered, shared with a run in progress, or from running `work` now. */
  async once(key: string, work: () => Promise<RunOutcome>): Promise<{ reply: Uint8Array; replayed: boolean }> {
    const remembered = this.recall(key);
    if (remembered) return { reply: remembered, replayed: true };
    const inProgress = this.running.get(key);
    if (inProgress) return { reply: await inProgress, replayed: true };
    const run = (async () => {
      const outcome = await work();
      // Remembered before the run leaves `running`, so no caller can slip between the two.
      if (outcome.remember) this.remember(key, outcome.reply);
      return outcome.reply;
    })().finally(() => this.running.delete(key));
    this.running.set(key, run);
    return { reply: await run, replayed: false };
  }

  private recall(key: string): Uint8Array | undefined {
    const entry = this.finished.get(key);
    if (!entry) return undefined;
    this.finished.delete(key);
    if (entry.expiresAt <= Date.now()) {
      this.bytes -= entry.reply.byteLength;
      return undefined;
    }
    this.finished.set(key, entry); // most recently used goes last
    return entry.reply;
  }

  private remember(key: string, reply: Uint8Array): void {
    if (reply.byteLength > this.maxBytes || this.maxEntries < 1) return;
    this.finished.set(key, { reply, expiresAt: Date.now() + this.ttlMs });
    this.bytes += reply.byteLength;
    const now = Date.now();
    for (const [oldKey, entry] of this.finished) {
      const over = this.finished.size > this.maxEntries || this.bytes > this.maxBytes;
      if (!over && entry.expiresAt > now) break;
      this.finished.delete(oldKey);
      this.bytes -= entry.reply.byteLength;
    }
  }
}
