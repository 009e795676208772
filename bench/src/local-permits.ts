import type { Permit, PermitProvider } from '@hermes/llm';

/**
 * An in-process FIFO counting semaphore: the baseline that shows what the HTTP stack alone
 * costs, so the distributed semaphore's own share of a shortfall can be told apart.
 */
export function localPermits(capacity: number): PermitProvider {
  let held = 0;
  const queue: (() => void)[] = [];
  const permit = (): Permit => {
    let released = false;
    return {
      waitedMs: 0,
      release: async () => {
        if (released) return;
        released = true;
        const next = queue.shift();
        if (next) next();
        else held--;
      },
    };
  };
  return {
    acquire: async () => {
      if (held < capacity) {
        held++;
        return permit();
      }
      await new Promise<void>((resolve) => queue.push(resolve));
      return permit();
    },
  };
}
