/**
 * `npm run bench` (`-- --quick` for a short run): every contender in its own process, rounds
 * interleaved, medians with the spread of per-round ratios. Prints the machine, each row and the
 * targets, and writes bench/results.json.
 */
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { formatNs, type Ratio } from './measure';
import { coldStartSection } from './section-cold-start';
import { interTokenSection } from './section-inter-token';
import { memorySection } from './section-memory';
import { perRequestSection } from './section-per-request';
import { recordPathSection } from './section-record-path';
import { exemplarSection } from './section-exemplars';
import { instructionSection } from './section-instructions';
import { headFloodSection, scrapeBlockSection, scrapeCpuSection, slowReaderSection } from './section-scrape';
import { blockTarget, headFloodTarget, printTargets, ratioTarget, slowReaderTarget, type Target } from './targets';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const COLD_ROUNDS = quick ? 1 : 5;
const CPU_SIZES = quick ? [1, 16] : [1, 4, 16, 64, 256];
const BLOCK_SIZES = quick ? [16] : [64, 256];
/** Heap per series today (before the store rewrite), for the histogram target. */
const TODAY_HISTOGRAM_BYTES = 606;

async function main(): Promise<void> {
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
  console.log(`omni-otel-metrics benchmarks on ${machine}${quick ? ' (quick run)' : ''}`);
  console.log('Contenders: omni-otel-metrics, prom-client, hand-written direct paths (floors), the stock OpenTelemetry SDK; each in its own process.');
  // The record-path and cold-start contenders run the built package: build it from these sources.
  execSync('npm run build', { cwd: join(__dirname, '..'), stdio: 'ignore' });

  const perRequest = await perRequestSection(ROUNDS, quick ? 30 : 200);
  // Counted, not timed: the quick run skips it (it takes a few minutes under valgrind).
  const instructions = quick ? undefined : await instructionSection();
  const interToken = await interTokenSection(ROUNDS, quick ? 1e6 : 5e6);
  const recordPath = await recordPathSection(ROUNDS, quick ? 20_000 : 100_000);
  const exemplars = await exemplarSection(ROUNDS, quick ? 50_000 : 200_000);
  const cpu: Array<Awaited<ReturnType<typeof scrapeCpuSection>>> = [];
  for (const replicas of CPU_SIZES) cpu.push(await scrapeCpuSection(ROUNDS, replicas));
  const blocks: Array<Awaited<ReturnType<typeof scrapeBlockSection>>> = [];
  for (const replicas of BLOCK_SIZES) {
    const modes = replicas === BLOCK_SIZES.at(-1) ? ['one', 'gzip', 'concurrent'] : ['one', 'gzip', 'engine-pull'];
    blocks.push(await scrapeBlockSection(ROUNDS, replicas, quick ? ['one', 'gzip', 'concurrent', 'engine-pull'] : modes, 10));
  }
  const slowReaders = await slowReaderSection(quick ? 1 : 3, quick ? 16 : 64, 64);
  const headFlood = await headFloodSection(quick ? 1 : 3, quick ? [16] : [64, 128], 64, 4);
  const memory = await memorySection(ROUNDS, quick ? 5_000 : 20_000);
  const coldStart = await coldStartSection(COLD_ROUNDS, quick ? [64] : [64, 256]);

  const block = (replicas: number, mode: string, name = 'worstBlockNs') => blocks.find((b) => b.replicas === replicas)?.results[mode]?.[name];
  const largest = BLOCK_SIZES.at(-1) as number;
  const one = block(largest, 'one', 'wallNs');
  const concurrent = block(largest, 'concurrent', 'wallNs');
  const oneRss = block(largest, 'one', 'firstRssGrowthBytes');
  const concurrentRss = block(largest, 'concurrent', 'firstRssGrowthBytes');
  const pullSize = quick ? 16 : 64;
  const registration = (coldStart.registrations[quick ? 64 : 256] as Record<string, Record<string, { median: number }>> | undefined)?.ours?.registerNs;
  const requireOurs = coldStart.require.ours?.requireNs;
  const renderings = blocks.find((b) => b.replicas === largest)?.renderings;
  const targets: Target[] = [
    blockTarget('1. one scrape', largest, block(largest, 'one'), largest >= 256 ? 10e6 : 5e6),
    ...(quick ? [] : [blockTarget('1. one scrape', 64, block(64, 'one'), 5e6)]),
    {
      target: `2. ten concurrent scrapes, 3 × ${largest}`,
      goal: 'one rendering; last response ≤ 1.5× one scrape; RSS growth ≤ 1.5× one scrape',
      measured: `renderings ${renderings ?? 'not exposed'}; ${concurrent && one ? `×${(concurrent.median / one.median).toFixed(2)}` : '?'} time; ${concurrentRss && oneRss ? `×${(concurrentRss.median / oneRss.median).toFixed(2)}` : '?'} RSS`,
      met:
        concurrent && one && concurrentRss && oneRss
          ? concurrent.median <= 1.5 * one.median && concurrentRss.median <= 1.5 * oneRss.median && renderings === 1
          : null,
    },
    ratioTarget(
      '3a. scrape CPU vs prom-client, every size',
      '≤ 0.2×',
      cpu.map((c) => c.vsProm),
      0.2,
    ),
    ratioTarget(
      '3b. scrape CPU vs concatenated lines, every size',
      '≤ 2×',
      cpu.map((c) => c.vsConcat),
      2,
    ),
    ratioTarget(
      '4a. counter and gauge bytes per series',
      '≤ prom-client',
      [memory.counter?.ratio, memory.gauge?.ratio].filter((r): r is Ratio => r !== undefined),
      1,
    ),
    {
      target: '4b. histogram bytes per series',
      goal: `≤ today's ${TODAY_HISTOGRAM_BYTES} B`,
      measured: `${memory.histogram?.ours.median.toFixed(0) ?? '?'} B`,
      met: memory.histogram === undefined ? null : memory.histogram.ours.median <= TODAY_HISTOGRAM_BYTES,
    },
    {
      target: `5. require; registration at 3 × ${quick ? 64 : 256}`,
      goal: '≤ 40 ms; ≤ 100 ms',
      measured: `${requireOurs ? formatNs(requireOurs.median) : '?'}; ${registration ? formatNs(registration.median) : '?'}`,
      met: requireOurs && registration ? requireOurs.median <= 40e6 && registration.median <= 100e6 : null,
    },
    blockTarget('6. enginePull (4 servers), one scrape', pullSize, block(pullSize, 'engine-pull'), 5e6),
    { target: '6. behind the cluster primary (4 workers)', goal: 'as 1.', measured: 'not measured by this bench', met: null },
    ratioTarget('7. one request over the host, vs the direct path (3 × 4, 100 tokens)', '≤ 2×', [perRequest.oursVsFloor], 2),
    {
      target: '7b. the same, in program instructions (cachegrind)',
      goal: '≤ 2×',
      measured: instructions === undefined ? 'not measured' : `×${instructions.oursVsFloor.toFixed(2)}`,
      met: instructions === undefined ? null : instructions.oursVsFloor <= 2,
    },
    {
      target: '8. allocated per decode token; per stats-only poll',
      goal: '≤ 32 B; ≤ 64 B',
      measured: `${recordPath.tokenBytes.median.toFixed(1)} B; ${recordPath.statsPollBytes.median.toFixed(1)} B`,
      met: Number.isNaN(recordPath.tokenBytes.median) ? null : recordPath.tokenBytes.median <= 32 && recordPath.statsPollBytes.median <= 64,
    },
    ratioTarget('9. patched method with nobody listening, vs the bare method', '≤ 2×', [recordPath.idleWrapper], 2),
    {
      target: '9b. the same, in instructions (cachegrind)',
      goal: '≤ 2×',
      measured: instructions === undefined ? 'not measured' : `×${instructions.idleWrapperVsDirect.toFixed(2)}`,
      met: instructions === undefined ? null : instructions.idleWrapperVsDirect <= 2,
    },
    slowReaderTarget('11. 64 readers that never read', slowReaders.results.stall, slowReaders.replicas, slowReaders.stalled),
    slowReaderTarget('11b. the same over TLS', slowReaders.results.tls, slowReaders.replicas, slowReaders.stalled),
    headFloodTarget(headFlood.results, headFlood.sockets, headFlood.heads),
    ratioTarget('10a. one request through every hook, exemplars on and the request traced, vs off', '≤ 1.5×', [perRequest.tracedVsOurs], 1.5),
    ratioTarget(
      "10b. a finished request's records as the observer makes them (its clock reading, two records), exemplars on (untraced / traced), vs off",
      '≤ 1.5×',
      [exemplars.untraced, exemplars.traced],
      1.5,
    ),
  ];
  printTargets(targets, machine);

  const file = join(__dirname, 'results.json');
  writeFileSync(
    file,
    `${JSON.stringify({ machine, date: new Date().toISOString(), quick, rounds: ROUNDS, targets, perRequest, instructions, interToken, recordPath, exemplars, scrapeCpu: cpu, scrapeBlock: blocks, slowReaders, headFlood, memory, coldStart }, null, 2)}\n`,
  );
  console.log(`\nwrote ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
