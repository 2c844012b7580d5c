export interface Measurement {
  readonly name: string;
  /** One value per round, in round order. */
  readonly rounds: readonly number[];
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function summarize(name: string, rounds: readonly number[]): Measurement {
  const sorted = [...rounds].sort((a, b) => a - b);
  return { name, rounds, median: median(sorted), min: sorted[0] ?? NaN, max: sorted.at(-1) ?? NaN };
}

/** The ratio of two contenders measured in the same rounds: median and spread of the per-round ratios. */
export interface Ratio {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function ratioOf(numerator: Measurement, denominator: Measurement): Ratio {
  const ratios = numerator.rounds.map((value, i) => value / (denominator.rounds[i] ?? NaN)).sort((a, b) => a - b);
  return { median: median(ratios), min: ratios[0] ?? NaN, max: ratios.at(-1) ?? NaN };
}

export function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export function formatNs(ns: number): string {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(1)} ns`;
}

export function formatRatio(ratio: Ratio): string {
  return `×${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})`;
}
