/** Percentiles of one latency, seconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentiles (the value a request actually saw, never an interpolation); NaN when empty. */
export function summarizeLatencies(valuesSeconds: readonly number[]): LatencySummary {
  const sorted = [...valuesSeconds].sort((a, b) => a - b);
  const at = (q: number): number => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1] };
}
