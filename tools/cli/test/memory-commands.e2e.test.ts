import { Bus, ReplyError, serve } from '@hermes/bus';
import { contracts, wireError, type LongTermMemory } from '@hermes/contracts';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHermes } from './cli-runner.js';
import { natsHandles } from '@hermes/bus/internal';

const logger = createLogger({ service: 'cli-test', level: 'silent' });
let natsUrl: string;
let bus: Bus;
const requests: { subject: string; req: unknown }[] = [];

const memory = (over: Partial<LongTermMemory> = {}): LongTermMemory => ({
  memory_id: 'm_tea',
  user_id: 'alice',
  type: 'preference',
  content: 'The user prefers green tea over coffee.',
  confidence: 0.9,
  status: 'active',
  created_at: '2026-11-01T10:00:00.000Z',
  updated_at: '2026-11-01T10:00:00.000Z',
  ...over,
});

/** Stands in for the memory service's long-term subjects, recording what it was asked. */
beforeAll(async () => {
  natsUrl = (await startNatsServer()).url;
  bus = await Bus.connect({ servers: natsUrl, name: 'cli-memory-test', logger });
  serve(bus, contracts.memoryList, async (req) => {
    requests.push({ subject: 'list', req });
    const planted = memory({
      memory_id: 'm_bank',
      type: 'fact',
      content: 'The user banks with EvilBank.',
      provenance: { kind: 'tool_result', tools: ['read_page'], task_id: 't_1', approved_by: 'alice' },
    });
    return { memories: req.user_id === 'alice' ? [memory({ last_recalled_at: '2026-11-20T08:00:00.000Z' }), planted] : [] };
  });
  serve(bus, contracts.memoryRecall, async (req) => {
    requests.push({ subject: 'recall', req });
    return {
      memories: [{ memory: memory(), similarity: 0.684, score: 0.66 }],
      background: 'Background: what you remember…\n- (2026-11-01, preference, confidence 0.90) The user prefers green tea over coffee.',
    };
  });
  serve(bus, contracts.memoryForget, async (req) => {
    requests.push({ subject: 'forget', req });
    return { memories_removed: 4, sessions_removed: 2 };
  });
  serve(bus, contracts.memoryForgetOne, async (req) => {
    requests.push({ subject: 'forget_one', req });
    if (req.memory_id !== 'm_tea') throw new ReplyError(wireError('not_found', `no memory ${req.memory_id} for this user`));
    return { memory_id: req.memory_id, forgotten: true as const };
  });
  serve(bus, contracts.memoryRestore, async (req) => {
    requests.push({ subject: 'restore', req });
    if (req.memory_id === 'm_missing') throw new ReplyError(wireError('not_found', 'no archived memory m_missing for this user'));
    return { restored: [memory({ status: 'active' })] };
  });
  await natsHandles(bus).nc.flush();
});

afterAll(async () => {
  await bus?.drain();
  await cleanupAll();
});

const last = () => requests.at(-1);

describe('hermes memory', () => {
  it('list prints a table of the user’s memories, and passes --status and --limit', async () => {
    const out = await runHermes(natsUrl, ['memory', 'list', 'alice', '--status', 'active', '--limit', '10']);
    expect(out.code).toBe(0);
    expect(last()).toEqual({ subject: 'list', req: { user_id: 'alice', status: 'active', limit: 10 } });
    const [header, row, planted] = out.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+TYPE\s+STATUS\s+CONF\s+CREATED\s+RECALLED\s+FROM\s+CONTENT$/);
    // A memory written before provenance was kept is of unknown origin; a planted one names the tool.
    expect(row).toMatch(/^m_tea\s+preference\s+active\s+0\.90\s+2026-11-01\s+2026-11-20\s+unknown\s+The user prefers green tea over coffee\.$/);
    expect(planted).toMatch(/^m_bank\s+fact\s+active\s+0\.90\s+2026-11-01\s+-\s+tool_result:read_page\s+The user banks with EvilBank\.$/);
    expect((await runHermes(natsUrl, ['memory', 'list', 'bob'])).stdout.trim()).toBe('no memories for bob');
  });

  it('recall prints scores and the background block', async () => {
    const out = await runHermes(natsUrl, ['memory', 'recall', 'alice', 'tea or coffee?', '--k', '3', '--min-score', '0.2']);
    expect(out.code).toBe(0);
    expect(last()).toEqual({ subject: 'recall', req: { user_id: 'alice', query: 'tea or coffee?', k: 3, min_score: 0.2 } });
    expect(out.stdout).toMatch(/0\.660\s+0\.684\s+m_tea\s+unknown\s+The user prefers green tea/);
    expect(out.stdout).toContain('- (2026-11-01, preference, confidence 0.90) The user prefers green tea over coffee.');
  });

  it('forget reports what was removed; restore restores one or all, and a missing one fails with its code', async () => {
    const forgot = await runHermes(natsUrl, ['memory', 'forget', 'alice']);
    expect(forgot).toMatchObject({ code: 0, stdout: 'forgot alice: 4 memories and 2 sessions removed\n' });
    expect(last()).toEqual({ subject: 'forget', req: { user_id: 'alice' } });

    const all = await runHermes(natsUrl, ['memory', 'restore', 'alice', '--json']);
    expect(JSON.parse(all.stdout)).toEqual({ restored: [memory()] });
    expect(last()).toEqual({ subject: 'restore', req: { user_id: 'alice' } });
    const missing = await runHermes(natsUrl, ['memory', 'restore', 'alice', 'm_missing']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not_found');
  });

  it('forget with a memory id forgets only that memory; an unknown one fails with not_found', async () => {
    const one = await runHermes(natsUrl, ['memory', 'forget', 'alice', 'm_tea']);
    expect(one).toMatchObject({ code: 0, stdout: 'forgot memory m_tea of alice\n' });
    expect(last()).toEqual({ subject: 'forget_one', req: { user_id: 'alice', memory_id: 'm_tea' } });
    const missing = await runHermes(natsUrl, ['memory', 'forget', 'alice', 'm_other', '--json']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not_found');
  });

  it('rejects bad arguments before asking the service', async () => {
    const before = requests.length;
    expect((await runHermes(natsUrl, ['memory', 'list', 'not a user'])).code).toBe(2);
    expect((await runHermes(natsUrl, ['memory', 'recall', 'alice', 'q', '--min-score', '2'])).code).toBe(2);
    expect((await runHermes(natsUrl, ['memory', 'list', 'alice', '--status', 'gone'])).code).toBe(2);
    expect(requests.length).toBe(before);
  });
});
