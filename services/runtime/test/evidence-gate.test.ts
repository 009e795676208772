import { describe, expect, it } from 'vitest';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { checkEvidence, citationsIn, evidenceRequired } from '../src/evidence-gate.js';

const conversation: ChatCompletionMessageParam[] = [
  { role: 'user', content: 'what does the record say?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } },
      { id: 'c2', type: 'function', function: { name: 'lookup', arguments: '{}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ ok: true, result: { note: 'said "yes"\nthen left', total: 42 } }) },
  { role: 'tool', tool_call_id: 'c2', content: JSON.stringify({ ok: false, error: { code: 'tool_failed', message: 'boom' } }) },
];

describe('evidence gate', () => {
  it('reads citations with escaped quote marks', () => {
    expect(citationsIn('A [evidence c1: "said \\"yes\\""] and [evidence c9: "x"]')).toEqual([
      { call_id: 'c1', quote: 'said "yes"' },
      { call_id: 'c9', quote: 'x' },
    ]);
  });

  it('accepts a quote of a string value as the model read it, even where JSON escapes it', () => {
    expect(checkEvidence('[evidence c1: "said \\"yes\\""]', conversation)).toEqual([]);
    expect(checkEvidence('[evidence c1: "42"]', conversation)).toEqual([]);
  });

  it('refuses no citation, an unknown call, a failed call, an empty or absent quote', () => {
    expect(checkEvidence('just trust me', conversation)).toEqual([{ kind: 'no_citation' }]);
    expect(checkEvidence('[evidence c7: "42"] [evidence c2: "boom"] [evidence c1: " "] [evidence c1: "43"]', conversation)).toEqual([
      { kind: 'unknown_call', call_id: 'c7' },
      { kind: 'failed_call', call_id: 'c2' },
      { kind: 'quote_not_found', call_id: 'c1', quote: ' ' },
      { kind: 'quote_not_found', call_id: 'c1', quote: '43' },
    ]);
  });

  it('is required by the task, or by a require_evidence tool the job called', () => {
    const tool = { name: 'lookup', description: 'd', parameters: {}, require_evidence: true };
    expect(evidenceRequired({ require_evidence: true }, [], [])).toBe(true);
    expect(evidenceRequired({}, [tool], conversation)).toBe(true);
    expect(evidenceRequired({}, [tool], conversation.slice(0, 1))).toBe(false);
    expect(evidenceRequired({}, [{ ...tool, require_evidence: false }], conversation)).toBe(false);
  });
});
