/** What the caller learned from the call, for the pool's budget and shared back-off. */
export interface PermitReport {
  /** Tokens the call really used. */
  tokens?: number;
  /** The provider answered 429: the whole pool pauses this long. */
  rateLimitedForMs?: number;
  /** The provider looks unwell (5xx, connection failure, timeout). */
  failed?: boolean;
}

/** A granted permit to make one LLM call; release it when the call ends, success or failure. */
export interface Permit {
  readonly waitedMs?: number;
  release(report?: PermitReport): Promise<void>;
}

export interface PermitRequest {
  pool: string;
  estimatedTokens: number;
  /** 0 batch, 1 normal (default), 2 interactive. */
  priority?: number;
  /** Background work (memory extraction, summaries): served within the pool's background share. */
  background?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * The seam for the global LLM semaphore: every call goes through `acquire` first. Implemented
 * cluster-wide on NATS by `semaphorePermits`; `unlimitedPermits` is for tests of the loop alone.
 */
export interface PermitProvider {
  acquire(req: PermitRequest): Promise<Permit>;
  /** Takes back a permit this process keeps for `pool`, ahead of the call (see `LlmClient.reserve`). */
  reserve?(pool: string): PermitReservation | undefined;
}

/** A permit taken ahead of its call: `claim` it for the call, or `cancel` it when no call follows. */
export interface PermitReservation {
  /** The permit, or undefined when it could not be taken back or the reservation ran out. Never rejects. */
  claim(): Promise<Permit | undefined>;
  cancel(): Promise<void>;
}

/** No limit at all: for tests of the loop itself and for single-process tools. */
export const unlimitedPermits: PermitProvider = {
  acquire: async () => ({ release: async () => {} }),
};
