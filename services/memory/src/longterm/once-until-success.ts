/**
 * Wraps a start-up step (creating a directory or a collection) so concurrent callers share one
 * run and later callers reuse its success, while a failure is not cached: the next call tries
 * again, since the cause (a server not up yet) is usually transient.
 */
export function onceUntilSuccess(step: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= step().catch((err: unknown) => {
      running = undefined;
      throw err;
    });
    return running;
  };
}
