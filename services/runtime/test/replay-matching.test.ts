import { describe, expect, it } from 'vitest';
import { diffMessages } from '../src/message-diff.js';
import { holds } from '../src/job-replayer.js';
import { shouldRecord, recordingPolicy } from '../src/recording-policy.js';

describe('replay divergence diff', () => {
  it('shows the changed message as - recorded / + new, with the unchanged ones around as context', () => {
    const recorded = [
      { role: 'system', content: 'old prompt' },
      { role: 'user', content: 'goal' },
    ];
    const now = [
      { role: 'system', content: 'new prompt' },
      { role: 'user', content: 'goal' },
    ];
    expect(diffMessages(recorded, now)).toBe(['- [0] system: old prompt', '+ [0] system: new prompt', '  [1] user: goal'].join('\n'));
  });

  it('renders tool calls and tool results so a changed result is visible', () => {
    const base = [{ role: 'assistant', content: null, tool_calls: [{ function: { name: 'date_add', arguments: '{"days":7}' } }] }];
    const diff = diffMessages(
      [...base, { role: 'tool', tool_call_id: 'c1', content: '{"date":"a"}' }],
      [...base, { role: 'tool', tool_call_id: 'c1', content: '{"date":"b"}' }],
    );
    expect(diff).toContain('  [0] assistant → date_add({"days":7})');
    expect(diff).toContain('- [1] tool (c1): {"date":"a"}');
    expect(diff).toContain('+ [1] tool (c1): {"date":"b"}');
  });
});

describe('scripted turns', () => {
  const failed = [{ role: 'tool', content: JSON.stringify({ ok: false, error: { code: 'invalid_arguments', message: '/days must be integer' } }) }];
  it('a condition on the last tool message holds only when it matches', () => {
    expect(holds({ last_tool_error: 'invalid_arguments', last_tool_contains: '/days' }, failed)).toBe(true);
    expect(holds({ last_tool_ok: true }, failed)).toBe(false);
    // What a runtime without error detail sends: the model cannot tell why the call failed.
    expect(holds({ last_tool_error: 'invalid_arguments' }, [{ role: 'tool', content: '{"ok":false}' }])).toBe(false);
    expect(holds({ last_tool_ok: false }, [{ role: 'user', content: 'no tool yet' }])).toBe(false);
    expect(holds(undefined, [])).toBe(true);
  });
});

describe('recording policy', () => {
  const job = { user_id: 'ann', team: 'blue' } as const;
  it('is off by default; a task, a user or the global setting turns it on; a task can opt out', () => {
    expect(shouldRecord(recordingPolicy({ mode: 'opt-in', users: '' }), job)).toBe(false);
    expect(shouldRecord(recordingPolicy({ mode: 'opt-in', users: '' }), { ...job, record: true })).toBe(true);
    expect(shouldRecord(recordingPolicy({ mode: 'opt-in', users: 'bob, blue/ann' }), job)).toBe(true);
    expect(shouldRecord(recordingPolicy({ mode: 'opt-in', users: 'ann' }), job)).toBe(false);
    expect(shouldRecord(recordingPolicy({ mode: 'all', users: '' }), job)).toBe(true);
    expect(shouldRecord(recordingPolicy({ mode: 'all', users: '' }), { ...job, record: false })).toBe(false);
    expect(
      shouldRecord(recordingPolicy({ mode: 'opt-in', users: '' }), {
        ...job,
        record: false,
        replay: { source_task: 't_1', mode: 'recording', tools: 'recorded' },
      }),
    ).toBe(true);
  });
});
