import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { printTitle } from './report';
import type { PerRequestContender } from './per-request-setup';

/**
 * Instructions per request, counted by valgrind's cachegrind: a figure a noisy machine cannot
 * move, where the per-request times swing by 2× between runs. Each contender runs twice in its own
 * process under a deterministic V8 (`--predictable`: compilation and collection on the main
 * thread, a fixed collection schedule, fixed seeds), once with `few` and once with `many` requests; the difference over the
 * extra requests is one request's instructions, start-up cancelled out.
 */
export const COUNTED_CONTENDERS = ['host', 'ours', 'floor'] as const satisfies readonly PerRequestContender[];
export type CountedContender = (typeof COUNTED_CONTENDERS)[number];

export interface InstructionCounts {
  /** Instructions per request, by contender. */
  readonly perRequest: Readonly<Record<CountedContender, number>>;
  /** (ours − host) / (floor − host): target 7 counted in instructions. */
  readonly oursVsFloor: number;
}

/** Whether valgrind is installed (Debian package `valgrind`); without it the section is skipped. */
export function valgrindAvailable(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Counts the per-request contenders of the tree at `root` (its own bench and built package). */
export async function countInstructions(root: string, few = 40, many = 240): Promise<InstructionCounts> {
  const perRequest = {} as Record<CountedContender, number>;
  for (const contender of COUNTED_CONTENDERS) {
    const [low, high] = await Promise.all([instructionsOf(root, contender, few), instructionsOf(root, contender, many)]);
    perRequest[contender] = (high - low) / (many - few);
  }
  return { perRequest, oursVsFloor: (perRequest.ours - perRequest.host) / (perRequest.floor - perRequest.host) };
}

export async function instructionSection(): Promise<InstructionCounts | undefined> {
  printTitle('7b. Instructions per request (cachegrind, deterministic V8; 3 × 4 pipeline, 100 tokens a stage)');
  if (!valgrindAvailable()) {
    console.log('  skipped: valgrind is not installed (Debian package valgrind)');
    return undefined;
  }
  const counts = await countInstructions(join(__dirname, '..'));
  const { host, ours, floor } = counts.perRequest;
  console.log(`  the host alone                                             ${Math.round(host).toLocaleString('en')} instructions`);
  console.log(`  omni-otel-metrics hooks, over the host                     ${Math.round(ours - host).toLocaleString('en')} instructions`);
  console.log(`  the same samples written by hand (floor), over the host    ${Math.round(floor - host).toLocaleString('en')} instructions`);
  console.log(`  ours vs floor                                              ×${counts.oursVsFloor.toFixed(2)}`);
  return counts;
}

/** Instructions (cachegrind's `I refs`) of one per-request contender process serving `requests` requests. */
function instructionsOf(root: string, contender: CountedContender, requests: number): Promise<number> {
  const args = [
    '--tool=cachegrind',
    '--cache-sim=no',
    // JIT-compiled code is written and rewritten in place: valgrind must notice.
    '--smc-check=all-non-file',
    '--cachegrind-out-file=/dev/null',
    process.execPath,
    '--predictable',
    // Heap growth and idle collections on a fixed schedule, not on timers: else counts move by ±6%.
    '--predictable-gc-schedule',
    '--hash-seed=1',
    '--random-seed=1',
    '--import',
    'tsx',
    join(root, 'bench', 'contenders', 'per-request.ts'),
    JSON.stringify({ contender, requests, blocks: 0 }),
  ];
  return new Promise((resolve, reject) => {
    // tsx's transform cache would make the first run of a file cost more than the next.
    const child = spawn('valgrind', args, { cwd: root, env: { ...process.env, TSX_DISABLE_CACHE: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const refs = /I\s+refs:\s+([\d,]+)/.exec(stderr)?.[1];
      if (code !== 0 || refs === undefined) reject(new Error(`valgrind ${contender} ${requests} exited with ${String(code)}\n${stderr.slice(-2000)}`));
      else resolve(Number(refs.replaceAll(',', '')));
    });
  });
}
