/**
 * The benchmark's figures quoted in the docs, rendered from bench/results.json so that no number
 * there is typed by hand: each `<!-- bench:NAME -->…<!-- /bench:NAME -->` span of a page is
 * replaced by the figure NAME. Run after `npm run bench`: `npx tsx bench/docs-figures.ts`
 * (also part of `npm run docs`); test/docs/bench-figures.test.ts fails while a page is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ratioOf, type Measurement, type Ratio } from './measure';
import type { InstructionCounts } from './section-instructions';

/** The parts of bench/results.json the docs quote. */
export interface BenchResults {
  readonly machine: string;
  readonly interToken: Readonly<Record<'ours' | 'prom-client' | 'floor', Measurement>>;
  readonly perRequest: {
    readonly costs: Readonly<Record<'host' | 'ours' | 'ours-traced' | 'prom-client' | 'floor', Measurement>> & { readonly 'ours-slo'?: Measurement };
    readonly oursVsFloor: Ratio;
    readonly tracedVsOurs: Ratio;
    /** Absent from runs made before the bench measured the `slo` option. */
    readonly sloVsOurs?: Ratio;
  };
  /** Absent when the bench ran without valgrind (or quick). */
  readonly instructions?: InstructionCounts;
  readonly exemplars: {
    readonly untraced: Ratio;
    readonly traced: Ratio;
    readonly nsPerRequest: Readonly<Record<'exemplars-off' | 'exemplars-traced', Measurement>>;
  };
  readonly recordPath: {
    readonly idleWrapper: Ratio;
    readonly statsPollBytes: Measurement;
    readonly tokenBytes: Measurement;
    readonly nsPerPoll: Readonly<Record<'direct' | 'idle-wrapper' | 'stats-off' | 'stats-poll' | 'decode-poll', Measurement>>;
  };
  readonly scrapeCpu: ReadonlyArray<{
    readonly replicas: number;
    readonly vsProm: Ratio;
    readonly vsConcat: Ratio;
    readonly results: Readonly<Record<string, { readonly cpuNsPerScrape: Measurement; readonly series: Measurement }>>;
  }>;
  readonly scrapeBlock: ReadonlyArray<{ readonly replicas: number; readonly results: Readonly<Record<string, Readonly<Record<string, Measurement>>>> }>;
  /** Absent from runs made before the bench measured readers that never read; `tls` from runs before it measured them over TLS. */
  readonly slowReaders?: {
    readonly replicas: number;
    readonly stalled: number;
    readonly results: { readonly stall: Readonly<Record<string, Measurement>>; readonly tls?: Readonly<Record<string, Measurement>> };
  };
  /** Absent from runs made before the bench measured connections sending HEAD after HEAD; results by size (`3 × 64`). */
  readonly headFlood?: {
    readonly sockets: number;
    readonly heads: number;
    readonly results: Readonly<Record<string, Readonly<Record<string, Measurement>>>>;
  };
  readonly memory: Readonly<Record<'counter' | 'gauge' | 'histogram', { readonly ours: Measurement; readonly promClient: Measurement }>>;
  readonly coldStart: {
    readonly require: Readonly<Record<'ours' | 'prom-client' | 'sdk', { readonly requireNs: Measurement }>>;
    readonly registrations: Readonly<Record<string, Readonly<Record<'ours' | 'prom-client' | 'sdk', { readonly registerNs: Measurement }>>>>;
  };
}

/** The pages holding figures, relative to the repository root. */
export const FIGURE_PAGES = ['docs/performance.md', 'docs/exposition.md', 'docs/exemplars.md'];

const LARGE = 256;
const ms = (ns: number, digits = 1): string => (ns / 1e6).toFixed(digits);
const spread = (m: Measurement): string => `${ms(m.median)} ms (${ms(m.min)}–${ms(m.max)})`;
const times = (ratio: number): string => `×${ratio.toFixed(2)}`;
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+$)/g, ' ');
const megabytes = (bytes: number): string => `${Math.round(bytes / 2 ** 20)} MB`;
const ns = (m: Measurement): string => (m.median >= 1000 ? `${(m.median / 1000).toFixed(2)} µs` : `${m.median.toFixed(m.median < 10 ? 1 : 0)} ns`);

function block(results: BenchResults, replicas: number): Readonly<Record<string, Readonly<Record<string, Measurement>>>> {
  const found = results.scrapeBlock.find((entry) => entry.replicas === replicas);
  if (found === undefined) throw new Error(`bench/results.json has no scrape-block run at 3 × ${replicas}`);
  return found.results;
}

