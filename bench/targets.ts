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

/** 64 readers that never read: every scrape served, memory within the renderings' bound and the sockets' buffers, shutdown within its grace. */
export function slowReaderTarget(stall: Readonly<Record<string, Measurement>> | undefined, replicas: number): Target {
  const served = stall?.served;
  const external = stall?.externalGrowthBytes;
  const block = stall?.worstBlockNs;
  const shutdown = stall?.shutdownNs;
  return {
    target: `11. 64 readers that never read, 3 × ${replicas}: scrapes served; worst block; external memory; shutdown()`,
    goal: '10 of 10; as 1.; ≤ 64 MiB (32 MiB held, and garbage not yet collected); ≤ 5 s',
    measured:
      served && block && external && shutdown
        ? `${served.min} of 10; ${formatNs(block.median)}; ${(external.median / 2 ** 20).toFixed(1)} MiB; ${formatNs(shutdown.median)}`
        : 'not measured',
    met: served && external && shutdown ? served.min === 10 && external.median <= 64 * 2 ** 20 && shutdown.median <= 5.1e9 : null,
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
