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

/** What renderings may hold for streaming readers (`MAX_HELD_BYTES`), and what each stalled connection's socket may buffer on top (16 KiB and one chunk, rounded up). */
const HELD_BOUND_MIB = 32;
const SOCKET_ALLOWANCE_KIB = 64;

/** Readers that never read: every scrape served, memory within the renderings' bound and the sockets' buffers once garbage is collected, shutdown within its grace. */
export function slowReaderTarget(name: string, stall: Readonly<Record<string, Measurement>> | undefined, replicas: number, stalled: number): Target {
  const served = stall?.served;
  const held = stall?.heldExternalBytes;
  const block = stall?.worstBlockNs;
  const shutdown = stall?.shutdownNs;
  const boundMiB = HELD_BOUND_MIB + (stalled * SOCKET_ALLOWANCE_KIB) / 1024;
  return {
    target: `${name}, 3 × ${replicas}: scrapes served; worst block; external memory held once garbage is collected; shutdown()`,
    goal: `10 of 10; as 1.; ≤ ${boundMiB} MiB (32 MiB of renderings, ${SOCKET_ALLOWANCE_KIB} KiB a socket); ≤ 5 s`,
    measured:
      served && block && held && shutdown
        ? `${served.min} of 10; ${formatNs(block.median)}; ${(held.median / 2 ** 20).toFixed(1)} MiB; ${formatNs(shutdown.median)}`
        : 'not measured',
    met: served && held && shutdown ? served.min === 10 && held.max <= boundMiB * 2 ** 20 && shutdown.median <= 5.1e9 : null,
  };
}

/** Connections sending HEAD after HEAD: every one answered with the GET's length, memory within the budget (garbage not yet collected included). */
export function headFloodTarget(flood: Readonly<Record<string, Readonly<Record<string, Measurement>>>> | undefined, sockets: number, heads: number): Target {
  const sizes = Object.keys(flood ?? {});
  const rows = sizes.map((size) => flood?.[size]);
  return {
    target: `12. ${sockets} connections of ${heads} HEADs each, ${sizes.join(' and ')}: answered; external memory growth (peak)`,
    goal: `${sockets * heads} of ${sockets * heads} with the GET's length; ≤ 64 MiB (32 MiB held, and garbage not yet collected)`,
    measured:
      rows.length === 0
        ? 'not measured'
        : rows
            .map(
              (row) =>
                `${row?.lengthsRight?.min === 1 ? (row.answered?.min ?? 0) : 0}; ${((row?.externalGrowthBytes?.median ?? NaN) / 2 ** 20).toFixed(1)} MiB`,
            )
            .join(' / '),
    met:
      rows.length === 0
        ? null
        : rows.every(
            (row) => row?.lengthsRight?.min === 1 && row.answered?.min === sockets * heads && (row.externalGrowthBytes?.max ?? Infinity) <= 64 * 2 ** 20,
          ),
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