function measure(record: Readonly<Record<string, Measurement>> | undefined, key: string): Measurement {
  const value = record?.[key];
  if (value === undefined) throw new Error(`bench/results.json lacks ${key}`);
  return value;
}

/** The rows of readers that never read (over HTTP, and over TLS once measured), once the bench measured them. */
function slowReaderRows(results: BenchResults): Array<[string, string]> {
  const slow = results.slowReaders;
  if (slow === undefined) return [];
  const { replicas, stalled } = slow;
  const row = (over: string, stall: Readonly<Record<string, Measurement>>): [string, string] => [
    `${stalled} readers that send \`GET /metrics\` and never read${over}, 3 × ${replicas}`,
    `${measure(stall, 'served').min} of 10 scrapes served whole; worst block ${spread(measure(stall, 'worstBlockNs'))}; ` +
      `external memory +${megabytes(measure(stall, 'externalGrowthBytes').median)}` +
      (stall.heldExternalBytes === undefined ? '' : ` at peak, +${megabytes(measure(stall, 'heldExternalBytes').median)} held once garbage is collected`) +
      `; \`shutdown()\` ${ms(measure(stall, 'shutdownNs').median, 0)} ms`,
  ];
  return [row('', slow.results.stall), ...(slow.results.tls === undefined ? [] : [row(', over TLS', slow.results.tls)])];
}

/** The row of connections sending HEAD after HEAD, once the bench measured them. */
function headFloodRows(results: BenchResults): Array<[string, string]> {
  const flood = results.headFlood;
  if (flood === undefined) return [];
  const sizes = Object.keys(flood.results);
  const answered = (size: string): number => (measure(flood.results[size], 'lengthsRight').min === 1 ? measure(flood.results[size], 'answered').min : 0);
  return [
    [
      `${flood.sockets} connections sending ${flood.heads} \`HEAD /metrics\` each, back to back, ${sizes.join(' / ')}`,
      `${sizes.map(answered).join(' / ')} of ${flood.sockets * flood.heads} answered with the length a GET gets; external memory ` +
        sizes.map((size) => `+${megabytes(measure(flood.results[size], 'externalGrowthBytes').median)}`).join(' / ') +
        ' at peak',
    ],
  ];
}

/** What readers that never read cost over TLS beside plain HTTP, as the exposition page restates its bound. */
function tlsReadersFigure(results: BenchResults): string {
  const slow = results.slowReaders;
  const tls = slow?.results.tls;
  if (slow === undefined || tls === undefined || tls.heldExternalBytes === undefined) return 'not measured yet (run `npm run bench`)';
  const { stall } = slow.results;
  return (
    `${slow.stalled} TLS readers that never read at 3 × ${slow.replicas}: +${megabytes(measure(tls, 'heldExternalBytes').median)} of external memory held once ` +
    `garbage is collected (over HTTP +${megabytes(measure(stall, 'heldExternalBytes').median)}), +${megabytes(measure(tls, 'externalGrowthBytes').median)} at peak ` +
    `(+${megabytes(measure(stall, 'externalGrowthBytes').median)}), RSS +${megabytes(measure(tls, 'rssGrowthBytes').median)} (+${megabytes(measure(stall, 'rssGrowthBytes').median)})`
  );
}

/** What connections sending HEAD after HEAD cost, as the exposition page quotes it. */
function headFloodFigure(results: BenchResults): string {
  const flood = results.headFlood;
  if (flood === undefined) return 'not measured yet (run `npm run bench`)';
  const sizes = Object.keys(flood.results);
  return (
    `${flood.sockets} connections sending HEAD after HEAD at ${sizes.join(' and ')}: external memory ` +
    `${sizes.map((size) => `+${megabytes(measure(flood.results[size], 'externalGrowthBytes').median)}`).join(' and ')} at peak`
  );
}

