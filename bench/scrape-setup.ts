import type { Attributes } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { registerOmniMetrics, type OmniMetricsHandle, type OmniMetricsOptions } from '../index';
import type { ResolvedFamily } from '../views/catalog/catalog';
import { COUNTER_INCREMENT, GAUGE_VALUE, HISTOGRAM_VALUES, populateAllSeries } from './populate-all';
import { promClientSeries } from './rebinding-store';

export interface PopulatedPipeline {
  readonly handle: OmniMetricsHandle;
  /** Every series of the store, populated, with its family: what another library is given to hold. */
  readonly series: ReadonlyArray<{ family: ResolvedFamily; attributes: Attributes }>;
}

/**
 * The full catalog (every feature group, hidden names included) at 3 stages × `replicas`, every
 * series populated: the scrape benchmark's pipeline. `options` adds the server, the engine pull, ….
 */
export async function populatedPipeline(replicas: number, options: Partial<OmniMetricsOptions> = {}): Promise<PopulatedPipeline> {
  const handle = await registerOmniMetrics({
    modelName: 'm',
    stagePools: [replicas, replicas, replicas],
    logStats: true,
    showHiddenMetrics: true,
    features: { specDecode: { numSpeculativeTokens: 3 }, kvConnector: 'nixl', lora: { maxLoras: 2 }, kvCacheMetrics: true, corruptedRequests: true },
    cacheConfig: { block_size: 16, cache_dtype: 'auto', enable_prefix_caching: true, num_gpu_blocks: 4096 },
    prometheus: false,
    exporters: [],
    logIntervalSeconds: 0,
    selfCheck: false,
    processMetrics: false,
    // At 3 × 256, a family with a label beside the replica's (three sleep states) holds more than the default 2000 series.
    cardinalityLimit: 10_000,
    ...options,
  });
  const engines = handle.stageReplicaMap.entries().map(([, engine]) => engine);
  return { handle, series: populateAllSeries(handle.store, engines) };
}

/** prom-client holding the very same series with the very same values. */
export function promClientMirror(series: PopulatedPipeline['series']): Registry {
  const registry = new Registry();
  const mirror = promClientSeries(registry);
  for (const { family, attributes } of series) {
    const child = mirror(family, attributes);
    if (family.type === 'histogram') for (const value of HISTOGRAM_VALUES) child.record(value);
    else child.record(family.type === 'counter' ? COUNTER_INCREMENT : GAUGE_VALUE);
  }
  return registry;
}
