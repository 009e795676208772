import { randomUUID } from 'node:crypto';
import { readFile, realpath, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryError } from '../memory-errors.js';

/** What the owner file says. */
export interface DataDirOwner {
  host: string;
  pid: number;
  token: string;
  since: string;
}

export interface DataDirLockOptions {
  /** How often the owner touches the file; it is stale after three of these without a touch. */
  refreshMs?: number;
  /** How long to wait for a live-looking owner to go stale before giving up (default: until it would be stale, plus one refresh). */
  waitMs?: number;
  /** Called once if another process took the directory over (this one stalled past the stale time). */
  onLost?: (owner: DataDirOwner | undefined) => void;
}

/** Another live process owns the data directory: one memory replica per embedded store. */
export class DataDirLockedError extends MemoryError {
  readonly owner: DataDirOwner;
  constructor(dir: string, owner: DataDirOwner) {
    super(
      'vector_store_locked',
      `the embedded vector store at ${dir} is in use by process ${owner.pid} on ${owner.host} (since ${owner.since}); ` +
        'one memory replica may use an embedded store: give each replica a directory of its own, or set QDRANT_URL to share memories',
    );
    this.owner = owner;
  }
}

const FILE = 'owner.lock';
const DEFAULT_REFRESH_MS = 10_000;
/** Held by this process, by real path: stores opened twice in one process share the lock. */
const held = new Map<string, { lock: DataDirLock; refs: number }>();

/**
 * The owner file of an embedded store's data directory. Created exclusively; kept fresh by a
 * touch every `refreshMs`. A file left behind by a crash is taken over when its process is gone
 * (same host) or it has not been touched for three refreshes (any host: a pod replaced on another
 * node). Two processes that find the same stale file at the same moment both take it over, then
 * read it back after a short pause: the one whose token is not in it backs off.
 */
export class DataDirLock {
  private timer: NodeJS.Timeout | undefined;
  private lost = false;

  private readonly path: string;

  private constructor(
    /** The directory's real path: the key of `held`. */
    private readonly key: string,
    private readonly me: DataDirOwner,
    private readonly o: DataDirLockOptions,
  ) {
    this.path = join(key, FILE);
  }

  /** Whether another process has taken the directory over. */
  get isLost(): boolean {
    return this.lost;
  }

  static async acquire(dir: string, o: DataDirLockOptions = {}): Promise<DataDirLock> {
    const key = await realpath(dir);
    const mine = held.get(key);
    if (mine) {
      mine.refs += 1;
      return mine.lock;
    }
    const refreshMs = o.refreshMs ?? DEFAULT_REFRESH_MS;
    const staleMs = 3 * refreshMs;
    const deadline = Date.now() + (o.waitMs ?? staleMs + refreshMs);
    const me: DataDirOwner = { host: hostname(), pid: process.pid, token: randomUUID(), since: new Date().toISOString() };
    const path = join(key, FILE);
    for (;;) {
      if (await createExclusive(path, me)) {
        // Another process may have taken the same stale file over at the same moment.
        await sleep(Math.min(200, refreshMs));
        if ((await readOwner(path))?.token === me.token) {
          const lock = new DataDirLock(key, me, { ...o, refreshMs });
          lock.start();
          held.set(key, { lock, refs: 1 });
          return lock;
        }
        continue;
      }
      const owner = await readOwner(path);
      const age = await ageOf(path);
      if (age === undefined) continue; // gone in between: try again
      // Our own pid on our host but not held here: an earlier incarnation (pid 1 in a restarted container).
      const gone = owner !== undefined && owner.host === me.host && (owner.pid === process.pid || !alive(owner.pid));
      // An empty or torn file is stale only once it is old: a fresh one may be mid-write.
      if ((owner === undefined && age > 1000) || gone || age > staleMs) {
        // Remove it only if it is still the file judged stale.
        if ((await readOwner(path))?.token === owner?.token) await unlink(path).catch(() => undefined);
        continue;
      }
      if (owner === undefined) {
        await sleep(50);
        continue;
      }
      if (Date.now() >= deadline) throw new DataDirLockedError(dir, owner);
      await sleep(Math.min(refreshMs, Math.max(50, deadline - Date.now())));
    }
  }

  /** Gives the directory up (the last holder in this process removes the file). */
  async release(): Promise<void> {
    const entry = held.get(this.key);
    if (entry?.lock !== this) return; // released already
    if (--entry.refs > 0) return;
    held.delete(this.key);
    clearInterval(this.timer);
    if (!this.lost && (await readOwner(this.path))?.token === this.me.token) await unlink(this.path).catch(() => undefined);
  }

  private start(): void {
    const refreshMs = this.o.refreshMs ?? DEFAULT_REFRESH_MS;
    this.timer = setInterval(() => void this.refresh(), refreshMs);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    if (this.lost) return;
    const owner = await readOwner(this.path);
    if (owner?.token !== this.me.token) {
      this.lost = true;
      clearInterval(this.timer);
      this.o.onLost?.(owner);
      return;
    }
    const now = new Date();
    await utimes(this.path, now, now).catch(() => undefined);
  }
}

async function createExclusive(path: string, me: DataDirOwner): Promise<boolean> {
  try {
    await writeFile(path, `${JSON.stringify(me)}\n`, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

async function readOwner(path: string): Promise<DataDirOwner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<DataDirOwner>;
    return typeof parsed.token === 'string' && typeof parsed.pid === 'number' && typeof parsed.host === 'string' ? (parsed as DataDirOwner) : undefined;
  } catch {
    // Missing, or torn by a crash while being written: either way nobody holds it.
    return undefined;
  }
}

async function ageOf(path: string): Promise<number | undefined> {
  try {
    return Date.now() - (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