/** Every figure the docs quote, by name. */
export function benchFigures(results: BenchResults): Record<string, string> {
  const large = block(results, LARGE);
  const one = large.one;
  const oneBlock = measure(one, 'worstBlockNs');
  const series = grouped(measure(one, 'series').median);
  const text = megabytes(measure(one, 'bytes').median);
  const concurrent = large.concurrent;
  const small = block(results, 64);
  const sizes = results.scrapeCpu.map((entry) => entry.replicas).join(' / ');
  const largeCpu = results.scrapeCpu.find((entry) => entry.replicas === LARGE)?.results.ours;
  const registration = (replicas: number, who: 'ours' | 'prom-client' | 'sdk'): string =>
    `${ms(results.coldStart.registrations[String(replicas)]?.[who].registerNs.median ?? NaN, 0)} ms`;
  const renderings = measure(concurrent, 'renderingsPerScrape').median;
  const rows: Array<[string, string]> = [
    [`worst event-loop block during one scrape, 3 × ${LARGE}`, `${spread(oneBlock)}; gzip ${ms(measure(large.gzip, 'worstBlockNs').median)} ms`],
    ['same, 3 × 64', `${spread(measure(small.one, 'worstBlockNs'))}; gzip ${ms(measure(small.gzip, 'worstBlockNs').median)} ms`],
    [
      `ten scrapers at once, 3 × ${LARGE}`,
      `${renderings === 1 ? 'one rendering' : `${renderings} renderings`}; worst block ${ms(measure(concurrent, 'worstBlockNs').median)} ms; ` +
        `last response ${times(ratioOf(measure(concurrent, 'wallNs'), measure(one, 'wallNs')).median)} one scrape's time (ten times the bytes through ` +
        `loopback to a scraper process on the same 2 cores); RSS growth ${times(ratioOf(measure(concurrent, 'firstRssGrowthBytes'), measure(one, 'firstRssGrowthBytes')).median)} one scrape's`,
    ],
    [`scrape CPU against prom-client holding the same series, 3 × ${sizes}`, results.scrapeCpu.map((entry) => times(entry.vsProm.median)).join(' / ')],
    [
      'scrape CPU against concatenating the pre-rendered lines of the same exposition',
      results.scrapeCpu.map((entry) => times(entry.vsConcat.median)).join(' / '),
    ],
    ...slowReaderRows(results),
    ...headFloodRows(results),
    [
      'heap per series: counter, gauge, histogram (22 buckets)',
      `${(['counter', 'gauge', 'histogram'] as const).map((kind) => `${results.memory[kind].ours.median.toFixed(0)} B`).join(', ')}; prom-client ` +
        (['counter', 'gauge', 'histogram'] as const).map((kind) => `${results.memory[kind].promClient.median.toFixed(0)} B`).join(', '),
    ],
    [
      'one inter-token latency observation',
      `${results.interToken.ours.median.toFixed(0)} ns, ${times(ratioOf(results.interToken.ours, results.interToken.floor).median)} a \`Float64Array\` histogram; ` +
        `prom-client ${results.interToken['prom-client'].median.toFixed(0)} ns`,
    ],
    [
      'one engine poll through the hooks: scheduler stats only / 32 decode tokens',
      `${ns(results.recordPath.nsPerPoll['stats-poll'])} / ${ns(results.recordPath.nsPerPoll['decode-poll'])}; heap allocated ` +
        `${results.recordPath.statsPollBytes.median.toFixed(0)} B per poll / ${results.recordPath.tokenBytes.median.toFixed(0)} B per token`,
    ],
    [
      'a patched host method with nobody listening',
      `${ns(results.recordPath.nsPerPoll['idle-wrapper'])} a call (the bare method, inlined by V8: ${ns(results.recordPath.nsPerPoll.direct)})` +
        (results.instructions === undefined
          ? ''
          : `; counted, ${results.instructions.perCall['idle-wrapper'].toFixed(1)} instructions against ${results.instructions.perCall.direct.toFixed(1)} (×${results.instructions.idleWrapperVsDirect.toFixed(2)})`),
    ],
    [
      'one request, 3 × 4 replicas, 100 tokens per stage, over the host alone',
      `${ms(results.perRequest.costs.ours.median, 2)} ms; a hand-written path writing the same samples into plain cells ` +
        `${ms(results.perRequest.costs.floor.median, 2)} ms (${times(results.perRequest.oursVsFloor.median)}), into prom-client ${ms(results.perRequest.costs['prom-client'].median, 2)} ms`,
    ],
    [
      'the same request counted in program instructions (cachegrind), over the host alone',
      results.instructions === undefined
        ? 'not measured (valgrind not installed)'
        : `${thousands(results.instructions.perRequest.ours - results.instructions.perRequest.host)}; the hand-written path into plain cells ` +
          `${thousands(results.instructions.perRequest.floor - results.instructions.perRequest.host)} (×${results.instructions.oursVsFloor.toFixed(2)})`,
    ],
    [
      'the same request with exemplars on, traced by its client (`traceparent`)',
      `${ms(results.perRequest.costs['ours-traced'].median, 2)} ms over the host, ${times(results.perRequest.tracedVsOurs.median)} the same request with exemplars off`,
    ],
    ...sloRow(results),
    [
      `registration, 3 × 64 / 3 × ${LARGE} (cold process)`,
      `${registration(64, 'ours')} / ${registration(LARGE, 'ours')}; prom-client ${registration(64, 'prom-client')} / ${registration(LARGE, 'prom-client')}; ` +
        `sdk-metrics ${registration(64, 'sdk')} / ${registration(LARGE, 'sdk')}`,
    ],
    [
      '`require` of the package (cold process)',
      `${ms(results.coldStart.require.ours.requireNs.median, 0)} ms; prom-client ${ms(results.coldStart.require['prom-client'].requireNs.median, 0)} ms; ` +
        `sdk-metrics + exporter-prometheus ${ms(results.coldStart.require.sdk.requireNs.median, 0)} ms`,
    ],
  ];
  const cpuPerThousand = largeCpu ? (largeCpu.cpuNsPerScrape.median / largeCpu.series.median) * 1000 : NaN;
  return {
    'tls-readers': tlsReadersFigure(results),
    'head-flood': headFloodFigure(results),
    run: `Latest run, ${results.machine.replace('Node v', 'Node ')}, every series populated (3 stages × ${LARGE} replicas is ${series} series, ${text} of text):`,
    // A block of its own: blank lines keep the markers out of the table.
    table: `\n\n${['| what | measured (median, spread in parentheses) |', '|---|---|', ...rows.map(([what, value]) => `| ${what} | ${value} |`)].join('\n')}\n\n`,
    'scrape-large': `At 3 stages × ${LARGE} replicas (${series} series, ${text} of text) the host's event loop was blocked at most ${ms(oneBlock.median)} ms`,
    'text-large': `at 3 × ${LARGE} replicas, ${text}`,
    'cpu-per-thousand': `about ${Math.round(cpuPerThousand / 1e6)} ms of CPU per thousand series`,
    'exemplar-cost':
      `for one request of the 3 × 4 pipeline traced by its client, the hooks cost ${times(results.perRequest.tracedVsOurs.median)} ` +
      `(${results.perRequest.tracedVsOurs.min.toFixed(2)}–${results.perRequest.tracedVsOurs.max.toFixed(2)}) what they cost with exemplars off; ` +
      `a finished request's records as the serving observer makes them (its clock reading, the success counter and the e2e histogram) ${ns(results.exemplars.nsPerRequest['exemplars-off'])} off, ` +
      `${times(results.exemplars.untraced.median)} that on without a trace, ${ns(results.exemplars.nsPerRequest['exemplars-traced'])} ` +
      `(${times(results.exemplars.traced.median)}) with every record traced.`,
  };
}

