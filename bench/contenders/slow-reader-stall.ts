import { probe } from '../block-probe';
import { RemoteScrapers } from '../remote-scrapers';
import { populatedPipeline } from '../scrape-setup';
import { StalledReaders } from '../stalled-readers';
import { contenderMain } from './contender-main';

interface Params {
  readonly replicas: number;
  /** Readers that send a GET and never read. */
  readonly stalled: number;
  /** Legitimate scrapes made one after another during the stall. */
  readonly scrapes: number;
}

/**
 * The package's own `/metrics` server while `stalled` readers that never read hold their
 * connections (in a process of their own), and a legitimate scraper (another process) scrapes
 * `scrapes` times one after another: how many scrapes got the whole exposition, the worst
 * event-loop block of this, the host's, process, and its peak external memory and RSS over what
 * they were before the stall.
 */
contenderMain(async ({ replicas, stalled, scrapes }: Params) => {
  const { handle } = await populatedPipeline(replicas, { prometheus: { port: 0 }, exporters: ['prometheus'] });
  const url = handle.prometheusServer?.url;
  if (url === undefined) throw new Error('the /metrics server is listening');
  const remote = new RemoteScrapers();
  const [bytes] = await remote.scrape({ url, gzip: false, count: 1 });
  const externalBefore = externalBytes();
  let externalPeak = externalBefore;
  const sampler = setInterval(() => (externalPeak = Math.max(externalPeak, externalBytes())), 5);
  const readers = new StalledReaders(url, { count: stalled, staggerMillis: 20 });
  const run = await probe(async () => {
    await readers.open();
    // The stalled readers' sockets fill and the server's writes wait.
    await new Promise((resolve) => setTimeout(resolve, 500));
    let served = 0;
    for (let i = 0; i < scrapes; i++) {
      const outcome = await remote.scrape({ url, gzip: false, count: 1 }).catch(() => [0]);
      if (outcome[0] === bytes) served++;
    }
    return served;
  });
  clearInterval(sampler);
  const shutdownStart = performance.now();
  // Bounded: a shutdown held by a stalled reader would otherwise hang the bench.
  await Promise.race([handle.shutdown(), new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
  const shutdownNs = (performance.now() - shutdownStart) * 1e6;
  await readers.close();
  remote.close();
  return {
    bytes: bytes ?? 0,
    served: run.result,
    worstBlockNs: run.worstBlockNs,
    externalGrowthBytes: externalPeak - externalBefore,
    rssGrowthBytes: run.rssGrowthBytes,
    shutdownNs,
  };
});

/** Memory held outside the JavaScript heap: the Buffers of renderings and sockets. */
function externalBytes(): number {
  return process.memoryUsage().external;
}
