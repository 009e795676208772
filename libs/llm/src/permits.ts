/** A granted permit to make one LLM call; release it when the call ends, success or failure. */
export interface Permit {
  release(): Promise<void>;
}

/**
 * The seam for the global LLM semaphore: every call goes through `acquire` first. The
 * cluster-wide implementation on NATS plugs in here without changing callers.
 */
export interface PermitProvider {
  acquire(req: { pool: string; estimatedTokens: number; signal?: AbortSignal }): Promise<Permit>;
}

/** No limit at all: for tests of the loop itself and for single-process tools. */
export const unlimitedPermits: PermitProvider = {
  acquire: async () => ({ release: async () => {} }),
};
