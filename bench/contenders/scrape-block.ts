import type { OmniMetricsHandle } from '../../index';
import { probe, type Probed } from '../block-probe';
import { startEngineServers, type EngineServers } from '../engine-servers';
import { RemoteScrapers } from '../remote-scrapers';
import { median } from '../measure';
import { populatedPipeline } from '../scrape-setup';
import { contenderMain } from './contender-main';

export const SCRAPE_BLOCK_MODES = ['one', 'gzip', 'concurrent', 'engine-pull'] as const;
export type ScrapeBlockMode = (typeof SCRAPE_BLOCK_MODES)[number];

interface Params {
  readonly mode: ScrapeBlockMode;
  readonly replicas: number;
  /** Measured scrapes after the first (whose RSS growth is the one reported). */
  readonly repeats: number;
  /** Scrapers at once in `concurrent` mode. */
  readonly scrapers: number;
}

/**
 * Real HTTP scrapes of the package's own `/metrics` server by scrapers in a process of their own
 * (as Prometheus is): the worst event-loop block of this, the host's, process while a scrape is
 * served, its wall time and this process's RSS growth. Modes: one scrape; one with gzip; `scrapers`
 * at once; one scrape with `enginePull` pulling four data-parallel engine servers.
 */
contenderMain(async ({ mode, replicas, repeats, scrapers }: Params) => {
  let engines: EngineServers | undefined;
  if (mode === 'engine-pull') engines = await startEngineServers(4, [replicas, replicas, replicas], 'm');
  const { handle, series } = await populatedPipeline(replicas, {
    prometheus: { port: 0 },
    exporters: ['prometheus'],
    ...(engines === undefined ? {} : { enginePull: { engines: engines.targets, cacheMillis: 1, timeoutMillis: 30_000 } }),
  });
  const url = handle.prometheusServer?.url;
  if (url === undefined) throw new Error('the /metrics server is listening');
  const remote = new RemoteScrapers();
  const order = { url, gzip: mode === 'gzip', count: mode === 'concurrent' ? scrapers : 1 };
  const scrape = (): Promise<number[]> => remote.scrape(order);
  const renderingsBefore = renderings(handle);
  const first = await probe(scrape);
  const rest: Array<Probed<number[]>> = [];
  for (let i = 0; i < repeats; i++) rest.push(await probe(scrape));
  const renderingsAfter = renderings(handle);
  remote.close();
  await handle.shutdown();
  await engines?.close();
  const sorted = (pick: (p: Probed<number[]>) => number): number => median(rest.map(pick).sort((a, b) => a - b));
  return {
    series: series.length,
    bytes: first.result[0] ?? 0,
    firstRssGrowthBytes: first.rssGrowthBytes,
    firstWorstBlockNs: first.worstBlockNs,
    worstBlockNs: sorted((p) => p.worstBlockNs),
    wallNs: sorted((p) => p.wallNs),
    // Renderings per scrape (per batch of scrapers).
    renderingsPerScrape: (renderingsAfter - renderingsBefore) / (repeats + 1),
  };
});

/** Renderings the reader has started (scrapes that joined one under way are not counted). */
function renderings(handle: OmniMetricsHandle): number {
  return handle.prometheusReader?.sharedRenderings?.started ?? NaN;
}
