import { ratioOf, type Measurement } from './measure';
import { printRow, printTitle } from './report';
import { contender, figure, interleave, type RoundResults } from './rounds';

/** CPU and bytes of one scrape at 3 × `replicas`: ours, prom-client with the same series, pre-rendered lines concatenated. */
export async function scrapeCpuSection(rounds: number, replicas: number) {
  const names = ['ours', 'prom-client', 'concat'] as const;
  const scrapes = Math.max(2, Math.round(64 / replicas));
  const results = await interleave(
    names.map((name) => contender(name, 'scrape-cpu', { contender: name, replicas, scrapes })),
    rounds,
  );
  const cpu = (name: string) => figure(results, name, 'cpuNsPerScrape');
  const ours = cpu('ours');
  const series = figure(results, 'ours', 'series').median;
  printTitle(`3. Scrape CPU, 3 stages × ${replicas} replicas (${series} series, ${(figure(results, 'ours', 'bytes').median / 2 ** 20).toFixed(2)} MB)`);
  const vsProm = ratioOf(ours, cpu('prom-client'));
  const vsConcat = ratioOf(ours, cpu('concat'));
  printRow('omni-otel-metrics metricsBytes()', ours, 'ns', { to: 'prom-client', ratio: vsProm });
  printRow('', ours, 'ns', { to: 'concatenated lines', ratio: vsConcat });
  printRow('prom-client registry.metrics(), as bytes', cpu('prom-client'), 'ns');
  printRow('pre-rendered lines concatenated, as bytes', cpu('concat'), 'ns');
  return { replicas, series, bytes: figure(results, 'ours', 'bytes').median, results: plain(results), vsProm, vsConcat };
}

/** The worst event-loop block of real HTTP scrapes at 3 × `replicas`: one, gzip, `scrapers` at once, through the engine pull. */
export async function scrapeBlockSection(rounds: number, replicas: number, modes: readonly string[], scrapers: number) {
  const results = await interleave(
    modes.map((mode) => contender(mode, 'scrape-block', { mode, replicas, repeats: 2, scrapers })),
    rounds,
  );
  printTitle(
    `4. Worst event-loop block while /metrics is served over HTTP, 3 stages × ${replicas} replicas (${figure(results, modes[0] ?? 'one', 'series').median} series)`,
  );
  const labels: Record<string, string> = {
    one: 'one scrape',
    gzip: 'one scrape, gzip',
    concurrent: `${scrapers} scrapers at once`,
    'engine-pull': 'one scrape, enginePull from 4 data-parallel engine servers',
  };
  for (const mode of modes) {
    printRow(`${labels[mode] ?? mode}: worst block`, figure(results, mode, 'worstBlockNs'), 'ns');
    printRow(
      `${labels[mode] ?? mode}: wall time`,
      figure(results, mode, 'wallNs'),
      'ns',
      mode === 'concurrent' ? { to: 'one scrape', ratio: ratioOf(figure(results, mode, 'wallNs'), figure(results, 'one', 'wallNs')) } : undefined,
    );
    printRow(`${labels[mode] ?? mode}: bytes on the wire`, figure(results, mode, 'bytes'), 'bytes');
    printRow(
      `${labels[mode] ?? mode}: RSS growth (first scrape)`,
      figure(results, mode, 'firstRssGrowthBytes'),
      'bytes',
      mode === 'concurrent'
        ? { to: 'one scrape', ratio: ratioOf(figure(results, mode, 'firstRssGrowthBytes'), figure(results, 'one', 'firstRssGrowthBytes')) }
        : undefined,
    );
  }
  const renderings = results.get('concurrent')?.renderingsPerScrape?.median;
  if (modes.includes('concurrent'))
    console.log(
      `  renderings per ${scrapers} concurrent scrapes: ${renderings === undefined || renderings === null || Number.isNaN(renderings) ? 'not exposed by the reader' : renderings}`,
    );
  return { replicas, results: plain(results), renderings: renderings === undefined || Number.isNaN(renderings) ? null : renderings };
}

