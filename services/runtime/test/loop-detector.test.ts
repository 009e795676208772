import { describe, expect, it } from 'vitest';
import { toolMessage } from '../src/agent-loop.js';
import { callSignature, findLoop } from '../src/loop-detector.js';

describe('callSignature', () => {
  it('ignores key order and whitespace, also in nested objects', () => {
    expect(callSignature('search', '{"q":"dns","opts":{"b":2,"a":[{"y":1,"x":0}]}}')).toBe(
      callSignature('search', ' { "opts": { "a": [ { "x": 0, "y": 1 } ], "b": 2 }, "q": "dns" } '),
    );
  });

  it('tells apart other tools, other values and other array orders', () => {
    const base = callSignature('search', '{"q":"dns","tags":[1,2]}');

    expect(callSignature('lookup', '{"q":"dns","tags":[1,2]}')).not.toBe(base);
    expect(callSignature('search', '{"q":"DNS","tags":[1,2]}')).not.toBe(base);
    expect(callSignature('search', '{"q":"dns","tags":[2,1]}')).not.toBe(base);
  });

  it('compares malformed arguments as text', () => {
    expect(callSignature('search', '{"q": dns')).toBe(callSignature('search', '{"q": dns'));
    expect(callSignature('search', '{"q": dns')).not.toBe(callSignature('search', '{"q": tls'));
  });
});

describe('findLoop', () => {
  const a = callSignature('search', '{"q":"a"}');
  const b = callSignature('search', '{"q":"b"}');

  it('lets a call be repeated maxRepeats - 1 times and stops the maxRepeats-th repeat', () => {
    expect(findLoop([], [a], 2)).toBeUndefined();
    expect(findLoop([a], [a], 2)).toBeUndefined();
    expect(findLoop([a, b, a], [a], 2)).toBe(a);
    expect(findLoop([a], [a], 1)).toBe(a);
  });

  it('counts repeats within one turn', () => {
    expect(findLoop([a], [b, a, a], 2)).toBe(a);
    expect(findLoop([], [b, b], 1)).toBe(b);
  });
});

describe('toolMessage', () => {
  it('gives the model the result of a call that worked, flagging truncation', () => {
    expect(JSON.parse(toolMessage({ call_id: 'c1', status: 'ok', result: { n: 1 }, truncated: true }))).toEqual({
      ok: true,
      result: { n: 1 },
      truncated: true,
    });
  });

  it('gives the model the error of a call that failed, with a hint not to invent a result', () => {
    const error = { code: 'tool_timeout' as const, message: 'took too long', retryable: true };

    expect(JSON.parse(toolMessage({ call_id: 'c1', status: 'error', error }))).toEqual({ ok: false, error, hint: expect.stringMatching(/do not invent/i) });
  });
});
