import { join } from 'node:path';
import { STALLED_READER_MILLIS } from '../../exporters/connection-slots';
import { heldBytes } from '../../exporters/rendering-memory';
import { probe } from '../block-probe';
import { RemoteScrapers } from '../remote-scrapers';
import { populatedPipeline } from '../scrape-setup';
import { StalledReaders } from '../stalled-readers';
import { collectGarbage, contenderMain } from './contender-main';

/** The tests' self-signed certificate: what a TLS server needs, whoever signed it. */
const TEST_CERTIFICATE = {
  keyFile: join(__dirname, '..', '..', 'test', 'exporters', 'fixtures', 'tls', 'key.pem'),
  certFile: join(__dirname, '..', '..', 'test', 'exporters', 'fixtures', 'tls', 'cert.pem'),
};

interface Params {
  readonly replicas: number;
  /** Serve HTTPS (the test certificate), the readers and the scraper speaking TLS. */
  readonly tls?: boolean;
  /** Readers that send a GET and never read. */
  readonly stalled: number;
  /** Legitimate scrapes made one after another during the stall. */
  readonly scrapes: number;
}

/**
 * The package's own `/metrics` server while `stalled` readers that never read hold their
 * connections (in a process of their own), and a legitimate scraper (another process) scrapes
 * `scrapes` times one after another: how many scrapes got the whole exposition, the worst
 * event-loop block of this, the host's, process, its peak external memory and RSS over what they
 * were before the stall (garbage not yet collected included), and the external memory still held
 * once the garbage is collected, the readers still connected. Run with `--expose-gc`.
 */
contenderMain(async ({ replicas, stalled, scrapes, tls }: Params) => {
  const { handle } = await populatedPipeline(replicas, {
    prometheus: { port: 0, tls: tls === true ? TEST_CERTIFICATE : undefined },
    exporters: ['prometheus'],
  });
  const url = handle.prometheusServer?.url;
  if (url === undefined) throw new Error('the /metrics server is listening');
  const remote = new RemoteScrapers();
  const [bytes] = await remote.scrape({ url, gzip: false, count: 1 });
  collectGarbage();
  const externalBefore = externalBytes();
  let externalPeak = externalBefore;
  const sampler = setInterval(() => (externalPeak = Math.max(externalPeak, externalBytes())), 5);
  const readers = new StalledReaders(url, { count: stalled, staggerMillis: 20 });
  const run = await probe(async () => {
    await readers.open();
    await stallSetIn();
    let served = 0;
    for (let i = 0; i < scrapes; i++) {
      const outcome = await remote.scrape({ url, gzip: false, count: 1 }).catch(() => [0]);
      if (outcome[0] === bytes) served++;
    }
    return served;
  });
  clearInterval(sampler);
  collectGarbage();
  const heldExternalBytes = externalBytes() - externalBefore;
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
    heldExternalBytes,
    rssGrowthBytes: run.rssGrowthBytes,
    shutdownNs,
  };
});

/**
 * Resolves once the readers have stalled: what renderings hold for them has stood still for
 * `STALLED_READER_MILLIS` and a little more (at most 20 s). Until then the kernel still takes in
 * what the server writes (megabytes a connection on loopback; over TLS the server encrypts all of
 * it first, which takes seconds on a busy machine), so to the server they are readers that read.
 */
async function stallSetIn(): Promise<void> {
  const giveUp = performance.now() + 20_000;
  let held = heldBytes();
  let since = performance.now();
  while (performance.now() - since < STALLED_READER_MILLIS + 200 && performance.now() < giveUp) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (heldBytes() !== held) {
      held = heldBytes();
      since = performance.now();
    }
  }
}

/** Memory held outside the JavaScript heap: the Buffers of renderings and sockets. */
function externalBytes(): number {
  return process.memoryUsage().external;
}
