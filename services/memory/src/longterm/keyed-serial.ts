/**
 * Runs tasks one at a time per key (here: per user), in call order, while different keys run
 * concurrently. A user's log appends, index changes and lazy load must never interleave.
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    // Tails never reject (see below), so one failed task does not fail the ones queued after it.
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task);
    const tail = next.catch(() => {});
    this.tails.set(key, tail);
    // Forget idle keys, so the map does not grow with every user ever seen.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves when no task is queued any more, including tasks queued by the tasks it waited for. */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values());
  }
}
