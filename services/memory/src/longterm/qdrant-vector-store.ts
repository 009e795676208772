import { createHash } from 'node:crypto';
import { QdrantClient } from '@qdrant/js-client-rest';
import { MemoryError } from '../memory-errors.js';
import { onceUntilSuccess } from './once-until-success.js';
import { newestFirst, pickPatch } from './record-rules.js';
import type { MemoryRecord, MemoryRecordPatch, MemoryStatus, RecordWithVector, VectorHit, VectorStore } from './vector-store.js';
import { checkVector, VectorDimensionError, VectorStoreUnavailableError } from './vector-store-errors.js';

export interface QdrantVectorStoreOptions {
  /** e.g. `http://qdrant:6333`. */
  url: string;
  apiKey?: string;
  /** One collection holds every user (default `hermes_memories`). */
  collection?: string;
  dimensions: number;
  /** Bound on one HTTP call to Qdrant (default 10 s). */
  timeoutMs?: number;
}

/** Points fetched per scroll page when listing or counting a user's records. */
const PAGE = 256;

/**
 * Long-term memory in Qdrant, for several replicas sharing one store. One collection for all
 * users, partitioned by a `user_id` keyword payload index with `is_tenant: true` (Qdrant keeps
 * each tenant's points together and builds a graph per tenant); every read filters on the user,
 * and searches also on `status = active`. A point's id is a UUID derived from (user, memory_id),
 * so the same memory written twice is one point and one user can never overwrite another's.
 */
export class QdrantVectorStore implements VectorStore {
  readonly dimensions: number;
  private readonly client: QdrantClient;
  private readonly collection: string;

  constructor(opts: QdrantVectorStoreOptions) {
    this.dimensions = opts.dimensions;
    this.collection = opts.collection ?? 'hermes_memories';
    this.client = new QdrantClient({
      url: opts.url,
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
      timeout: opts.timeoutMs ?? 10_000,
      // Version probing is an extra request at start-up and only warns; the API we use is stable.
      checkCompatibility: false,
    });
  }

  /** Creates the collection and its payload indexes if missing; refuses one of another dimension. */
  readonly init = onceUntilSuccess(() => this.call('init', () => this.createCollection()));

  upsert(record: MemoryRecord, vector: Float32Array): Promise<void> {
    return this.upsertMany([{ record, vector }]);
  }

  async upsertMany(items: RecordWithVector[]): Promise<void> {
    for (const { record, vector } of items) checkVector(vector, this.dimensions, `memory ${record.memory_id}`);
    if (items.length === 0) return;
    await this.init();
    await this.call('upsert', () =>
      this.client.upsert(this.collection, {
        wait: true,
        points: items.map(({ record, vector }) => ({ id: pointId(record.user_id, record.memory_id), vector: Array.from(vector), payload: { ...record } })),
      }),
    );
  }

  async search(userId: string, vector: Float32Array, limit: number): Promise<VectorHit[]> {
    checkVector(vector, this.dimensions, 'search');
    if (limit <= 0) return [];
    await this.init();
    const answer = await this.call('search', () =>
      this.client.query(this.collection, { query: Array.from(vector), filter: userFilter(userId, 'active'), limit, with_payload: true }),
    );
    // With the Cosine distance Qdrant's score is the cosine similarity itself.
    return answer.points.map((p) => ({ record: p.payload as unknown as MemoryRecord, similarity: p.score }));
  }

  async get(userId: string, memoryId: string): Promise<MemoryRecord | undefined> {
    await this.init();
    const [point] = await this.call('get', () => this.client.retrieve(this.collection, { ids: [pointId(userId, memoryId)], with_payload: true }));
    const record = point?.payload as MemoryRecord | undefined;
    // The id already includes the user; checking the payload too costs nothing.
    return record?.user_id === userId ? record : undefined;
  }

  async list(userId: string, opts: { status?: MemoryStatus; limit?: number } = {}): Promise<MemoryRecord[]> {
    await this.init();
    const records = await this.scrollAll(userId, opts.status);
    records.sort(newestFirst);
    return opts.limit === undefined ? records : records.slice(0, opts.limit);
  }

