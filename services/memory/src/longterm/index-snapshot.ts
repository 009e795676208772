import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** What a saved index covers: the state after the first `lines` lines of the user's log. */
export interface SnapshotMeta {
  lines: number;
  dimensions: number;
  /** Of the index file: usearch crashes the process on a damaged file, so nothing unverified is loaded. */
  sha256: string;
  /** The usearch version that wrote it: after an upgrade the index is rebuilt rather than trusted. */
  engine: string;
}

/**
 * A user's HNSW index saved beside the log, so a restart loads it in milliseconds instead of
 * rebuilding it (seconds per ten thousand memories) and replays only the log lines written after
 * it. Files: `<base>.usearch` (usearch's own format) and `<base>.usearch.json` (the meta).
 *
 * Crash safety: each file is written to a temporary name and renamed, and the meta holds the
 * index file's SHA-256, checked before loading: a torn, damaged or newer index file (a crash
 * between the two renames) does not match and the index is rebuilt from the log instead; usearch
 * would crash the process on a damaged file. Compaction deletes the meta before it replaces the
 * log, because line counts of the old log mean nothing in the new one.
 */
export class IndexSnapshot {
  private readonly indexPath: string;
  private readonly metaPath: string;

  constructor(
    base: string,
    private readonly durable: boolean,
  ) {
    this.indexPath = `${base}.usearch`;
    this.metaPath = `${base}.usearch.json`;
  }

  /** The meta of a snapshot usable with a log of `logLines` lines and this dimension, if any. */
  async usable(logLines: number, dimensions: number): Promise<{ path: string; lines: number } | undefined> {
    let meta: SnapshotMeta;
    try {
      meta = JSON.parse(await readFile(this.metaPath, 'utf8')) as SnapshotMeta;
    } catch {
      // Missing or damaged: the index is rebuilt from the log, which is always the truth.
      return undefined;
    }
    // More lines than the log has: the log lost lines the snapshot saw (writes not made durable).
    if (meta.dimensions !== dimensions || meta.engine !== ENGINE || !Number.isInteger(meta.lines) || meta.lines > logLines) return undefined;
    const actual = await sha256Of(this.indexPath).catch(() => undefined);
    if (actual === undefined || actual !== meta.sha256) return undefined;
    return { path: this.indexPath, lines: meta.lines };
  }

  /** Saves an index covering the first `lines` log lines; `save` writes usearch's file. */
  async save(lines: number, dimensions: number, save: (path: string) => void): Promise<void> {
    const tmp = `${this.indexPath}.tmp`;
    save(tmp);
    // Synced before the rename: after a power loss the name must never point at a half-written file.
    await this.sync(tmp);
    const sha256 = await sha256Of(tmp);
    await rename(tmp, this.indexPath);
    await writeFile(`${this.metaPath}.tmp`, JSON.stringify({ lines, dimensions, sha256, engine: ENGINE } satisfies SnapshotMeta));
    await this.sync(`${this.metaPath}.tmp`);
    await rename(`${this.metaPath}.tmp`, this.metaPath);
  }

  /** Makes the snapshot unusable (before compaction) without touching the index file. */
  async invalidate(): Promise<void> {
    await rm(this.metaPath, { force: true });
  }

  async remove(): Promise<void> {
    await rm(this.metaPath, { force: true });
    await rm(this.indexPath, { force: true });
    await rm(`${this.indexPath}.tmp`, { force: true });
    await rm(`${this.metaPath}.tmp`, { force: true });
  }

  private async sync(path: string): Promise<void> {
    if (!this.durable) return;
    const file = await open(path, 'r+');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
  }
}

/** `usearch@<version>`, read from its package.json (which its exports do not expose to imports). */
function usearchVersion(): string {
  try {
    let dir = dirname(createRequire(import.meta.url).resolve('usearch'));
    for (let up = 0; up < 6; up++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'usearch' && pkg.version) return `usearch@${pkg.version}`;
      } catch {
        // No package.json at this level: keep walking up.
      }
    }
  } catch {
    // Not resolvable by path (bundled): the fallback below still tells versions of Hermes apart poorly, never wrongly.
  }
  return 'usearch@unknown';
}

const ENGINE = usearchVersion();

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
