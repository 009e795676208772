import { describe, expect, it } from 'vitest';
import type { RuntimeJob, SessionMessage } from '@hermes/contracts';
import { SYSTEM_PROMPT, buildPrompt } from '../src/prompt-builder.js';

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

describe('buildPrompt', () => {
  it('puts the system prompt first and the goal last', () => {
    expect(buildPrompt(job(), [])).toEqual([
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: 'what did we decide?' },
    ]);
  });

  it('replays user and assistant turns of the session in order between system prompt and goal', () => {
    const history = [message('user', 'first question'), message('assistant', 'first answer'), message('user', 'second question'), message('assistant', 'second answer')];

    expect(buildPrompt(job(), history)).toEqual([
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second answer' },
      { role: 'user', content: 'what did we decide?' },
    ]);
  });

  it('skips tool and system messages of the session and turns without content', () => {
    const history = [
      message('system', 'an old system prompt'),
      message('user', 'look it up'),
      { ...message('assistant', null), tool_calls: [{ tool_call_id: 'c1', name: 'search', arguments: '{}' }] },
      { ...message('tool', 'search result'), tool_call_id: 'c1' },
      message('assistant', 'found it'),
    ];

    expect(buildPrompt(job(), history).map((m) => [m.role, m.content])).toEqual([
      ['system', SYSTEM_PROMPT],
      ['user', 'look it up'],
      ['assistant', 'found it'],
      ['user', 'what did we decide?'],
    ]);
  });

  it('appends the inputs as JSON to the goal when there are any', () => {
    const inputs = { repo: 'hermes', labels: ['bug', 'p1'] };

    const last = buildPrompt(job({ goal: 'triage the issues', inputs }), []).at(-1);

    expect(last?.role).toBe('user');
    const content = last?.content as string;
    expect(content.startsWith('triage the issues\n\n')).toBe(true);
    expect(JSON.parse(content.slice(content.indexOf('{')))).toEqual(inputs);
  });

  it('leaves the goal alone when the inputs are empty', () => {
    expect(buildPrompt(job({ inputs: {} }), []).at(-1)).toEqual({ role: 'user', content: 'what did we decide?' });
  });
});