/**
 * The package's own `/metrics` server at 3 × `replicas` while `stalled` readers that never read
 * (a 4 KiB receive window) hold their connections, and a scraper in another process scrapes ten
 * times: scrapes served whole, the host's worst event-loop block, its external-memory growth (peak,
 * and what is still held once the garbage is collected), and how long `shutdown()` takes with the
 * readers still there; over plain HTTP (`stall`) and over TLS (`tls`).
 */
export async function slowReaderSection(rounds: number, replicas: number, stalled: number) {
  const scrapes = 10;
  const results = await interleave(
    [
      contender('stall', 'slow-reader-stall', { replicas, stalled, scrapes }, { exposeGc: true }),
      contender('tls', 'slow-reader-stall', { replicas, stalled, scrapes, tls: true }, { exposeGc: true }),
    ],
    rounds,
  );
  printTitle(
    `11. ${stalled} readers that send GET /metrics and never read, 3 stages × ${replicas} replicas (${(figure(results, 'stall', 'bytes').median / 2 ** 20).toFixed(1)} MB)`,
  );
  for (const [name, over] of [
    ['stall', 'HTTP'],
    ['tls', 'TLS'],
  ] as const) {
    const served = figure(results, name, 'served');
    console.log(`  ${`${over}: scrapes served whole, of 10, during the stall`.padEnd(58)} ${String(served.median).padStart(10)} [${served.min}–${served.max}]`);
    printRow(`${over}: worst event-loop block during the stall`, figure(results, name, 'worstBlockNs'), 'ns');
    printRow(`${over}: external memory growth (peak, over before the stall)`, figure(results, name, 'externalGrowthBytes'), 'bytes');
    printRow(`${over}: external memory still held once garbage is collected`, figure(results, name, 'heldExternalBytes'), 'bytes');
    printRow(`${over}: RSS growth (peak)`, figure(results, name, 'rssGrowthBytes'), 'bytes');
    printRow(`${over}: shutdown() with the readers still connected`, figure(results, name, 'shutdownNs'), 'ns');
  }
  return { replicas, stalled, scrapes, results: plain(results) };
}

/**
 * The package's own `/metrics` server at 3 × each of `sizes` while `sockets` keep-alive connections
 * in another process send `heads` HEADs each, back to back: HEADs answered with the length a GET
 * gets, and the host's external-memory and RSS growth (peaks, garbage not yet collected included).
 */
export async function headFloodSection(rounds: number, sizes: readonly number[], sockets: number, heads: number) {
  const results = await interleave(
    sizes.map((replicas) => contender(`3 × ${replicas}`, 'head-flood', { replicas, sockets, heads }, { exposeGc: true })),
    rounds,
  );
  printTitle(`12. ${sockets} connections sending ${heads} HEAD /metrics each, back to back`);
  for (const replicas of sizes) {
    const name = `3 × ${replicas}`;
    const answered = figure(results, name, 'answered');
    const right = figure(results, name, 'lengthsRight');
    console.log(
      `  ${`${name} (${(figure(results, name, 'bytes').median / 2 ** 20).toFixed(1)} MB): HEADs answered with the GET's length`.padEnd(58)} ${String(right.min === 1 ? answered.min : 0).padStart(10)} of ${sockets * heads}`,
    );
    printRow(`${name}: external memory growth (peak)`, figure(results, name, 'externalGrowthBytes'), 'bytes');
    printRow(`${name}: RSS growth (peak)`, figure(results, name, 'rssGrowthBytes'), 'bytes');
  }
  return { sockets, heads, results: plain(results) };
}

/** Round results as plain JSON (medians, ranges, rounds). */
export function plain(results: RoundResults): Record<string, Record<string, Measurement>> {
  return Object.fromEntries(results);
}
