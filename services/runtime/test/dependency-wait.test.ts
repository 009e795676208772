import { describe, expect, it } from 'vitest';
import { RemoteError } from '@hermes/bus';
import { wireError } from '@hermes/contracts';
import { waitOutOutage, type DependencyWait } from '../src/dependency-wait.js';

const away = () => new RemoteError(wireError('no_responders', 'no toolbus replica is listening'), 'hermes.toolbus.call');

describe('waitOutOutage', () => {
  it('sends again while the dependency is away, reporting each pause, and returns once it answers', async () => {
    const seen: DependencyWait[] = [];
    let calls = 0;
    const result = await waitOutOutage({ budgetMs: 10_000, baseDelayMs: 5, service: 'toolbus', onWait: (w) => seen.push(w) }, async () => {
      if (++calls < 4) throw away();
      return 'answered';
    });
    expect(result).toBe('answered');
    expect(seen.map((w) => [w.service, w.code, w.attempt])).toEqual([
      ['toolbus', 'no_responders', 1],
      ['toolbus', 'no_responders', 2],
      ['toolbus', 'no_responders', 3],
    ]);
  });

  it('lets the outage error stand once the budget is spent', async () => {
    let calls = 0;
    const err = await waitOutOutage({ budgetMs: 60, baseDelayMs: 10, maxDelayMs: 10, service: 'memory' }, async () => {
      calls++;
      throw away();
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    expect((err as RemoteError).code).toBe('no_responders');
    expect(calls).toBeGreaterThan(1);
  });

  it('passes any other error through at once: a refusal is not an outage', async () => {
    let calls = 0;
    const refusal = new RemoteError(wireError('session_forbidden', 'not yours'), 'hermes.memory.session.lock');
    await expect(
      waitOutOutage({ budgetMs: 10_000, service: 'memory' }, async () => {
        calls++;
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(calls).toBe(1);
  });
});
