import { collectDefaultMetrics, Registry } from 'prom-client';
import { registerOmniMetrics } from '../register';
import { compare, type Measurement } from './measure';
import { COUNTER_INCREMENT, GAUGE_VALUE, HISTOGRAM_VALUES, populateAllSeries } from './populate-all';
import { promClientSeries } from './rebinding-store';

function toBytes(text: string): void {
  Buffer.from(text, 'utf8');
}

export interface ScrapeResult {
  readonly replicasPerStage: number;
  readonly series: number;
  readonly lines: number;
  readonly ours: Measurement;
  readonly promClient: Measurement;
}

export const SCRAPE_CONTENDERS = { ours: 'omni-otel-metrics: the bytes /metrics serves', promClient: 'prom-client registry.metrics(), as bytes' } as const;

/**
 * The full catalog (every feature group, hidden names included) at 3 stages × `replicas`, every
 * series populated, scraped by us and by prom-client holding the very same series and values.
 * With `processMetrics`, both also read the process and Node.js runtime families at each scrape
 * (ours: `processMetrics: true`; prom-client: `collectDefaultMetrics`).
 */
export async function scrape(replicas: number, processMetrics = false): Promise<ScrapeResult> {
  const pools = [replicas, replicas, replicas];
  const handle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: pools,
    logStats: true,
    showHiddenMetrics: true,
    features: { specDecode: { numSpeculativeTokens: 3 }, kvConnector: 'nixl', lora: { maxLoras: 2 }, kvCacheMetrics: true, corruptedRequests: true },
    cacheConfig: { block_size: 16, cache_dtype: 'auto', enable_prefix_caching: true, num_gpu_blocks: 4096 },
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    processMetrics,
  });
  const engines = handle.stageReplicaMap.entries().map(([, engine]) => engine);
  const populated = populateAllSeries(handle.store, engines);

  // prom-client holds the very same series with the very same values.
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });
  const mirror = promClientSeries(registry);
  for (const { family, attributes } of populated) {
    const series = mirror(family, attributes);
    if (family.type === 'histogram') for (const value of HISTOGRAM_VALUES) series.record(value);
    else series.record(family.type === 'counter' ? COUNTER_INCREMENT : GAUGE_VALUE);
  }

  const text = await handle.metricsText();
  const reader = handle.prometheusReader;
  if (reader === undefined) throw new Error('registerOmniMetrics creates a Prometheus reader');
  const iterations = Math.max(1, Math.round(64 / replicas));
  const [ours, promClient] = await compare(
    [
      // Encoded to the bytes a response carries: a string built lazily is paid for when it is written.
      { name: SCRAPE_CONTENDERS.ours, op: () => reader.metricsBytes('text').then(() => undefined) },
      { name: SCRAPE_CONTENDERS.promClient, op: () => registry.metrics().then(toBytes) },
    ],
    { iterations, rounds: 5 },
  );
  await handle.shutdown();
  if (ours === undefined || promClient === undefined) throw new Error('two contenders measured');
  return { replicasPerStage: replicas, series: populated.length, lines: text.split('\n').length - 1, ours, promClient };
}
