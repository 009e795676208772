import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { QdrantClient } from '@qdrant/js-client-rest';
import { EmbeddedVectorStore } from '../src/longterm/embedded-vector-store.js';
import { QdrantVectorStore } from '../src/longterm/qdrant-vector-store.js';
import type { MemoryRecord, VectorStore } from '../src/longterm/vector-store.js';
import { VectorDimensionError } from '../src/longterm/vector-store-errors.js';

const DIMS = 8;

/** A store under test; `reopen` gives a new instance over the same data (stores that persist). */
interface StoreFactory {
  name: string;
  /** Data survives close and reopen of the same instance's storage (the embedded store). */
  reopenable: boolean;
  open(): Promise<{ store: VectorStore; reopen?: () => Promise<VectorStore> }>;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const embedded: StoreFactory = {
  name: 'EmbeddedVectorStore (usearch + files)',
  reopenable: true,
  async open() {
    const dataDir = await mkdtemp(join(tmpdir(), 'hermes-vectors-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const make = async () => {
      const store = new EmbeddedVectorStore({ dataDir, dimensions: DIMS, durable: false, compactMinLines: 8 });
      await store.init();
      cleanups.push(() => store.close());
      return store;
    };
    return { store: await make(), reopen: make };
  },
};

/** Registered only when a Qdrant is given (`QDRANT_URL=http://localhost:6333 npx vitest run ...`). */
function qdrant(url: string): StoreFactory {
  return {
    name: `QdrantVectorStore (${url})`,
    reopenable: false,
    async open() {
      // A collection per test: tests never see each other's points, and nothing is left behind.
      const collection = `hermes_contract_${randomUUID().replaceAll('-', '')}`;
      const apiKey = process.env.QDRANT_API_KEY;
      const store = new QdrantVectorStore({ url, collection, dimensions: DIMS, ...(apiKey ? { apiKey } : {}) });
      await store.init();
      cleanups.push(() => new QdrantClient({ url, ...(apiKey ? { apiKey } : {}), checkCompatibility: false }).deleteCollection(collection).then(() => {}));
      return { store };
    },
  };
}

const factories: StoreFactory[] = [embedded, ...(process.env.QDRANT_URL ? [qdrant(process.env.QDRANT_URL)] : [])];

/** A unit vector leaning towards axis `axis`, tilted by `tilt` towards the next axis. */
function direction(axis: number, tilt = 0): Float32Array {
  const v = new Float32Array(DIMS);
  v[axis % DIMS] = 1;
  v[(axis + 1) % DIMS] = tilt;
  return v;
}

function record(userId: string, content: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  const now = new Date().toISOString();
  return { memory_id: randomUUID(), user_id: userId, type: 'fact', content, confidence: 0.9, status: 'active', created_at: now, updated_at: now, ...extra };
}

/** A fresh user per test: stores are shared within a factory, users never are. */
const newUser = () => `user-${randomUUID()}`;

for (const factory of factories) {
  describe(`VectorStore contract: ${factory.name}`, () => {
    it('search returns the nearest active records of the user, best first, with cosine similarity', async () => {
      const { store } = await factory.open();
      const user = newUser();
      const far = record(user, 'far');
      const near = record(user, 'near');
      const middle = record(user, 'middle');
      await store.upsert(far, direction(4));
      await store.upsert(near, direction(0, 0.1));
      await store.upsert(middle, direction(0, 1));

      const hits = await store.search(user, direction(0), 3);
      expect(hits.map((h) => h.record.content)).toEqual(['near', 'middle', 'far']);
      expect(hits[0]!.similarity).toBeCloseTo(1 / Math.hypot(1, 0.1), 3);
      expect(hits[1]!.similarity).toBeCloseTo(1 / Math.SQRT2, 3);
      expect(hits[2]!.similarity).toBeCloseTo(0, 3);
      expect(hits[0]!.record).toEqual(near);
    });

    it('upserting the same memory_id replaces the record and its vector', async () => {
      const { store } = await factory.open();
      const user = newUser();
      const first = record(user, 'likes tea');
      await store.upsert(first, direction(1));
      await store.upsert({ ...first, content: 'likes coffee' }, direction(5));

      expect(await store.list(user)).toHaveLength(1);
      expect((await store.get(user, first.memory_id))?.content).toBe('likes coffee');
      const hits = await store.search(user, direction(5), 5);
      expect(hits).toHaveLength(1);
      expect(hits[0]!.similarity).toBeCloseTo(1, 3);
    });

    it("a user never sees another user's records by search, get or list", async () => {
      const { store } = await factory.open();
      const alice = newUser();
      const bob = newUser();
      const secret = record(alice, 'alice secret');
      await store.upsert(secret, direction(2));
      await store.upsert(record(bob, 'bob note'), direction(6));

      const bobHits = await store.search(bob, direction(2), 10);
      expect(bobHits.map((h) => h.record.content)).toEqual(['bob note']);
      expect(await store.get(bob, secret.memory_id)).toBeUndefined();
      expect((await store.list(bob)).map((r) => r.content)).toEqual(['bob note']);
      expect(await store.update(bob, secret.memory_id, { status: 'deleted' })).toBeUndefined();
      expect((await store.get(alice, secret.memory_id))?.status).toBe('active');
    });

    it('remove deletes one record and its vector, for that user only, and it stays gone after a reopen', async () => {
      const { store, reopen } = await factory.open();
      const user = newUser();
      const other = newUser();
      const gone = record(user, 'to be forgotten');
      const kept = record(user, 'to be kept');
      const theirs = record(other, 'not yours');
      await store.upsert(gone, direction(7));
      await store.upsert(kept, direction(7, 0.5));
      await store.upsert(theirs, direction(7));
      // Indexed first, so the removal has to take the vector out of a live index too.
      expect(await store.search(user, direction(7), 10)).toHaveLength(2);

      expect(await store.remove(other, gone.memory_id)).toBe(false);
      expect(await store.remove(user, gone.memory_id)).toBe(true);
      expect(await store.remove(user, gone.memory_id)).toBe(false);
      expect(await store.get(user, gone.memory_id)).toBeUndefined();
      expect((await store.list(user)).map((r) => r.content)).toEqual(['to be kept']);
      expect((await store.search(user, direction(7), 10)).map((h) => h.record.content)).toEqual(['to be kept']);
      expect((await store.list(other)).map((r) => r.content)).toEqual(['not yours']);
      if (factory.reopenable && reopen) {
        await store.close();
        const again = await reopen();
        expect((await again.list(user)).map((r) => r.content)).toEqual(['to be kept']);
        expect((await again.search(user, direction(7), 10)).map((h) => h.record.content)).toEqual(['to be kept']);
      }
    });

    it('a record leaving the active status leaves search but stays listable, and comes back when restored', async () => {
      const { store } = await factory.open();
      const user = newUser();
      const old = record(user, 'old address');
      const kept = record(user, 'favourite colour');
      await store.upsert(old, direction(3));
      await store.upsert(kept, direction(3, 2));

      const updated = await store.update(user, old.memory_id, { status: 'superseded', superseded_by: kept.memory_id });
      expect(updated).toMatchObject({ status: 'superseded', superseded_by: kept.memory_id, content: 'old address' });
      expect((await store.search(user, direction(3), 10)).map((h) => h.record.content)).toEqual(['favourite colour']);
      expect((await store.list(user, { status: 'superseded' })).map((r) => r.memory_id)).toEqual([old.memory_id]);

      await store.update(user, old.memory_id, { status: 'active' });
      expect((await store.search(user, direction(3), 10)).map((h) => h.record.content)).toEqual(['old address', 'favourite colour']);
    });

    it('list is newest first and honours status and limit', async () => {
      const { store } = await factory.open();
      const user = newUser();
      const at = (minute: number) => `2026-01-01T00:0${minute}:00.000Z`;
      await store.upsert(record(user, 'second', { created_at: at(2) }), direction(0));
      await store.upsert(record(user, 'third', { created_at: at(3), status: 'archived' }), direction(1));
      await store.upsert(record(user, 'first', { created_at: at(1) }), direction(2));

      expect((await store.list(user)).map((r) => r.content)).toEqual(['third', 'second', 'first']);
      expect((await store.list(user, { status: 'active' })).map((r) => r.content)).toEqual(['second', 'first']);
      expect((await store.list(user, { limit: 1 })).map((r) => r.content)).toEqual(['third']);
    });

    it('purgeUser removes every record of the user, returns how many, and leaves other users alone', async () => {
      const { store } = await factory.open();
      const user = newUser();
      const other = newUser();
      const gone = record(user, 'a');
      await store.upsertMany([
        { record: gone, vector: direction(0) },
        { record: record(user, 'b', { status: 'archived' }), vector: direction(1) },
        { record: record(user, 'c'), vector: direction(2) },
        { record: record(other, 'stays'), vector: direction(0) },
      ]);

      expect(await store.purgeUser(user)).toBe(3);
      expect(await store.search(user, direction(0), 10)).toEqual([]);
      expect(await store.list(user)).toEqual([]);
      expect(await store.get(user, gone.memory_id)).toBeUndefined();
      expect(await store.purgeUser(user)).toBe(0);
      expect((await store.search(other, direction(0), 10)).map((h) => h.record.content)).toEqual(['stays']);
    });

    it('search returns at most `limit` hits', async () => {
      const { store } = await factory.open();
      const user = newUser();
      await store.upsertMany(Array.from({ length: 30 }, (_, i) => ({ record: record(user, `m${i}`), vector: direction(i, i / 30) })));

      expect(await store.search(user, direction(0), 7)).toHaveLength(7);
      expect(await store.search(user, direction(0), 100)).toHaveLength(30);
    });

    it('a vector of the wrong dimension is refused with a typed error, on write and on search', async () => {
      const { store } = await factory.open();
      const user = newUser();
      const wrong = new Float32Array(DIMS + 1).fill(0.5);
      await expect(store.upsert(record(user, 'x'), wrong)).rejects.toBeInstanceOf(VectorDimensionError);
      await expect(store.search(user, wrong, 5)).rejects.toMatchObject({ code: 'vector_dimension_mismatch', expected: DIMS, actual: DIMS + 1 });
      expect(await store.list(user)).toEqual([]);
    });

    it.runIf(factory.reopenable)('records, statuses and vectors survive close and reopen', async () => {
      const { store, reopen } = await factory.open();
      const user = newUser();
      const kept = record(user, 'kept');
      const archived = record(user, 'archived later');
      // Enough rewrites of one record that the log is compacted at least once on the way.
      for (let i = 0; i < 10; i++) await store.upsert({ ...kept, content: `kept v${i}` }, direction(0, i / 10));
      await store.upsert(archived, direction(1));
      await store.update(user, archived.memory_id, { status: 'archived' });
      await store.close();

      const again = await reopen!();
      expect((await again.get(user, kept.memory_id))?.content).toBe('kept v9');
      expect((await again.get(user, archived.memory_id))?.status).toBe('archived');
      const hits = await again.search(user, direction(0, 0.9), 10);
      expect(hits.map((h) => h.record.content)).toEqual(['kept v9']);
      expect(hits[0]!.similarity).toBeCloseTo(1, 4);
    });
  });
}
