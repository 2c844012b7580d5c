import { formatNs, formatRatio, type Measurement, type Ratio } from './measure';

export interface Target {
  readonly target: string;
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean | null;
}

export function blockTarget(name: string, replicas: number, block: Measurement | undefined, goalNs: number): Target {
  return {
    target: `${name} worst block, 3 × ${replicas}`,
    goal: `≤ ${formatNs(goalNs)}`,
    measured: block === undefined ? 'not measured' : `${formatNs(block.median)} (${formatNs(block.min)}–${formatNs(block.max)})`,
    met: block === undefined ? null : block.median <= goalNs,
  };
}

export function ratioTarget(target: string, goal: string, ratios: readonly Ratio[], limit: number): Target {
  return { target, goal, measured: ratios.map(formatRatio).join(' / '), met: ratios.length === 0 ? null : ratios.every((r) => r.median <= limit) };
}

export function printTargets(targets: readonly Target[], machine: string): void {
  console.log(`\nTargets (medians; spread of the per-round ratios in parentheses) — ${machine}\n`);
  console.log('| target | goal | measured | met |');
  console.log('|---|---|---|---|');
  for (const t of targets) console.log(`| ${t.target} | ${t.goal} | ${t.measured} | ${t.met === null ? 'not measured' : t.met ? 'yes' : 'no'} |`);
}