  async update(userId: string, memoryId: string, patch: MemoryRecordPatch): Promise<MemoryRecord | undefined> {
    const current = await this.get(userId, memoryId);
    if (!current) return undefined;
    const change = pickPatch(patch);
    // Status lives in the payload the search filter reads, so this alone takes a record out of search.
    await this.call('update', () => this.client.setPayload(this.collection, { wait: true, points: [pointId(userId, memoryId)], payload: change }));
    return { ...current, ...change };
  }

  async remove(userId: string, memoryId: string): Promise<boolean> {
    // The point id is derived from user and memory, so another user's memory is never reached.
    if (!(await this.get(userId, memoryId))) return false;
    await this.call('remove', () => this.client.delete(this.collection, { wait: true, points: [pointId(userId, memoryId)] }));
    return true;
  }

  async purgeUser(userId: string): Promise<number> {
    await this.init();
    const { count } = await this.call('purgeUser', () => this.client.count(this.collection, { filter: userFilter(userId), exact: true }));
    await this.call('purgeUser', () => this.client.delete(this.collection, { wait: true, filter: userFilter(userId) }));
    return count;
  }

  async close(): Promise<void> {
    // The REST client holds no connection of its own to close.
  }

  private async createCollection(): Promise<void> {
    const { exists } = await this.client.collectionExists(this.collection);
    if (!exists) {
      await this.client
        .createCollection(this.collection, {
          vectors: { size: this.dimensions, distance: 'Cosine' },
          // Qdrant's multitenancy advice: no global graph (m 0), one graph per tenant (payload_m),
          // since every query is filtered on one user.
          hnsw_config: { m: 0, payload_m: 16 },
        })
        .catch(async (err: unknown) => {
          // Another replica created it at the same moment: fine, as long as it is there now.
          if (!(await this.client.collectionExists(this.collection)).exists) throw err;
        });
    }
    const info = await this.client.getCollection(this.collection);
    const vectors = info.config.params.vectors;
    const size = vectors && 'size' in vectors ? Number(vectors.size) : undefined;
    if (size !== this.dimensions) {
      throw new VectorDimensionError({ expected: this.dimensions, actual: size ?? 0, where: `Qdrant collection ${this.collection}` });
    }
    await this.client.createPayloadIndex(this.collection, { wait: true, field_name: 'user_id', field_schema: { type: 'keyword', is_tenant: true } });
    await this.client.createPayloadIndex(this.collection, { wait: true, field_name: 'status', field_schema: 'keyword' });
  }

  private async scrollAll(userId: string, status?: MemoryStatus): Promise<MemoryRecord[]> {
    const records: MemoryRecord[] = [];
    let offset: string | number | undefined;
    do {
      const page = await this.call('list', () =>
        this.client.scroll(this.collection, {
          filter: userFilter(userId, status),
          limit: PAGE,
          with_payload: true,
          ...(offset === undefined ? {} : { offset }),
        }),
      );
      for (const p of page.points) records.push(p.payload as unknown as MemoryRecord);
      const next = page.next_page_offset;
      offset = typeof next === 'string' || typeof next === 'number' ? next : undefined;
    } while (offset !== undefined);
    return records;
  }

  /** Any failure of Qdrant itself is an outage (retryable); our own typed errors pass through. */
  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof MemoryError) throw err;
      throw new VectorStoreUnavailableError({ store: 'qdrant', operation }, { cause: err });
    }
  }
}

/** Every query carries this: the user, and for search the status. */
function userFilter(userId: string, status?: MemoryStatus) {
  return {
    must: [{ key: 'user_id', match: { value: userId } }, ...(status ? [{ key: 'status', match: { value: status } }] : [])],
  };
}

/** A UUID (version 5 layout, SHA-1) from user and memory id: Qdrant ids must be integers or UUIDs. */
export function pointId(userId: string, memoryId: string): string {
  const hash = createHash('sha1').update(`hermes-memory\0${userId}\0${memoryId}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
