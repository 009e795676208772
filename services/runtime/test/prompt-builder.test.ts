import { describe, expect, it } from 'vitest';
import type { RuntimeJob, SessionMessage } from '@hermes/contracts';
import { openingMessages, systemPrompt } from '../src/prompt-builder.js';

const job = (j: Partial<RuntimeJob> = {}): RuntimeJob => ({
  job_id: 'j1',
  task_id: 't1',
  subtask_id: 'main',
  user_id: 'u_alice',
  session_id: 's1',
  goal: 'what did we decide?',
  model_role: 'worker',
  ...j,
});

let n = 0;
const message = (role: SessionMessage['role'], content: string | null): SessionMessage => ({
  message_id: `m${++n}`,
  session_id: 's1',
  user_id: 'u_alice',
  role,
  content,
  created_at: '2025-01-01T00:00:00.000Z',
  tokens: 1,
});

describe('systemPrompt', () => {
  it('anchors the goal in the system prompt', () => {
    expect(systemPrompt(job({ goal: 'find the root cause of INC-42' }), true)).toContain('find the root cause of INC-42');
  });

  it('tells the model how to use tools only when it has some', () => {
    const withTools = systemPrompt(job(), true);
    const without = systemPrompt(job(), false);

    expect(withTools).toMatch(/use the tools/i);
    expect(withTools).toMatch(/when a tool fails/i);
    expect(without).toMatch(/no tools/i);
    expect(without).not.toMatch(/use the tools/i);
  });
});

describe('openingMessages', () => {
  it('is just the goal for an empty session', () => {
    expect(openingMessages(job(), [])).toEqual([{ role: 'user', content: 'what did we decide?' }]);
  });

  it('replays user and assistant turns of the session in order before the goal', () => {
    const history = [
      message('user', 'first question'),
      message('assistant', 'first answer'),
      message('user', 'second question'),
      message('assistant', 'second answer'),
    ];

    expect(openingMessages(job(), history)).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second answer' },
      { role: 'user', content: 'what did we decide?' },
    ]);
  });

  it('puts recalled long-term memory first, as a system message before the session, and leaves it out when empty', () => {
    const history = [message('user', 'first question'), message('assistant', 'first answer')];
    const background =
      'Background: what you remember about this user from earlier conversations.\n- (2026-11-01, fact, confidence 0.80) The user is on the billing team.';

    expect(openingMessages(job(), history, background)).toEqual([
      { role: 'system', content: background },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'what did we decide?' },
    ]);
    expect(openingMessages(job(), history, '')).toEqual(openingMessages(job(), history));
  });

  it('skips tool and system messages of the session and turns without content', () => {
    const history = [
      message('system', 'an old system prompt'),
      message('user', 'look it up'),
      { ...message('assistant', null), tool_calls: [{ tool_call_id: 'c1', name: 'search', arguments: '{}' }] },
      { ...message('tool', 'search result'), tool_call_id: 'c1' },
      message('assistant', 'found it'),
    ];

    expect(openingMessages(job(), history)).toEqual([
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: 'found it' },
      { role: 'user', content: 'what did we decide?' },
    ]);
  });

  it("keeps the session's summary and pinned facts from the memory service's context", () => {
    const history = [
      { role: 'system' as const, content: 'Summary: the user migrates db1.', kind: 'summary' as const },
      { role: 'system' as const, content: 'Pinned: never email the customer.', kind: 'pinned' as const },
      { role: 'user' as const, content: 'status?', kind: 'message' as const },
    ];

    expect(openingMessages(job(), history).slice(0, 3)).toEqual([
      { role: 'system', content: 'Summary: the user migrates db1.' },
      { role: 'system', content: 'Pinned: never email the customer.' },
      { role: 'user', content: 'status?' },
    ]);
  });

  it('appends the inputs as JSON to the goal when there are any', () => {
    const inputs = { repo: 'hermes', labels: ['bug', 'p1'] };

    const last = openingMessages(job({ goal: 'triage the issues', inputs }), []).at(-1);

    expect(last?.role).toBe('user');
    const content = last?.content as string;
    expect(content.startsWith('triage the issues\n\n')).toBe(true);
    expect(JSON.parse(content.slice(content.indexOf('{')))).toEqual(inputs);
  });

  it('leaves the goal alone when the inputs are empty', () => {
    expect(openingMessages(job({ inputs: {} }), []).at(-1)).toEqual({ role: 'user', content: 'what did we decide?' });
  });
});
