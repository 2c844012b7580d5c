import { HeadFlood } from '../head-flood';
import { RemoteScrapers } from '../remote-scrapers';
import { populatedPipeline } from '../scrape-setup';
import { collectGarbage, contenderMain } from './contender-main';

interface Params {
  readonly replicas: number;
  /** Keep-alive connections sending HEADs. */
  readonly sockets: number;
  /** HEADs each connection sends, one after the other. */
  readonly heads: number;
}

/**
 * The package's own `/metrics` server while `sockets` connections (another process) send `heads`
 * HEADs each, back to back: the peak of the memory outside the JavaScript heap (renderings,
 * sockets; garbage not yet collected included) and of the RSS over what they were before, how
 * many HEADs were answered, and whether every `Content-Length` was the length of the exposition a
 * GET gets. Run with `--expose-gc`.
 */
contenderMain(async ({ replicas, sockets, heads }: Params) => {
  const { handle } = await populatedPipeline(replicas, { prometheus: { port: 0 }, exporters: ['prometheus'] });
  const url = handle.prometheusServer?.url;
  if (url === undefined) throw new Error('the /metrics server is listening');
  const remote = new RemoteScrapers();
  const [bytes] = await remote.scrape({ url, gzip: false, count: 1 });
  const flood = new HeadFlood();
  collectGarbage();
  const before = process.memoryUsage();
  let externalPeak = before.external;
  let rssPeak = before.rss;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    externalPeak = Math.max(externalPeak, now.external);
    rssPeak = Math.max(rssPeak, now.rss);
  }, 5);
  const outcome = await flood.run({ url, sockets, heads });
  clearInterval(sampler);
  flood.close();
  remote.close();
  await handle.shutdown();
  return {
    bytes: bytes ?? 0,
    answered: outcome.answered,
    failed: outcome.failed,
    lengthsRight: outcome.lengths.length === 1 && outcome.lengths[0] === bytes ? 1 : 0,
    externalGrowthBytes: externalPeak - before.external,
    rssGrowthBytes: rssPeak - before.rss,
  };
});
