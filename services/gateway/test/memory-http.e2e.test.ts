import { Bus, ReplyError, serve } from '@hermes/bus';
import { contracts, wireError, type LongTermMemory, type MemoryForgetOneRequest, type MemoryForgetRequest, type MemoryListRequest } from '@hermes/contracts';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGatewayServer, type GatewayServer } from '../src/index.js';
import { ADMIN, ALICE, apiKeys, logger } from './support/test-keys.js';
import { natsHandles } from '@hermes/bus/internal';

let bus: Bus;
let gateway: GatewayServer;
let base: string;
/** Every forget the stand-in memory service received. */
const forgets: MemoryForgetRequest[] = [];
/** Users whose forget the stand-in refuses as busy (a loop holds one of their sessions). */
const busy = new Set<string>();
/** Every forget of one memory the stand-in memory service received; it holds only alice's m_bank. */
const forgetOnes: MemoryForgetOneRequest[] = [];
/** Every list the stand-in memory service received. */
const lists: MemoryListRequest[] = [];
const PLANTED: LongTermMemory = {
  memory_id: 'm_bank',
  user_id: 'alice',
  type: 'fact',
  content: 'The user banks with EvilBank.',
  confidence: 1,
  status: 'active',
  created_at: '2026-11-01T10:00:00.000Z',
  updated_at: '2026-11-01T10:00:00.000Z',
  provenance: { kind: 'tool_result', tools: ['read_page'], task_id: 't_1', approved_by: 'alice' },
};

beforeAll(async () => {
  const nats = await startNatsServer();
  bus = await Bus.connect({ servers: nats.url, name: 'gateway-memory-test', logger });
  serve(bus, contracts.memoryForget, async (req) => {
    forgets.push(req);
    if (busy.has(req.user_id)) throw new ReplyError(wireError('session_busy', 'session s-1 is locked by another holder', { session_id: 's-1' }));
    return { memories_removed: 3, sessions_removed: 2 };
  });
  serve(bus, contracts.memoryForgetOne, async (req) => {
    forgetOnes.push(req);
    if (req.user_id !== 'alice' || req.memory_id !== 'm_bank')
      throw new ReplyError(wireError('not_found', `no memory ${req.memory_id} for this user`, { memory_id: req.memory_id }));
    return { memory_id: req.memory_id, forgotten: true as const };
  });
  serve(bus, contracts.memoryList, async (req) => {
    lists.push(req);
    return { memories: req.user_id === 'alice' ? [PLANTED] : [] };
  });
  await natsHandles(bus).nc.flush();
  gateway = createGatewayServer({ bus, apiKeys, logger });
  const { port } = await gateway.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${port}`;
});

beforeEach(() => {
  forgets.length = 0;
  forgetOnes.length = 0;
  lists.length = 0;
  busy.clear();
});

afterAll(async () => {
  await gateway?.close();
  await bus?.drain();
  await cleanupAll();
});

async function forget(user: string, key?: string) {
  const res = await fetch(`${base}/v1/users/${user}/memory`, { method: 'DELETE', headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> & { code?: string; retryable?: boolean } };
}

describe('DELETE /v1/users/:id/memory', () => {
  it("forgets the caller's own memory and answers what was removed", async () => {
    expect(await forget('alice', ALICE)).toEqual({ status: 200, json: { memories_removed: 3, sessions_removed: 2 } });
    expect(forgets).toEqual([{ user_id: 'alice' }]);
  });

  it("refuses another user's memory with 403 without asking the memory service; an admin may", async () => {
    const refused = await forget('bob', ALICE);
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('forbidden');
    expect(forgets).toEqual([]);
    expect((await forget('bob', ADMIN)).status).toBe(200);
    expect(forgets).toEqual([{ user_id: 'bob' }]);
  });

  it('answers 401 without credentials and 400 for an invalid user id', async () => {
    expect((await forget('alice')).status).toBe(401);
    const invalid = await forget('bad%2Fid', ADMIN);
    expect(invalid.status).toBe(400);
    expect(invalid.json.code).toBe('invalid_user_id');
    expect(forgets).toEqual([]);
  });

  it('passes a busy session on as 409 session_busy, retryable', async () => {
    busy.add('alice');
    const res = await forget('alice', ALICE);
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ code: 'session_busy', retryable: true });
  });
});

describe('DELETE /v1/users/:id/memory/:memory_id', () => {
  const forgetOne = async (path: string, key?: string) => {
    const res = await fetch(`${base}${path}`, { method: 'DELETE', headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as Record<string, unknown> & { code?: string } };
  };

  it("forgets one of the caller's own memories; an id the memory service does not hold for the user is 404 not_found as a problem", async () => {
    expect(await forgetOne('/v1/users/alice/memory/m_bank', ALICE)).toMatchObject({ status: 200, json: { memory_id: 'm_bank', forgotten: true } });
    expect(forgetOnes).toEqual([{ user_id: 'alice', memory_id: 'm_bank' }]);
    const unknown = await forgetOne('/v1/users/alice/memory/m_unknown', ALICE);
    expect(unknown).toMatchObject({ status: 404, json: { status: 404, code: 'not_found', title: 'Not found' } });
    expect(unknown.type).toMatch(/^application\/problem\+json/);
  });

  it("refuses another user's memory with 403 without asking the memory service; an admin's request is the memory service's to answer", async () => {
    expect(await forgetOne('/v1/users/bob/memory/m_bank', ALICE)).toMatchObject({ status: 403, json: { code: 'forbidden' } });
    expect(forgetOnes).toEqual([]);
    // Bob holds no m_bank (it is alice's): the admin acting for bob gets not_found, not alice's memory.
    expect(await forgetOne('/v1/users/bob/memory/m_bank', ADMIN)).toMatchObject({ status: 404, json: { code: 'not_found' } });
    expect(forgetOnes).toEqual([{ user_id: 'bob', memory_id: 'm_bank' }]);
  });

  it('answers 401 without credentials and 400 for an invalid memory id, without asking the memory service', async () => {
    expect((await forgetOne('/v1/users/alice/memory/m_bank')).status).toBe(401);
    expect(await forgetOne('/v1/users/alice/memory/bad.id', ALICE)).toMatchObject({ status: 400, json: { code: 'invalid_memory_id' } });
    expect(await forgetOne(`/v1/users/alice/memory/${'m'.repeat(129)}`, ALICE)).toMatchObject({ status: 400, json: { code: 'invalid_memory_id' } });
    expect(forgetOnes).toEqual([]);
  });
});

describe('GET /v1/users/:id/memory', () => {
  const list = async (path: string, key: string) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> & { code?: string } };
  };

  it("lists the caller's memories with their provenance, passing status and limit on", async () => {
    expect(await list('/v1/users/alice/memory?status=active&limit=10', ALICE)).toEqual({ status: 200, json: { memories: [PLANTED] } });
    expect(lists).toEqual([{ user_id: 'alice', status: 'active', limit: 10 }]);
  });

  it("refuses another user's memories with 403 (an admin may read them) and a bad query with 400, without asking the memory service", async () => {
    expect(await list('/v1/users/bob/memory', ALICE)).toMatchObject({ status: 403, json: { code: 'forbidden' } });
    expect(await list('/v1/users/alice/memory?status=gone', ALICE)).toMatchObject({ status: 400, json: { code: 'invalid_query' } });
    expect((await list('/v1/users/alice/memory?limit=0', ALICE)).status).toBe(400);
    expect(lists).toEqual([]);
    expect(await list('/v1/users/bob/memory', ADMIN)).toEqual({ status: 200, json: { memories: [] } });
  });
});
