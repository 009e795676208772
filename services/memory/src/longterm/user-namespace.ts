import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Index, MetricKind, ScalarKind } from 'usearch';
import type { MemoryRecord, VectorHit } from './vector-store.js';
import type { LogEntry, RecordPatch } from './user-log.js';
import { decodeVector } from './user-log.js';
import { VectorDimensionError } from './vector-store-errors.js';

/** HNSW parameters of every per-user index (see DEFAULT_HNSW in the store for the chosen values). */
export interface HnswTuning {
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
}

interface Entry {
  record: MemoryRecord;
  vector: Float32Array;
  key: bigint;
}

/** Records added to the index per native call while (re)building, between yields to the event loop. */
const BUILD_CHUNK = 1024;

/**
 * One user's memories in process: every record with its vector (kept for archived and
 * superseded records too, so they can be restored and compacted) and an HNSW index holding
 * exactly the `active` ones. The index is built on the first search, not on load, so listing,
 * getting or purging a user never pays for it.
 */
export class UserNamespace {
  private readonly entries = new Map<string, Entry>();
  private readonly idByKey = new Map<bigint, string>();
  private nextKey = 1n;
  private index: Index | undefined;
  /** A saved index to load instead of building one, and the memories changed after it was saved. */
  private pendingSnapshot: { path: string; touched: Set<string> } | undefined;

