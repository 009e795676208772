import { describe, expect, it } from 'vitest';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { compactedConversation, splitForCompaction, toFoldable } from '../src/conversation-compaction.js';

const turn = (id: string, months: number): ChatCompletionMessageParam[] => [
  { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'date_add', arguments: JSON.stringify({ months }) } }] },
  { role: 'tool', tool_call_id: id, content: JSON.stringify({ ok: true, result: { months } }) },
];

describe('compaction split', () => {
  const conversation: ChatCompletionMessageParam[] = [
    { role: 'system', content: 'Pinned facts the user gave; they always apply:\n- [constraint] EUR only' },
    { role: 'user', content: 'an earlier task' },
    { role: 'assistant', content: 'its answer' },
    { role: 'user', content: 'the goal' },
    ...turn('c1', 1),
    ...turn('c2', 2),
    ...turn('c3', 3),
  ];

  it('folds the history and every loop turn but the last; keeps system context, the goal and the last turn with its results', () => {
    const split = splitForCompaction(conversation);
    expect(split.context.map((m) => m.content)).toEqual([conversation[0]!.content]);
    expect(split.goal?.content).toBe('the goal');
    expect(split.fold.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant', 'tool', 'assistant', 'tool']);
    expect(split.tail).toEqual(turn('c3', 3));

    const compacted = compactedConversation(split, { summary: 'months 1 and 2 added', pinned: [{ kind: 'deadline', text: 'by Friday' }] });
    expect(compacted.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant', 'tool']);
    expect(compacted[1]!.content).toContain('months 1 and 2 added');
    expect(compacted[1]!.content).toContain('- [deadline] by Friday');
  });

  it('has nothing to fold in a conversation of only the goal and one turn', () => {
    expect(splitForCompaction([{ role: 'user', content: 'the goal' }, ...turn('c1', 1)]).fold).toEqual([]);
  });

  it('sends tool calls in the session message shape', () => {
    expect(toFoldable(turn('c1', 1)[0]!)).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ tool_call_id: 'c1', name: 'date_add', arguments: '{"months":1}' }],
    });
  });
});
