/** Labels of one series, in the order the direct path names them. */
export type Labels = Readonly<Record<string, string>>;

export interface CounterCell {
  inc(value: number): void;
}
export interface GaugeCell {
  set(value: number): void;
}
export interface HistogramCell {
  observe(value: number): void;
}

/**
 * Where the hand-written direct path writes: bound cells, created once per series at setup. The
 * floor (plain numbers and a Float64Array per histogram) and prom-client implement it; each runs in
 * its own process, so the direct path's call sites only ever see one implementation.
 */
export interface CellFactory {
  /** `name` as printed, `_total` included. */
  counter(name: string, labels: Labels): CounterCell;
  gauge(name: string, labels: Labels): GaugeCell;
  histogram(name: string, labels: Labels, bounds: readonly number[]): HistogramCell;
  /** Every sample, keyed as `sampleKey` keys them, for checking that contenders record the same. */
  samples(): Promise<Map<string, number>>;
}

/** `name{a="1",b="2"}` with labels sorted and `le` normalised (`+Inf` → `Infinity`, `1.0` → `1`). */
export function sampleKey(name: string, labels: Labels): string {
  const names = Object.keys(labels).sort();
  const text = names.map((label) => `${label}="${label === 'le' ? leText(labels[label] as string) : labels[label]}"`).join(',');
  return `${name}{${text}}`;
}

/** Reads exposition text (0.0.4) into samples keyed as `sampleKey` keys them. */
export function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([^{\s]+)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, label, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[label as string] = value as string;
    samples.set(sampleKey(match[1] as string, labels), Number(match[3]));
  }
  return samples;
}

function leText(le: string): string {
  return le === '+Inf' ? 'Infinity' : String(Number(le));
}