/** The row of the request judged against objectives (`slo`), once the bench measured it. */
function sloRow(results: BenchResults): Array<[string, string]> {
  const cost = results.perRequest.costs['ours-slo'];
  const ratio = results.perRequest.sloVsOurs;
  if (cost === undefined || ratio === undefined) return [];
  return [
    ['the same request judged against five objectives (`slo`)', `${ms(cost.median, 2)} ms over the host, ${times(ratio.median)} the same request without`],
  ];
}

/** `page` with each `<!-- bench:NAME -->` span holding the current figure; an unknown NAME throws. */
export function withBenchFigures(page: string, results: BenchResults): string {
  const figures = benchFigures(results);
  return page.replace(/<!-- bench:([a-z-]+) -->[^]*?<!-- \/bench:\1 -->/g, (_span, name: string) => {
    const figure = figures[name];
    if (figure === undefined) throw new Error(`no bench figure named ${name} (known: ${Object.keys(figures).join(', ')})`);
    return `<!-- bench:${name} -->${figure}<!-- /bench:${name} -->`;
  });
}

export function readBenchResults(root: string): BenchResults {
  return JSON.parse(readFileSync(join(root, 'bench', 'results.json'), 'utf8')) as BenchResults;
}

if (require.main === module) {
  const root = join(__dirname, '..');
  const results = readBenchResults(root);
  for (const page of FIGURE_PAGES) writeFileSync(join(root, page), withBenchFigures(readFileSync(join(root, page), 'utf8'), results));
  console.log(`wrote the bench figures of ${FIGURE_PAGES.join(', ')} from bench/results.json`);
}

/** An instruction count in thousands, e.g. `1 534 k`. */
function thousands(count: number): string {
  return `${Math.round(count / 1000)
    .toLocaleString('en')
    .replaceAll(',', ' ')} k`;
}
