/**
 * Two trees' contenders side by side in one run (each in its own process, rounds interleaved):
 * `npx tsx bench/side-by-side.ts <before-root> <rounds> [<row>,<row>…]`. Both trees must have built
 * `dist/`. The per-request rows are read over the host's, so naming one of them runs the host too.
 */
import { join } from 'node:path';
import { runContender } from './child';
import { formatNs, formatRatio, ratioOf, summarize } from './measure';
import { interleave, figure, type ContenderSpec, type Figures } from './rounds';

const [beforeRoot = '', roundsText = '3', onlyText = ''] = process.argv.slice(2);
type Run = (entry: string, params: unknown, options?: object) => Promise<Figures>;
const COUNTING = { exposeGc: true, nodeFlags: ['--min-semi-space-size=256', '--max-semi-space-size=256'] };
const allRows: Array<[string, string, object, object, string]> = [
  ['host', 'per-request', { contender: 'host', requests: 200, blocks: 10 }, {}, 'nsPerRequest'],
  ['ours', 'per-request', { contender: 'ours', requests: 200, blocks: 10 }, {}, 'nsPerRequest'],
  ['ours-traced', 'per-request', { contender: 'ours-traced', requests: 200, blocks: 10 }, {}, 'nsPerRequest'],
  ['floor', 'per-request', { contender: 'floor', requests: 200, blocks: 10 }, {}, 'nsPerRequest'],
  ['direct', 'record-path', { contender: 'direct', polls: 100_000, blocks: 5 }, COUNTING, 'nsPerPoll'],
  ['idle-wrapper', 'record-path', { contender: 'idle-wrapper', polls: 100_000, blocks: 5 }, COUNTING, 'nsPerPoll'],
  ['stats-poll', 'record-path', { contender: 'stats-poll', polls: 100_000, blocks: 5 }, COUNTING, 'nsPerPoll'],
  ['decode-poll', 'record-path', { contender: 'decode-poll', polls: 100_000, blocks: 5 }, COUNTING, 'nsPerPoll'],
  ['decode-poll-1', 'record-path', { contender: 'decode-poll-1', polls: 100_000, blocks: 5 }, COUNTING, 'nsPerPoll'],
  ['exemplars-off', 'exemplar-record', { contender: 'exemplars-off', records: 200_000, blocks: 5 }, {}, 'nsPerRequest'],
  ['exemplars-traced', 'exemplar-record', { contender: 'exemplars-traced', records: 200_000, blocks: 5 }, {}, 'nsPerRequest'],
  ['inter-token', 'inter-token', { contender: 'ours', observations: 5_000_000, blocks: 5 }, {}, 'nsPerObservation'],
  ['scrape-cpu 3×16', 'scrape-cpu', { contender: 'ours', replicas: 16, scrapes: 4 }, {}, 'cpuNsPerScrape'],
  ['scrape-cpu 3×256', 'scrape-cpu', { contender: 'ours', replicas: 256, scrapes: 2 }, {}, 'cpuNsPerScrape'],
  ['scrape-block 3×256', 'scrape-block', { mode: 'one', replicas: 256, repeats: 2, scrapers: 10 }, {}, 'worstBlockNs'],
];
const PER_REQUEST_ROWS = ['ours', 'ours-traced', 'floor'];
const only = onlyText.split(',').filter((name) => name !== '');
const unknown = only.filter((name) => !allRows.some(([row]) => row === name));
if (unknown.length > 0) throw new RangeError(`no such row: ${unknown.join(', ')} (rows: ${allRows.map(([row]) => row).join(', ')})`);
const wanted = (name: string): boolean => only.length === 0 || only.includes(name) || (name === 'host' && only.some((row) => PER_REQUEST_ROWS.includes(row)));
const rows = allRows.filter(([name]) => wanted(name));
(async () => {
  // The other tree's own runner: its contenders run its own built package.
  const before = ((await import(join(beforeRoot, 'bench', 'child'))) as { runContender: Run }).runContender;
  const runners: Record<string, Run> = { before, after: runContender };
  const specs: ContenderSpec[] = [];
  for (const [name, entry, params, options] of rows) {
    for (const tree of ['before', 'after']) specs.push({ name: `${tree} ${name}`, run: () => (runners[tree] as Run)(entry, params, options) });
  }
  const results = await interleave(specs, Number(roundsText));
  const m = (tree: string, name: string) => figure(results, `${tree} ${name}`, rows.find((r) => r[0] === name)?.[4] ?? '');
  const over = (tree: string, name: string) =>
    summarize(
      `${tree} ${name} over host`,
      m(tree, name).rounds.map((v, i) => v - (m(tree, 'host').rounds[i] ?? NaN)),
    );
  for (const [name] of rows) {
    if (name === 'host') continue;
    const before = PER_REQUEST_ROWS.includes(name) ? over('before', name) : m('before', name);
    const after = PER_REQUEST_ROWS.includes(name) ? over('after', name) : m('after', name);
    console.log(
      `${name.padEnd(20)} before ${formatNs(before.median).padStart(10)}  after ${formatNs(after.median).padStart(10)}  after/before ${formatRatio(ratioOf(after, before))}`,
    );
  }
  // The record-path processes also counted what they allocated.
  for (const [name, key] of [
    ['stats-poll', 'bytesPerPoll'],
    ['decode-poll', 'bytesPerToken'],
    ['decode-poll-1', 'bytesPerPoll'],
  ] as const) {
    if (!wanted(name)) continue;
    const [before, after] = ['before', 'after'].map((tree) => figure(results, `${tree} ${name}`, key).median);
    console.log(`${`${name} ${key}`.padEnd(26)} before ${(before ?? NaN).toFixed(1).padStart(7)} B  after ${(after ?? NaN).toFixed(1).padStart(7)} B`);
  }
  for (const tree of only.length === 0 ? ['before', 'after'] : []) {
    console.log(
      `${tree}: ours vs floor ${formatRatio(ratioOf(over(tree, 'ours'), over(tree, 'floor')))}; traced vs ours ${formatRatio(ratioOf(over(tree, 'ours-traced'), over(tree, 'ours')))}; idle wrapper vs direct ${formatRatio(ratioOf(m(tree, 'idle-wrapper'), m(tree, 'direct')))}; exemplars traced vs off ${formatRatio(ratioOf(m(tree, 'exemplars-traced'), m(tree, 'exemplars-off')))}`,
    );
  }
})();
