import { open, readFile, rename, rm, truncate, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { MemoryRecord, MemoryRecordPatch } from './vector-store.js';
import { VectorStoreCorruptError } from './vector-store-errors.js';

/** A change of `update`, as written to the log. */
export type RecordPatch = MemoryRecordPatch & { memory_id: string };

/**
 * One line of a user's log. `key` is the record's key in the HNSW index, kept stable per
 * memory_id so a replayed log rebuilds exactly the same id ↔ key mapping.
 */
export type LogEntry = { put: MemoryRecord; key: string; v: string } | { patch: RecordPatch };

/** Float32 vectors travel as base64 of their bytes: a third of the size of JSON numbers, exact. */
export function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  // Copy into a fresh buffer: Buffer.from may hand back a pooled, unaligned slice.
  const bytes = new Uint8Array(Buffer.from(text, 'base64'));
  return new Float32Array(bytes.buffer, 0, bytes.byteLength / 4);
}

/**
 * A user's append-only JSONL log. Each write is one `write` of whole lines (then `datasync`
 * when durable), so a crash can only leave a torn last line, which `read` cuts off. Compaction
 * writes the live records to a temporary file and renames it over the log, so a reader sees
 * either the old log or the new one, never half of each.
 */
export class UserLog {
  private handle: FileHandle | undefined;
  /** Lines in the file: compaction is due when they far outnumber the live records. */
  lines = 0;

  constructor(
    readonly path: string,
    private readonly durable: boolean,
  ) {}

  /** Every entry in order; a missing file is an empty log. */
  async read(): Promise<LogEntry[]> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const lastNewline = text.lastIndexOf('\n');
    if (lastNewline !== text.length - 1) {
      // A write cut short by a crash: drop the partial line so the next append starts clean.
      await truncate(this.path, Buffer.byteLength(text.slice(0, lastNewline + 1)));
      text = text.slice(0, lastNewline + 1);
    }
    const lines = text.split('\n');
    lines.pop();
    this.lines = lines.length;
    return lines.map((line, i) => {
      try {
        return JSON.parse(line) as LogEntry;
      } catch (err) {
        throw new VectorStoreCorruptError({ path: this.path, detail: `line ${i + 1} is not JSON` }, { cause: err });
      }
    });
  }

  async append(entries: LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    this.handle ??= await open(this.path, 'a');
    await this.handle.write(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
    if (this.durable) await this.handle.datasync();
    this.lines += entries.length;
  }

  /** Replaces the whole log with `entries` (compaction), atomically. */
  async rewrite(entries: LogEntry[]): Promise<void> {
    const tmp = `${this.path}.tmp`;
    const out = await open(tmp, 'w');
    try {
      await out.write(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      if (this.durable) await out.sync();
    } finally {
      await out.close();
    }
    await this.close();
    await rename(tmp, this.path);
    if (this.durable) await syncDirectory(dirname(this.path));
    this.lines = entries.length;
  }

  /** Deletes the log (forgetting a user). */
  async remove(): Promise<void> {
    await this.close();
    await rm(this.path, { force: true });
    await rm(`${this.path}.tmp`, { force: true });
    if (this.durable) await syncDirectory(dirname(this.path));
    this.lines = 0;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }
}

/** Makes a rename or unlink durable: the directory entry itself must reach the disk. */
async function syncDirectory(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
