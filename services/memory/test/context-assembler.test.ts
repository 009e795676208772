import { describe, expect, it } from 'vitest';
import type { SessionMessage } from '@hermes/contracts';
import { assembleContext } from '../src/context-assembler.js';
import { countMessage } from '@hermes/llm';

const message = (i: number, role: SessionMessage['role'], content: string): SessionMessage => ({
  message_id: `m_${String(i).padStart(4, '0')}`,
  session_id: 's',
  user_id: 'u',
  role,
  content,
  created_at: '2025-01-01T00:00:00.000Z',
  tokens: countMessage({ content }, 'o200k_base'),
});

describe('context assembly', () => {
  const base = { encoding: 'o200k_base' as const, storedEncoding: 'o200k_base' as const, toolResultMaxTokens: 100 };

  it('keeps the latest messages verbatim within the budget, the summary and the pinned facts', () => {
    const messages = Array.from({ length: 40 }, (_, i) => message(i, i % 2 ? 'assistant' : 'user', `turn ${i}: ${'words '.repeat(20)}`));
    const pins = [
      { pin_id: 'p1', kind: 'deadline' as const, text: 'Report due Friday 17:00', source: 'user' as const, created_at: '2025-01-01T00:00:00.000Z' },
    ];
    const ctx = assembleContext({ ...base, messages, summary: 'Earlier: the user asked about DNS.', pins, budget: 300 });
    expect(ctx.tokens).toBeLessThanOrEqual(300);
    expect(ctx.tokens).toBe(ctx.messages.reduce((s, m) => s + m.tokens, 0));
    expect(ctx.messages[0]).toMatchObject({ role: 'system', kind: 'summary' });
    expect(ctx.messages[1]).toMatchObject({ role: 'system', kind: 'pinned' });
    expect(ctx.messages[1]!.content).toContain('Report due Friday 17:00');
    const kept = ctx.messages.filter((m) => m.kind === 'message');
    expect(kept.at(-1)!.message_id).toBe('m_0039');
    expect(kept.length).toBeGreaterThan(2);
    expect(ctx.dropped_messages).toBe(40 - kept.length);
    expect(ctx.summary_used).toBe(true);
  });

  it('truncates a large tool result and never starts with a tool message cut from its call', () => {
    const big = 'x1 '.repeat(3000);
    const messages = [
      message(0, 'user', 'fetch it'),
      { ...message(1, 'assistant', ''), content: null, tool_calls: [{ tool_call_id: 'c1', name: 'fetch', arguments: '{}' }], tokens: 10 },
      { ...message(2, 'tool', big), tool_call_id: 'c1' },
      message(3, 'assistant', 'done'),
    ];
    const ctx = assembleContext({ ...base, messages, pins: [], budget: 10_000 });
    expect(ctx.truncated_tool_results).toBe(1);
    const tool = ctx.messages.find((m) => m.role === 'tool')!;
    expect(tool).toMatchObject({ truncated: true, message_id: 'm_0002' });
    expect(tool.tokens).toBeLessThan(200);
    expect(tool.content).toContain('full result is message m_0002');

    const tight = assembleContext({ ...base, messages, pins: [], budget: tool.tokens + 8 });
    expect(tight.messages.map((m) => m.role)).toEqual(['assistant']);
  });
});
