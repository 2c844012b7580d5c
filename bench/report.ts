import { formatNs, formatRatio, type Measurement, type Ratio } from './measure';

export type Unit = 'ns' | 'bytes';

export function formatValue(value: number, unit: Unit): string {
  if (unit === 'ns') return formatNs(value);
  return value >= 2 ** 20 ? `${(value / 2 ** 20).toFixed(2)} MB` : value >= 1024 ? `${(value / 1024).toFixed(1)} kB` : `${value.toFixed(0)} B`;
}

/** One printed row: median [min–max] of a contender's rounds, and its per-round ratio to a baseline. */
export function printRow(label: string, m: Measurement, unit: Unit, ratio?: { to: string; ratio: Ratio }): void {
  const spread = `[${formatValue(m.min, unit)}–${formatValue(m.max, unit)}]`;
  const vs = ratio === undefined ? '' : `  ${formatRatio(ratio.ratio)} vs ${ratio.to}`;
  console.log(`  ${label.padEnd(58)} ${formatValue(m.median, unit).padStart(10)} ${spread.padEnd(26)}${vs}`);
}

export function printTitle(title: string): void {
  console.log(`\n${title}`);
}
