import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instructionKinds, type InstructionKinds } from './instruction-kinds';
import { printTitle } from './report';
import type { PerRequestContender } from './per-request-setup';

/**
 * Instructions per request, counted by valgrind's cachegrind: a figure a noisy machine cannot
 * move, where the per-request times swing by 2× between runs. Each contender runs twice in its own
 * process under a deterministic V8 (`--predictable`: compilation and collection on the main
 * thread, fixed seeds, collections on a schedule set by allocation), once with `few` and once with `many` requests;
 * the difference over the extra requests is one request's instructions, start-up cancelled out.
 *
 * The window is the steady state of a serving process. A function that runs a few times per
 * request (admission, a stage's finish, a stream's end) is compiled by V8's optimizing compiler
 * only after hundreds or thousands of requests; counted over requests 41–240, that compilation,
 * the same kind of work for every contender, made up most of each one's count.
 *
 * The figure is the program's share (`instruction-kinds.ts`), with a 64 MB young generation
 * (`PER_REQUEST_SCHEDULE`): a major collection inside the window, or not, moved a whole count by
 * more than the code did.
 * What the contenders allocate is measured on its own (section 8).
 */
export const COUNTED_CONTENDERS = ['host', 'ours', 'floor'] as const satisfies readonly PerRequestContender[];
export type CountedContender = (typeof COUNTED_CONTENDERS)[number];