  constructor(
    private readonly dimensions: number,
    private readonly tuning: HnswTuning,
    private readonly where: string,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Whether the index exists yet (it is built or loaded on the first search). */
  get indexed(): boolean {
    return this.index !== undefined;
  }

  /** Tells the first search to load this saved index and bring the `touched` memories up to date. */
  useSnapshot(path: string, touched: Set<string>): void {
    this.pendingSnapshot = { path, touched };
  }

  /** Writes the index to `path` in usearch's format (only once `indexed`). */
  saveIndex(path: string): void {
    if (!this.index) throw new Error('saveIndex before the index exists');
    this.index.save(path);
  }

  get(memoryId: string): MemoryRecord | undefined {
    return this.entries.get(memoryId)?.record;
  }

  all(): MemoryRecord[] {
    return Array.from(this.entries.values(), (e) => e.record);
  }

  /** Replays one log line (on load). */
  replay(entry: LogEntry): void {
    if ('put' in entry) {
      const vector = decodeVector(entry.v);
      if (vector.length !== this.dimensions) throw new VectorDimensionError({ expected: this.dimensions, actual: vector.length, where: this.where });
      this.put(entry.put, vector, BigInt(entry.key));
    } else {
      this.patch(entry.patch);
    }
  }

  /** The key a record has, or a fresh one if new: stable per memory_id, so replacing keeps it. */
  assignKey(memoryId: string): bigint {
    const existing = this.entries.get(memoryId)?.key;
    if (existing !== undefined) return existing;
    return this.nextKey++;
  }

  /** Inserts or replaces records; the index gets the active ones in one batch. */
  putMany(items: { record: MemoryRecord; vector: Float32Array; key: bigint }[]): void {
    const toIndex: Entry[] = [];
    for (const { record, vector, key } of items) {
      this.put(record, vector, key, false);
      if (record.status === 'active') toIndex.push({ record, vector, key });
    }
    if (this.index && toIndex.length > 0) addToIndex(this.index, toIndex, this.dimensions);
  }

  patch(patch: RecordPatch): MemoryRecord | undefined {
    const entry = this.entries.get(patch.memory_id);
    if (!entry) return undefined;
    const wasActive = entry.record.status === 'active';
    entry.record = { ...entry.record, ...patch };
    const isActive = entry.record.status === 'active';
    if (this.index && wasActive !== isActive) {
      if (isActive) this.index.add(entry.key, entry.vector);
      else this.index.remove(entry.key);
    }
    return entry.record;
  }

  /**
   * Drops a record and its vector; false when there is none. A saved index not yet loaded still
   * holds the vector, so it is given up: the first search builds the index from the records.
   */
  remove(memoryId: string): boolean {
    const entry = this.entries.get(memoryId);
    if (!entry) return false;
    if (this.index?.contains(entry.key)) this.index.remove(entry.key);
    this.entries.delete(memoryId);
    this.idByKey.delete(entry.key);
    this.pendingSnapshot = undefined;
    return true;
  }

  /** Nearest active records, best first; builds the index first if this is the first search. */
  async search(vector: Float32Array, limit: number): Promise<VectorHit[]> {
    const index = this.index ?? (await this.buildIndex());
    const k = Math.min(limit, index.size());
    if (k <= 0) return [];
    // One thread: a single query is far too short to be worth fanning out.
    const matches = index.search(vector, k, 1);
    const hits: VectorHit[] = [];
    for (let i = 0; i < matches.keys.length; i++) {
      const id = this.idByKey.get(matches.keys[i]!);
      const entry = id === undefined ? undefined : this.entries.get(id);
      if (entry?.record.status !== 'active') continue;
      // usearch's cosine metric is a distance: 1 − similarity.
      hits.push({ record: entry.record, similarity: 1 - matches.distances[i]! });
    }
    return hits;
  }

  /** The log that replays to exactly this state: one put per record (compaction). */
  asLog(encode: (v: Float32Array) => string): LogEntry[] {
    return Array.from(this.entries.values(), (e) => ({ put: e.record, key: e.key.toString(), v: encode(e.vector) }));
  }

  private put(record: MemoryRecord, vector: Float32Array, key: bigint, indexNow = true): void {
    const previous = this.entries.get(record.memory_id);
    if (previous && this.index && previous.record.status === 'active') this.index.remove(previous.key);
    if (previous && previous.key !== key) this.idByKey.delete(previous.key);
    this.entries.set(record.memory_id, { record, vector, key });
    this.idByKey.set(key, record.memory_id);
    if (key >= this.nextKey) this.nextKey = key + 1n;
    if (indexNow && this.index && record.status === 'active') this.index.add(key, vector);
  }

  private async buildIndex(): Promise<Index> {
    const snapshot = this.pendingSnapshot;
    this.pendingSnapshot = undefined;
    const loaded = snapshot && this.loadSnapshot(snapshot);
    if (loaded) {
      this.index = loaded;
      return loaded;
    }
    return this.buildFromScratch(this.emptyIndex());
  }

  private loadSnapshot(snapshot: { path: string; touched: Set<string> }): Index | undefined {
    const index = this.emptyIndex();
    try {
      index.load(snapshot.path);
    } catch {
      // Unreadable (say, written by another usearch version): build from the log instead.
      return undefined;
    }
    if (index.dimensions() !== this.dimensions) return undefined;
    for (const memoryId of snapshot.touched) {
      const entry = this.entries.get(memoryId);
      if (!entry) continue;
      // Removed and re-added as it stands now, whatever the saved index held for it.
      if (index.contains(entry.key)) index.remove(entry.key);
      if (entry.record.status === 'active') index.add(entry.key, entry.vector);
    }
    return index;
  }

  private emptyIndex(): Index {
    return new Index({
      dimensions: this.dimensions,
      metric: MetricKind.Cos,
      quantization: ScalarKind.F32,
      connectivity: this.tuning.connectivity,
      expansion_add: this.tuning.expansionAdd,
      expansion_search: this.tuning.expansionSearch,
      multi: false,
    });
  }

  private async buildFromScratch(index: Index): Promise<Index> {
    const active = Array.from(this.entries.values()).filter((e) => e.record.status === 'active');
    for (let start = 0; start < active.length; start += BUILD_CHUNK) {
      addToIndex(index, active.slice(start, start + BUILD_CHUNK), this.dimensions);
      // A large user takes seconds to index; let other requests run in between.
      if (start + BUILD_CHUNK < active.length) await yieldToEventLoop();
    }
    this.index = index;
    return index;
  }
}

/** One native call for many vectors: several times faster than adding them one by one. */
function addToIndex(index: Index, entries: Entry[], dimensions: number): void {
  const keys = new BigUint64Array(entries.length);
  const flat = new Float32Array(entries.length * dimensions);
  entries.forEach((e, i) => {
    keys[i] = e.key;
    flat.set(e.vector, i * dimensions);
  });
  index.add(keys, flat, 0);
}
