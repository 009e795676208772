import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, type LongTermMemory, type MemoryStatus } from '@hermes/contracts';
import { request, type Bus } from '@hermes/bus';
import { cleanupAll, lastUserMessageText, type RecordedRequest, type ScriptedLlm, type ScriptedResponse } from '@hermes/testkit';
import { EXTRACTION_INSTRUCTIONS } from '../src/longterm/extraction-prompt.js';
import type { startMemoryService } from '../src/memory-service.js';
import { eventually, remoteError } from './support.js';
import { startLongTermStack } from './longterm-stack.js';
import { natsHandles } from '@hermes/bus/internal';

const DAY = 86_400_000;

/** Every file under `dir`. */
function readTree(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

type JudgeRule = { when: RegExp; answer: (prompt: string) => string; before?: () => void };

/**
 * The scripted model as the extraction judge: the latest rule whose pattern matches the new
 * messages answers. Other requests (summaries) get a plain answer.
 */
function judgeResponder(rules: JudgeRule[]) {
  return ({ body }: RecordedRequest): ScriptedResponse => {
    if (body.messages?.[0]?.content !== EXTRACTION_INSTRUCTIONS) return { content: 'summary' };
    const prompt = lastUserMessageText(body);
    const newMessages = prompt.slice(prompt.indexOf('New messages:'));
    const rule = [...rules].reverse().find((r) => r.when.test(newMessages));
    rule?.before?.();
    return { content: rule ? rule.answer(prompt) : '{"memories": []}' };
  };
}

describe('long-term memory: extraction, recall, correction, isolation, outage, archival, forgetting', () => {
  let redis: Redis;
  let service: Bus;
  let client: Bus;
  let llm: ScriptedLlm;
  let dataDir: string;
  let memory: ReturnType<typeof startMemoryService>;
  let stack: Awaited<ReturnType<typeof startLongTermStack>> | undefined;
  const rules: JudgeRule[] = [];

  const say = (user_id: string, session_id: string, ...turns: [role: 'user' | 'assistant', content: string][]) =>
    request(client, contracts.sessionAppend, { user_id, session_id, messages: turns.map(([role, content]) => ({ role, content })) });
  const list = async (user_id: string, status?: MemoryStatus) =>
    (await request(client, contracts.memoryList, { user_id, ...(status ? { status } : {}) })).memories;
  const recall = (user_id: string, query: string) => request(client, contracts.memoryRecall, { user_id, query, k: 5 });
  const judgeRequests = () => llm.requests.filter((r) => r.body.messages?.[0]?.content === EXTRACTION_INSTRUCTIONS);

  beforeAll(async () => {
    stack = await startLongTermStack({ responder: judgeResponder(rules), keyPrefix: 'hermes-ltm:', tuning: { archiveAfterMs: 90 * DAY } });
    ({ redis, service, client, llm, dataDir, memory } = stack);
  });

  afterAll(async () => {
    await stack?.close();
    await cleanupAll();
  });

  let tea: LongTermMemory;

  it('extracts memories from a conversation off the reply path, writes only confident ones, and recalls them for that user only', async () => {
    rules.push({
      when: /tea/,
      answer: () =>
        JSON.stringify({
          memories: [
            { type: 'preference', content: 'The user prefers green tea over coffee.', confidence: 0.9 },
            { type: 'fact', content: 'The user might be moving to Lisbon.', confidence: 0.4 },
          ],
        }),
    });
    const started = Date.now();
    await say('alice', 'a-1', ['user', 'I always drink green tea, never coffee.'], ['assistant', 'Noted: green tea for you.']);
    // The append is answered before the judge is even asked (debounced, then a queued job).
    expect(judgeRequests()).toHaveLength(0);
    const memories = await eventually(async () => ((await list('alice')).length > 0 ? list('alice') : undefined), 'the extracted memory');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(memories).toHaveLength(1);
    tea = memories[0]!;
    expect(tea).toMatchObject({ user_id: 'alice', type: 'preference', content: 'The user prefers green tea over coffee.', confidence: 0.9, status: 'active' });
    expect(tea.source?.session_id).toBe('a-1');
    expect(tea.provenance).toEqual({ kind: 'conversation', session_id: 'a-1' });

    const found = await recall('alice', 'does the user prefer green tea or coffee?');
    expect(found.memories.map((m) => m.memory.memory_id)).toEqual([tea.memory_id]);
    expect(found.memories[0]!.score).toBeGreaterThanOrEqual(0.35);
    expect(found.background).toContain(
      `(${tea.created_at.slice(0, 10)}, preference, confidence 0.90, from conversation) The user prefers green tea over coffee.`,
    );
    expect((await list('alice'))[0]!.last_recalled_at).toBeDefined();

    const other = await recall('bob', 'does the user prefer green tea or coffee?');
    expect(other).toEqual({ memories: [], background: '' });
    // Below the minimum score: an unrelated query recalls nothing.
    expect((await recall('alice', 'quarterly revenue spreadsheet')).memories).toEqual([]);
  });

  it('a correction supersedes the old memory, which stays in history out of recall', async () => {
    rules.push({
      when: /switched to coffee/,
      answer: (prompt) => {
        const held = /- id (m_[0-9a-f]+) \(preference[^)]*\): The user prefers green tea/.exec(prompt)?.[1];
        return JSON.stringify({
          memories: [{ type: 'correction', content: 'The user now prefers coffee over green tea.', confidence: 0.95, supersedes: held }],
        });
      },
    });
    await say('alice', 'a-2', ['user', 'I have switched to coffee, no more tea for me.']);
    const old = await eventually(async () => (await list('alice', 'superseded'))[0], 'the superseded memory');
    expect(old.memory_id).toBe(tea.memory_id);
    const [current] = await list('alice', 'active');
    expect(old.superseded_by).toBe(current!.memory_id);
    expect(current).toMatchObject({ type: 'correction', content: 'The user now prefers coffee over green tea.' });
    const found = await recall('alice', 'does the user prefer coffee or green tea?');
    expect(found.memories.map((m) => m.memory.memory_id)).toEqual([current!.memory_id]);
  });

  it("no memory subject lets another user read or change alice's memories or sessions", async () => {
    const alices = await list('alice');
    expect(alices.length).toBeGreaterThan(0);
    expect((await recall('mallory', 'user prefers coffee green tea')).memories).toEqual([]);
    expect(await list('mallory')).toEqual([]);
    const restore = await remoteError(request(client, contracts.memoryRestore, { user_id: 'mallory', memory_id: alices[0]!.memory_id }));
    expect(restore.code).toBe('not_found');
    // alice's session id names mallory's own (empty) session when he uses it.
    expect((await request(client, contracts.sessionRead, { user_id: 'mallory', session_id: 'a-1' })).messages).toEqual([]);
    expect((await request(client, contracts.sessionContext, { user_id: 'mallory', session_id: 'a-1', model: 'gpt-4o', context_limit: 8000 })).messages).toEqual(
      [],
    );
    expect((await remoteError(request(client, contracts.sessionMessage, { user_id: 'mallory', session_id: 'a-1', message_id: 'x' }))).code).toBe('not_found');
    expect((await request(client, contracts.sessionList, { user_id: 'mallory' })).sessions).toEqual([]);
    expect(await request(client, contracts.sessionDelete, { user_id: 'mallory', session_id: 'a-1' })).toEqual({ deleted: false, messages: 0 });
    await request(client, contracts.workingSet, { user_id: 'alice', task_id: 't-alice', entries: [{ subtask_id: 's1', key: 'output', value: 'secret' }] });
    expect((await remoteError(request(client, contracts.workingGet, { user_id: 'mallory', task_id: 't-alice' }))).code).toBe('forbidden');
    // Forgetting "mallory" forgets mallory only.
    expect(await request(client, contracts.memoryForget, { user_id: 'mallory' })).toEqual({ memories_removed: 0, sessions_removed: 0, recordings_removed: 0 });
    expect(await list('alice')).toEqual(alices);
    expect((await request(client, contracts.sessionRead, { user_id: 'alice', session_id: 'a-1' })).messages).toHaveLength(2);
  });

  it('invalid judge output is logged and acked, nothing is written, and later turns are still extracted', async () => {
    rules.push({ when: /gibberish/, answer: () => 'Sure! Here are the memories: none really' });
    rules.push({ when: /vim/, answer: () => JSON.stringify({ memories: [{ type: 'preference', content: 'The user edits code in vim.', confidence: 0.8 }] }) });
    const before = judgeRequests().length;
    await say('dave', 'd-1', ['user', 'gibberish gibberish']);
    await eventually(async () => (judgeRequests().length > before ? true : undefined), 'the judge call');
    await eventually(async () => {
      const info = await natsHandles(service).jsm.consumers.info(service.subjects.streams.memoryJobs, service.subjects.consumers.memoryExtract);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    }, 'the extraction job to be acked');
    expect(await list('dave')).toEqual([]);
    await say('dave', 'd-1', ['user', 'For the record I use vim for everything.']);
    const [vim] = await eventually(async () => ((await list('dave')).length ? list('dave') : undefined), "dave's memory");
    expect(vim!.content).toBe('The user edits code in vim.');
    // The invalid batch was not judged again: the second judge call saw only the new message.
    const last = judgeRequests().at(-1)!;
    expect(JSON.stringify(last.body)).not.toContain('gibberish');
  });

  it('a judge call that fails (503) is retried by redelivery, and the memory is written then', async () => {
    rules.push({ when: /Rust/, answer: () => JSON.stringify({ memories: [{ type: 'fact', content: 'The user writes services in Rust.', confidence: 0.9 }] }) });
    const before = judgeRequests().length;
    llm.enqueue({ status: 503, message: 'overloaded' });
    await say('erin', 'e-1', ['user', 'Most of my services are written in Rust.']);
    const [rust] = await eventually(async () => ((await list('erin')).length ? list('erin') : undefined), "erin's memory", 20_000);
    expect(rust!.content).toBe('The user writes services in Rust.');
    // The failed call and the retry; the messages were judged again, not skipped.
    const calls = judgeRequests().slice(before);
    expect(calls).toHaveLength(2);
    expect(JSON.stringify(calls[1]!.body)).toContain('Most of my services are written in Rust.');
  });

  it('a write that fails while the vector store is unavailable is retried with back-off and lands when it is back', async () => {
    const users = join(dataDir, 'users');
    const away = join(dataDir, 'users-away');
    // The store breaks for real between extraction and the write: its user directory becomes a file (ENOTDIR).
    rules.push({
      when: /standup/,
      before: () => {
        renameSync(users, away);
        writeFileSync(users, 'not a directory');
      },
      answer: () => JSON.stringify({ memories: [{ type: 'fact', content: 'The user has a standup every day at 9:30.', confidence: 0.85 }] }),
    });
    await say('carol', 'c-1', ['user', 'Remind me that my standup is at 9:30 every day.']);
    const writes = () => natsHandles(service).jsm.consumers.info(service.subjects.streams.memoryJobs, service.subjects.consumers.memoryWrites);
    await eventually(async () => ((await writes()).num_redelivered > 0 ? true : undefined), 'a redelivered write');
    const down = await remoteError(request(client, contracts.memoryList, { user_id: 'carol' }));
    expect(down.wire).toMatchObject({ code: 'unavailable', retryable: true });
    const held = await writes();
    expect(held.num_ack_pending + held.num_pending).toBeGreaterThanOrEqual(1);

    rmSync(users);
    renameSync(away, users);
    const [standup] = await eventually(async () => ((await list('carol')).length ? list('carol') : undefined), 'the retried write');
    expect(standup!.content).toBe('The user has a standup every day at 9:30.');
    expect((await recall('carol', 'what time is the standup every day?')).memories).toHaveLength(1);
  });

  it('archives memories not recalled for the configured time and restores them on request', async () => {
    const archivedCount = await memory.longTerm!.archival.sweep(Date.now() + 91 * DAY);
    expect(archivedCount).toBeGreaterThanOrEqual(2);
    expect(await list('carol', 'active')).toEqual([]);
    const [cold] = await list('carol', 'archived');
    expect((await recall('carol', 'what time is the standup every day?')).memories).toEqual([]);

    const { restored } = await request(client, contracts.memoryRestore, { user_id: 'carol', memory_id: cold!.memory_id });
    expect(restored.map((m) => [m.memory_id, m.status])).toEqual([[cold!.memory_id, 'active']]);
    expect((await recall('carol', 'what time is the standup every day?')).memories.map((m) => m.memory.memory_id)).toEqual([cold!.memory_id]);
    // A sweep right after leaves it: restoring counts as a recall.
    await memory.longTerm!.archival.sweep();
    expect((await list('carol', 'active')).map((m) => m.memory_id)).toEqual([cold!.memory_id]);
    // Restoring everything brings dave's back too; restoring what is not archived is not_found.
    expect((await request(client, contracts.memoryRestore, { user_id: 'dave' })).restored).toHaveLength(1);
    expect((await remoteError(request(client, contracts.memoryRestore, { user_id: 'carol', memory_id: cold!.memory_id }))).code).toBe('not_found');
  });

  it("forgetting one memory removes it from list, recall and the data directory, and its write coming again does not bring it back; another user's id and an unknown id are not_found and remove nothing", async () => {
    const write = (user_id: string, memory_id: string, content: string) =>
      service.publish(contracts.memoryWrite, { memory_id, user_id, type: 'fact', content, confidence: 0.9, created_at: new Date().toISOString() });
    await write('dora', 'm_dora_bike', 'The user rides a red bicycle to work.');
    await write('dora', 'm_dora_cat', 'The user has a cat named Pixel.');
    await write('fay', 'm_fay_boat', 'The user sails a small boat on weekends.');
    await eventually(async () => ((await list('dora')).length === 2 && (await list('fay')).length === 1 ? true : undefined), 'the three writes');
    const fayBefore = await list('fay');

    expect(await request(client, contracts.memoryForgetOne, { user_id: 'dora', memory_id: 'm_dora_bike' })).toEqual({
      memory_id: 'm_dora_bike',
      forgotten: true,
    });
    expect((await list('dora')).map((m) => m.memory_id)).toEqual(['m_dora_cat']);
    expect((await recall('dora', 'how does the user get to work on a red bicycle?')).memories.map((m) => m.memory.memory_id)).not.toContain('m_dora_bike');
    // Off the disk too, not merely out of recall: no file of the store holds its text any more.
    expect(readTree(dataDir).filter((f) => readFileSync(f).includes('red bicycle'))).toEqual([]);

    // The write that stored it comes again (as a redelivery does after a replica died before its
    // ack): it is dropped, and the memory stays forgotten.
    await write('dora', 'm_dora_bike', 'The user rides a red bicycle to work.');
    await eventually(async () => {
      const info = await natsHandles(service).jsm.consumers.info(service.subjects.streams.memoryJobs, service.subjects.consumers.memoryWrites);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    }, 'the repeated write to be consumed');
    expect((await list('dora')).map((m) => m.memory_id)).toEqual(['m_dora_cat']);
    expect(readTree(dataDir).filter((f) => readFileSync(f).includes('red bicycle'))).toEqual([]);

    // Fay's memory named by dora is not dora's: not_found, and fay keeps it.
    expect((await remoteError(request(client, contracts.memoryForgetOne, { user_id: 'dora', memory_id: 'm_fay_boat' }))).code).toBe('not_found');
    expect((await remoteError(request(client, contracts.memoryForgetOne, { user_id: 'dora', memory_id: 'm_never_written' }))).code).toBe('not_found');
    // Forgotten once is gone: a second forget is not_found too.
    expect((await remoteError(request(client, contracts.memoryForgetOne, { user_id: 'dora', memory_id: 'm_dora_bike' }))).code).toBe('not_found');
    expect(await list('fay')).toEqual(fayBefore);
    expect((await list('dora')).map((m) => m.memory_id)).toEqual(['m_dora_cat']);
  });

  it('forget removes every memory and session of the user: nothing is recalled afterwards, and queued writes are dropped', async () => {
    const forgotten = await request(client, contracts.memoryForget, { user_id: 'alice' });
    expect(forgotten.memories_removed).toBeGreaterThanOrEqual(2);
    expect(forgotten.sessions_removed).toBe(2);
    expect(await list('alice')).toEqual([]);
    expect((await recall('alice', 'does the user prefer coffee or green tea?')).memories).toEqual([]);
    expect((await request(client, contracts.sessionList, { user_id: 'alice' })).sessions).toEqual([]);
    expect((await request(client, contracts.sessionRead, { user_id: 'alice', session_id: 'a-1' })).messages).toEqual([]);
    expect(await redis.keys('hermes-ltm:session:{alice/a-*')).toEqual([]);

    // A write extracted before the forget but still queued does not bring anything back.
    await service.publish(contracts.memoryWrite, {
      memory_id: 'm_late',
      user_id: 'alice',
      type: 'fact',
      content: 'The user works on the billing team.',
      confidence: 0.9,
      created_at: new Date(Date.now() - 60_000).toISOString(),
    });
    await eventually(async () => {
      const info = await natsHandles(service).jsm.consumers.info(service.subjects.streams.memoryJobs, service.subjects.consumers.memoryWrites);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    }, 'the late write to be consumed');
    expect(await list('alice')).toEqual([]);
    // Other users are untouched.
    expect(await list('carol')).toHaveLength(1);
  });
});
