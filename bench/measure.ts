import { performance } from 'node:perf_hooks';

export interface Contender {
  readonly name: string;
  /** One operation; `perOp` operations are counted per call (e.g. the requests of a batch). */
  readonly op: () => void | Promise<void>;
}

export interface Measurement {
  readonly name: string;
  /** Nanoseconds per operation, one entry per round. */
  readonly rounds: readonly number[];
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface CompareOptions {
  /** Calls of `op` per round. */
  readonly iterations: number;
  /** Operations one call stands for (default 1). */
  readonly perCall?: number;
  readonly rounds?: number;
  readonly warmup?: number;
}

/**
 * Times every contender round by round, interleaved, so machine noise hits all of them alike:
 * absolute times drift on shared machines, ratios measured side by side do not.
 */
export async function compare(contenders: readonly Contender[], options: CompareOptions): Promise<Measurement[]> {
  const { iterations, perCall = 1, rounds = 7, warmup = 1 } = options;
  const samples = contenders.map(() => [] as number[]);
  for (let round = 0; round < rounds + warmup; round++) {
    for (const [index, contender] of contenders.entries()) {
      const start = performance.now();
      for (let i = 0; i < iterations; i++) {
        const result = contender.op();
        if (result !== undefined) await result;
      }
      const elapsedNs = (performance.now() - start) * 1e6;
      if (round >= warmup) samples[index]?.push(elapsedNs / (iterations * perCall));
    }
  }
  return contenders.map((contender, index) => summarize(contender.name, samples[index] ?? []));
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

/** Prints contenders with their spread and their ratio to `baseline`. */
export function report(title: string, measurements: readonly Measurement[], baseline: string): void {
  const base = measurements.find((m) => m.name === baseline);
  console.log(`\n${title}`);
  for (const m of measurements) {
    const spread = `${formatNs(m.min)}–${formatNs(m.max)}`;
    const ratio = base ? formatRatio(ratioOf(m, base)) : '';
    console.log(`  ${m.name.padEnd(52)} ${formatNs(m.median).padStart(10)}  [${spread}]  ${ratio} vs ${baseline}`);
  }
}
