import { performance } from 'node:perf_hooks';
import { populatedPipeline, promClientMirror } from '../scrape-setup';
import { contenderMain } from './contender-main';

export const SCRAPE_CPU_CONTENDERS = ['ours', 'prom-client', 'concat'] as const;

interface Params {
  readonly contender: (typeof SCRAPE_CPU_CONTENDERS)[number];
  readonly replicas: number;
  readonly scrapes: number;
}

/**
 * CPU and bytes of one scrape of the populated full catalog, as the bytes a response carries: the
 * package's reader, prom-client holding the same series, or the package's own output kept as
 * pre-rendered lines and concatenated (the floor of any renderer).
 */
contenderMain(async ({ contender, replicas, scrapes }: Params) => {
  const { handle, series } = await populatedPipeline(replicas);
  const reader = handle.prometheusReader;
  if (reader === undefined) throw new Error('registerOmniMetrics creates a Prometheus reader');
  let scrape: () => Promise<Buffer>;
  if (contender === 'ours') {
    scrape = () => reader.metricsBytes('text');
  } else if (contender === 'prom-client') {
    const registry = promClientMirror(series);
    await handle.shutdown();
    scrape = async () => Buffer.from(await registry.metrics(), 'utf8');
  } else {
    const lines = (await handle.metricsText()).split(/(?<=\n)/);
    await handle.shutdown();
    scrape = () => Promise.resolve(Buffer.from(lines.join(''), 'utf8'));
  }
  const bytes = (await scrape()).length;
  // Steady state, as a long-running server scrapes: every contender's code is compiled before it is measured.
  for (const warmUntil = performance.now() + 500; performance.now() < warmUntil;) await scrape();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < scrapes; i++) await scrape();
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpuNsPerScrape: ((cpu.user + cpu.system) * 1e3) / scrapes, wallNsPerScrape: (wallMs * 1e6) / scrapes, bytes, series: series.length };
});
