/** The value below which `p` percent of the samples lie (nearest rank); NaN without samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Rounds to `digits` decimals, keeping JSON small and readable. */
export function round(n: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export interface LatencySummary {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  samples: number;
}

export function summarise(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) return { p50_ms: Number.NaN, p99_ms: Number.NaN, max_ms: Number.NaN, samples: 0 };
  return {
    p50_ms: round(percentile(samples, 50)),
    p99_ms: round(percentile(samples, 99)),
    max_ms: round(samples.reduce((m, x) => Math.max(m, x), Number.NEGATIVE_INFINITY)),
    samples: samples.length,
  };
}
