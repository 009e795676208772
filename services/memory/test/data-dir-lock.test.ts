import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLock } from '../src/longterm/data-dir-lock.js';
import { EmbeddedVectorStore } from '../src/longterm/embedded-vector-store.js';

// The child holds the lock through the built module, as a second memory replica would.
const builtLock = fileURLToPath(new URL('../dist/longterm/data-dir-lock.js', import.meta.url));
const fast = { refreshMs: 100, waitMs: 400 };

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hermes-lock-'));
  dirs.push(dir);
  return dir;
}

/** Another process that takes the directory and keeps it (touching the file) until killed. */
async function otherProcessHolding(dir: string): Promise<ChildProcess> {
  const code = `const { DataDirLock } = await import(${JSON.stringify(builtLock)}); await DataDirLock.acquire(${JSON.stringify(dir)}, { refreshMs: 100 }); console.log('held'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
    child.once('exit', (c) => reject(new Error(`lock holder exited with ${c}`)));
  });
  return child;
}

const store = (dir: string) => new EmbeddedVectorStore({ dataDir: dir, dimensions: 4, ownerLock: fast });

describe('the embedded store data directory has one owner', () => {
  it('refuses a directory another live process holds, naming it, and takes it at once when that process was killed', async () => {
    const dir = await dataDir();
    const other = await otherProcessHolding(dir);
    await expect(store(dir).init()).rejects.toMatchObject({
      code: 'vector_store_locked',
      owner: { pid: other.pid },
      message: expect.stringContaining('QDRANT_URL'),
    });

    other.kill('SIGKILL');
    await once(other, 'exit');
    // Its file is still there (no clean exit), but its process is gone on this host.
    expect(JSON.parse(await readFile(join(dir, 'owner.lock'), 'utf8')).pid).toBe(other.pid);
    // With a long refresh the file would only be stale after 15 s: taking it sooner shows the pid check.
    const started = Date.now();
    const mine = new EmbeddedVectorStore({ dataDir: dir, dimensions: 4, ownerLock: { refreshMs: 5_000 } });
    await mine.init();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(JSON.parse(await readFile(join(dir, 'owner.lock'), 'utf8')).pid).toBe(process.pid);
    await mine.close();
    await expect(stat(join(dir, 'owner.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('waits out a file of another host until it is stale, then takes it over', async () => {
    const dir = await dataDir();
    const path = join(dir, 'owner.lock');
    await writeFile(path, JSON.stringify({ host: 'another-node', pid: 4242, token: 'theirs', since: '2026-01-01T00:00:00.000Z' }));
    // Its owner on the other node keeps touching it.
    const touching = setInterval(() => void utimes(path, new Date(), new Date()).catch(() => undefined), fast.refreshMs / 2);
    try {
      await expect(store(dir).init()).rejects.toMatchObject({ code: 'vector_store_locked', owner: { host: 'another-node' } });
    } finally {
      clearInterval(touching);
    }
    // Then it stops: its pod is gone, and after three refreshes without a touch the file is stale.
    const mine = store(dir);
    await mine.init();
    expect(JSON.parse(await readFile(path, 'utf8')).host).not.toBe('another-node');
    await mine.close();
  });

  it('lets two stores of one process share the directory; the file goes with the last close', async () => {
    const dir = await dataDir();
    const a = store(dir);
    const b = store(dir);
    await a.init();
    await b.init();
    await a.close();
    expect((await stat(join(dir, 'owner.lock'))).isFile()).toBe(true);
    await b.close();
    await expect(stat(join(dir, 'owner.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('stops serving once another process has taken the directory over', async () => {
    const dir = await dataDir();
    const lost: unknown[] = [];
    const lock = await DataDirLock.acquire(dir, { refreshMs: 50, onLost: (owner) => lost.push(owner) });
    const s = store(dir);
    await s.init();
    // As if this process had stalled past the stale time and another replica had started.
    await writeFile(join(dir, 'owner.lock'), JSON.stringify({ host: 'elsewhere', pid: 1, token: 'usurper', since: new Date().toISOString() }));
    await new Promise((r) => setTimeout(r, 200));
    expect(lock.isLost).toBe(true);
    expect(lost).toEqual([expect.objectContaining({ token: 'usurper' })]);
    await expect(s.list('u1')).rejects.toMatchObject({ code: 'vector_store_unavailable', message: expect.stringContaining('took the data directory over') });
    // Its close leaves the new owner's file alone.
    await s.close();
    await lock.release();
    expect(JSON.parse(await readFile(join(dir, 'owner.lock'), 'utf8')).token).toBe('usurper');
  });
});
