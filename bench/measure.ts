import { performance } from 'node:perf_hooks';

export interface Measurement {
  readonly name: string;
  /** Nanoseconds per operation, median of the rounds. */
  readonly nsPerOp: number;
}

/**
 * Times `op` over `rounds` rounds of `iterations` calls each and reports the median per-call
 * time. Contenders are measured interleaved (round by round) so that machine noise hits all of
 * them alike and only their ratios are compared.
 */
export async function compare(
  contenders: ReadonlyArray<{ name: string; op: () => void | Promise<void> }>,
  { iterations, rounds = 7, warmup = 1 }: { iterations: number; rounds?: number; warmup?: number },
): Promise<Measurement[]> {
  const samples = contenders.map(() => [] as number[]);
  for (let round = 0; round < rounds + warmup; round++) {
    for (const [index, contender] of contenders.entries()) {
      const start = performance.now();
      for (let i = 0; i < iterations; i++) {
        const result = contender.op();
        if (result !== undefined) await result;
      }
      const elapsedNs = (performance.now() - start) * 1e6;
      if (round >= warmup) samples[index]?.push(elapsedNs / iterations);
    }
  }
  return contenders.map((contender, index) => ({ name: contender.name, nsPerOp: median(samples[index] ?? []) }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

export function report(title: string, measurements: readonly Measurement[], baseline: string): void {
  const base = measurements.find((m) => m.name === baseline)?.nsPerOp ?? NaN;
  console.log(`\n${title}`);
  for (const m of measurements) {
    console.log(`  ${m.name.padEnd(58)} ${formatNs(m.nsPerOp).padStart(10)}   ×${(m.nsPerOp / base).toFixed(2)} vs ${baseline}`);
  }
}

function formatNs(ns: number): string {
  return ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
}