export interface InstructionCounts {
  /** Program instructions per request (V8's collector and compilers left out), by contender. */
  readonly perRequest: Readonly<Record<CountedContender, number>>;
  /** The collector's instructions per request, by contender (young-generation collections, as a rule). */
  readonly collectorPerRequest: Readonly<Record<CountedContender, number>>;
  /** (ours − host) / (floor − host): target 7 counted in instructions. */
  readonly oursVsFloor: number;
  /** Instructions per call of the bare host method and of the patched one with nobody listening (target 9). */
  readonly perCall: Readonly<Record<'direct' | 'idle-wrapper', number>>;
  /** idle wrapper / direct: target 9 counted in instructions. */
  readonly idleWrapperVsDirect: number;
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

/**
 * The collection schedule of the per-request counts: a 64 MB young generation, so that a window of
 * requests holds one young-generation collection or two and no major one as a rule, on a schedule
 * set by allocation alone (no memory reducer, which runs on timers). `--predictable-gc-schedule`,
 * used elsewhere, fixes the young generation at 4 MB whatever the flags say: with it, the marking
 * of a major collection fell inside or outside the window from run to run, and two runs of one
 * tree differed by 1.5 %; with this schedule they agree within 0.2 %.
 */
const PER_REQUEST_SCHEDULE = ['--min-semi-space-size=64', '--max-semi-space-size=64', '--no-memory-reducer'];

/** Heap growth and idle collections on a fixed schedule, not on timers: else counts move by ±6%. */
const PREDICTABLE_SCHEDULE = ['--predictable-gc-schedule'];

/** Counts the per-request contenders of the tree at `root` (its own bench and built package). */
export async function countInstructions(root: string): Promise<InstructionCounts> {
  const kinds = await countInstructionKinds(root, 100);
  const perRequest = {} as Record<CountedContender, number>;
  const collectorPerRequest = {} as Record<CountedContender, number>;
  for (const contender of COUNTED_CONTENDERS) {
    perRequest[contender] = kinds[contender].program;
    collectorPerRequest[contender] = kinds[contender].collector;
  }
  const perCall = {} as Record<'direct' | 'idle-wrapper', number>;
  for (const contender of ['direct', 'idle-wrapper'] as const) {
    // The calls a record-path contender makes to warm up: its other calls are the same in both runs.
    const run = async (polls: number): Promise<number> =>
      (await instructionsOf(root, 'record-path.ts', { contender, polls, blocks: 0 }, [...PREDICTABLE_SCHEDULE, '--expose-gc'])).total;
    perCall[contender] = await perUnit(run, 200_000, 1_200_000);
  }
  return {
    perRequest,
    collectorPerRequest,
    oursVsFloor: (perRequest.ours - perRequest.host) / (perRequest.floor - perRequest.host),
    perCall,
    idleWrapperVsDirect: perCall['idle-wrapper'] / perCall.direct,
  };
}

/**
 * Instructions per request of each contender by kind (the program, the collector, the compilers),
 * with `tokens` generated per stage: what `countInstructions` counts as one figure, taken apart.
 */
export async function countInstructionKinds(root: string, tokens: number, few = 6000, many = 7000): Promise<Record<CountedContender, InstructionKinds>> {
  const kinds = {} as Record<CountedContender, InstructionKinds>;
  for (const contender of COUNTED_CONTENDERS) kinds[contender] = await requestInstructionKinds(root, contender, tokens, few, many);
  return kinds;
}

/** One per-request contender's instructions per request by kind, over requests `few` + 1 to `many`. */
export async function requestInstructionKinds(
  root: string,
  contender: PerRequestContender,
  tokens: number,
  few = 6000,
  many = 7000,
): Promise<InstructionKinds> {
  const run = (requests: number): Promise<InstructionKinds> =>
    instructionsOf(root, 'per-request.ts', { contender, requests, blocks: 0, tokens }, PER_REQUEST_SCHEDULE);
  const [low, high] = await Promise.all([run(few), run(many)]);
  const per = (key: keyof InstructionKinds): number => (high[key] - low[key]) / (many - few);
  return { total: per('total'), collector: per('collector'), compiler: per('compiler'), program: per('program') };
}

/** Instructions per unit of work: two runs, `few` and `many` units, side by side; start-up cancels out. */
async function perUnit(run: (units: number) => Promise<number>, few: number, many: number): Promise<number> {
  const [low, high] = await Promise.all([run(few), run(many)]);
  return (high - low) / (many - few);
}

export async function instructionSection(): Promise<InstructionCounts | undefined> {
  printTitle(
    '7b / 9b. Program instructions per request (3 × 4 pipeline, 100 tokens a stage; requests 6 001–7 000) and instructions per idle call (cachegrind, deterministic V8)',
  );
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
  const collector = counts.collectorPerRequest;
  console.log(
    `  the collector, over the host: ours ${Math.round(collector.ours - collector.host).toLocaleString('en')}, floor ${Math.round(collector.floor - collector.host).toLocaleString('en')} instructions`,
  );
  const { direct, 'idle-wrapper': idle } = counts.perCall;
  console.log(`  a call of the bare host method (inlined by V8)             ${direct.toFixed(1)} instructions`);
  console.log(`  the patched method with nobody listening                   ${idle.toFixed(1)} instructions (×${counts.idleWrapperVsDirect.toFixed(2)})`);
  return counts;
}

/** The instructions of one contender process (`bench/contenders/<file>`) run with `params` and `nodeFlags`, by kind. */
async function instructionsOf(root: string, file: string, params: object, nodeFlags: readonly string[] = PREDICTABLE_SCHEDULE): Promise<InstructionKinds> {
  const dir = mkdtempSync(join(tmpdir(), 'omni-cachegrind-'));
  const out = join(dir, 'cachegrind.out');
  const args = [
    '--tool=cachegrind',
    '--cache-sim=no',
    // JIT-compiled code is written and rewritten in place: valgrind must notice.
    '--smc-check=all-non-file',
    `--cachegrind-out-file=${out}`,
    process.execPath,
    '--predictable',
    '--hash-seed=1',
    '--random-seed=1',
    ...nodeFlags,
    '--import',
    'tsx',
    join(root, 'bench', 'contenders', file),
    JSON.stringify(params),
  ];
  try {
    await new Promise<void>((resolve, reject) => {
      // tsx's transform cache would make the first run of a file cost more than the next.
      const child = spawn('valgrind', args, { cwd: root, env: { ...process.env, TSX_DISABLE_CACHE: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code !== 0) reject(new Error(`valgrind ${file} ${JSON.stringify(params)} exited with ${String(code)}\n${stderr.slice(-2000)}`));
        else resolve();
      });
    });
    return instructionKinds(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
