import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedVectorStore } from '../src/longterm/embedded-vector-store.js';
import type { MemoryRecord } from '../src/longterm/vector-store.js';
import { VectorDimensionError } from '../src/longterm/vector-store-errors.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hermes-embedded-'));
  dirs.push(dir);
  return dir;
}

function record(userId: string, memoryId: string, content: string): MemoryRecord {
  const now = '2026-01-01T00:00:00.000Z';
  return { memory_id: memoryId, user_id: userId, type: 'preference', content, confidence: 1, status: 'active', created_at: now, updated_at: now };
}

const unit = (axis: number) => {
  const v = new Float32Array(4);
  v[axis] = 1;
  return v;
};

describe('EmbeddedVectorStore on disk', () => {
  it('a write torn by a crash is dropped on reopen and later writes still land', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.upsert(record('u1', 'm1', 'whole'), unit(0));
    await store.close();
    const log = (await readdir(join(dir, 'users'))).find((f) => f.endsWith('.jsonl'));
    await appendFile(join(dir, 'users', log!), '{"put":{"memory_id":"m2","user_id":"u1","conte');

    const reopened = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    expect((await reopened.list('u1')).map((r) => r.memory_id)).toEqual(['m1']);
    await reopened.upsert(record('u1', 'm3', 'after crash'), unit(1));
    await reopened.close();

    const third = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    expect((await third.search('u1', unit(1), 1))[0]?.record.content).toBe('after crash');
    await third.close();
  });

  it('a record of the release before (no provenance) reads back as it was; a record that is not a memory record is vector_store_corrupt', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.upsert(record('u1', 'm1', 'old'), unit(0));
    await store.upsert({ ...record('u1', 'm2', 'planted'), provenance: { kind: 'tool_result', tools: ['read_page'], task_id: 't_1' } }, unit(1));
    await store.close();
    const reopened = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    const listed = await reopened.list('u1');
    expect(listed.find((r) => r.memory_id === 'm1')?.provenance).toBeUndefined();
    expect(listed.find((r) => r.memory_id === 'm2')?.provenance).toEqual({ kind: 'tool_result', tools: ['read_page'], task_id: 't_1' });
    await reopened.close();

    const log = (await readdir(join(dir, 'users'))).find((f) => f.endsWith('.jsonl'));
    const bad = { ...record('u1', 'm3', 'bad'), provenance: { kind: 'rumour' } };
    await appendFile(join(dir, 'users', log!), `${JSON.stringify({ put: bad, key: '3', v: Buffer.from(unit(2).buffer).toString('base64') })}\n`);
    const third = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await expect(third.list('u1')).rejects.toMatchObject({ code: 'vector_store_corrupt', message: expect.stringMatching(/provenance/) });
    await third.close();
  });

  it('a data directory written with another dimension is refused, not mixed', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.init();
    await store.close();

    const other = new EmbeddedVectorStore({ dataDir: dir, dimensions: 8 });
    await expect(other.init()).rejects.toBeInstanceOf(VectorDimensionError);
    await expect(other.list('u1')).rejects.toMatchObject({ code: 'vector_dimension_mismatch', expected: 8, actual: 4 });
  });

  it('user ids never become paths: ids with slashes and dots stay inside the data directory, apart', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.upsert(record('../../escape', 'm1', 'dots'), unit(0));
    await store.upsert(record('a/b', 'm2', 'slash'), unit(0));
    await store.close();

    const files = await readdir(join(dir, 'users'));
    expect(files).toHaveLength(2);
    for (const file of files) expect(file).toMatch(/^[0-9a-f]{64}\.(jsonl|usearch|usearch\.json)$/);
    const reopened = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    expect((await reopened.search('a/b', unit(0), 5)).map((h) => h.record.content)).toEqual(['slash']);
    await reopened.close();
  });

  it('compaction keeps one line per live record', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4, compactMinLines: 10 });
    for (let i = 0; i < 25; i++) await store.upsert(record('u1', 'same', `v${i}`), unit(i % 4));
    await store.close();
    const log = (await readdir(join(dir, 'users'))).find((f) => f.endsWith('.jsonl'));
    const lines = (await readFile(join(dir, 'users', log!), 'utf8')).trim().split('\n');
    // Compacted whenever the log reached 10 lines: never more than 10 lines for one record.
    expect(lines.length).toBeLessThan(10);
    expect(JSON.parse(lines.at(-1)!).put.content).toBe('v24');
  });

  it('a restart loads the saved index and replays what was written after it, even without a clean close', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.upsertMany([0, 1, 2].map((axis) => ({ record: record('u1', `m${axis}`, `axis ${axis}`), vector: unit(axis) })));
    // The first search builds the index and saves it beside the log.
    await store.search('u1', unit(0), 1);
    expect((await readdir(join(dir, 'users'))).some((f) => f.endsWith('.usearch'))).toBe(true);
    // After the save: a replaced vector, an archived record and a new one, then a "crash" (no close).
    await store.upsert(record('u1', 'm0', 'axis 0 moved to 3'), unit(3));
    await store.update('u1', 'm1', { status: 'archived' });
    await store.upsert(record('u1', 'm9', 'new on axis 1'), unit(1));

    const restarted = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    expect((await restarted.search('u1', unit(3), 1))[0]?.record.content).toBe('axis 0 moved to 3');
    const hits = (await restarted.search('u1', unit(1), 4)).map((h) => h.record.memory_id);
    // m1 was archived after the save: it must not come back from the saved index.
    expect(hits[0]).toBe('m9');
    expect([...hits].sort()).toEqual(['m0', 'm2', 'm9']);
    await restarted.close();
    await store.close();
  });

  it('a damaged saved index is ignored and rebuilt from the log', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.upsert(record('u1', 'm1', 'one'), unit(2));
    await store.upsert(record('u1', 'm2', 'two'), unit(1));
    await store.search('u1', unit(2), 1);
    await store.close();
    const index = (await readdir(join(dir, 'users'))).find((f) => f.endsWith('.usearch'));
    await writeFile(join(dir, 'users', index!), 'not an index');

    const reopened = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    expect((await reopened.search('u1', unit(2), 1))[0]?.record.content).toBe('one');
    expect((await reopened.search('u1', unit(1), 1))[0]?.record.content).toBe('two');
    await reopened.close();
  });

  it('a saved index written by another usearch version is never loaded, only rebuilt from the log', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.upsert(record('u1', 'm1', 'one'), unit(3));
    await store.search('u1', unit(3), 1);
    await store.close();
    // An "old format" index with a matching checksum: only the engine tag can keep it from being
    // loaded (usearch would crash the process on it).
    const files = await readdir(join(dir, 'users'));
    const index = join(
      dir,
      'users',
      files.find((f) => f.endsWith('.usearch'))!,
    );
    const metaPath = join(
      dir,
      'users',
      files.find((f) => f.endsWith('.usearch.json'))!,
    );
    await writeFile(index, 'an index in some older format');
    const meta = JSON.parse(await readFile(metaPath, 'utf8')) as Record<string, unknown>;
    const sha256 = createHash('sha256').update('an index in some older format').digest('hex');
    await writeFile(metaPath, JSON.stringify({ ...meta, sha256, engine: 'usearch@1.0.0' }));

    const reopened = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    expect((await reopened.search('u1', unit(3), 1))[0]?.record.content).toBe('one');
    await reopened.close();
  });

  it('past maxLoadedUsers the least recently used user is saved and dropped, and loads again intact', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4, maxLoadedUsers: 2 });
    await store.upsert(record('u1', 'm1', 'first'), unit(0));
    await store.search('u1', unit(0), 1);
    // Written after u1's index was saved: only an eviction (or close) saves it again.
    await store.upsert(record('u1', 'm2', 'second'), unit(1));
    await store.upsert(record('u2', 'm3', 'other'), unit(2));
    await store.upsert(record('u3', 'm4', 'third user'), unit(3));
    await store.get('u3', 'm4');
    // u1's eviction was queued behind nothing on u1's queue, so any later call of u1 runs after it.
    expect((await store.get('u1', 'm1'))?.content).toBe('first');

    const u1 = createHash('sha256').update('u1').digest('hex');
    const meta = JSON.parse(await readFile(join(dir, 'users', `${u1}.usearch.json`), 'utf8')) as { lines: number };
    expect(meta.lines).toBe(2);
    expect((await store.search('u1', unit(1), 1))[0]?.record.content).toBe('second');
    expect((await store.list('u1')).map((r) => r.memory_id).sort()).toEqual(['m1', 'm2']);
    await store.close();
  });

  it('a file-system failure is a retryable unavailable error, and the store works again once the disk does', async () => {
    const dir = await dataDir();
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await store.upsert(record('u1', 'm1', 'before'), unit(0));
    await store.close();
    // The users directory stops being a directory: every open of a log under it fails (ENOTDIR).
    await rm(join(dir, 'users'), { recursive: true });
    await writeFile(join(dir, 'users'), 'not a directory');

    const broken = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4 });
    await expect(broken.upsert(record('u2', 'm2', 'lost?'), unit(1))).rejects.toMatchObject({ code: 'vector_store_unavailable' });
    await rm(join(dir, 'users'));
    await mkdir(join(dir, 'users'));
    await broken.upsert(record('u2', 'm2', 'after'), unit(1));
    expect((await broken.search('u2', unit(1), 1))[0]?.record.content).toBe('after');
    await broken.close();
  });

  it('calls after close are refused with a retryable unavailable error', async () => {
    const store = new EmbeddedVectorStore({ dataDir: await dataDir(), dimensions: 4 });
    await store.close();
    await expect(store.get('u1', 'm1')).rejects.toMatchObject({ code: 'vector_store_unavailable' });
  });
});
