import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TokenStream } from '../src/token-stream.js';

function recorder() {
  const sent: { text: string; index: number; step: number }[] = [];
  return { sent, publish: async (text: string, index: number, step: number) => void sent.push({ text, index, step }) };
}

describe('TokenStream', () => {
  it('sends what arrives within one interval as one message', async () => {
    const r = recorder();
    const s = new TokenStream({ intervalMs: 50, publish: r.publish });

    s.push('The', 1);
    s.push(' answer', 1);
    await sleep(120);
    s.push('.', 1);
    await s.flush();

    expect(r.sent).toEqual([
      { text: 'The answer', index: 0, step: 1 },
      { text: '.', index: 1, step: 1 },
    ]);
  });

  it('keeps the deltas of each step apart', async () => {
    const r = recorder();
    const s = new TokenStream({ intervalMs: 1_000, publish: r.publish });

    s.push('Let me look.', 1);
    s.push('Found', 2);
    s.push(' it.', 2);
    await s.flush();

    expect(r.sent).toEqual([
      { text: 'Let me look.', index: 0, step: 1 },
      { text: 'Found it.', index: 1, step: 2 },
    ]);
  });

  it('flush with nothing buffered sends nothing', async () => {
    const r = recorder();
    await new TokenStream({ intervalMs: 10, publish: r.publish }).flush();
    expect(r.sent).toEqual([]);
  });
});
