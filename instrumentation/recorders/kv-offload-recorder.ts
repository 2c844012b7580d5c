import type { StageReplica } from '../../views/stage-replica-map';
import type { UpstreamFamilyKey } from '../../views/catalog/upstream-families';
import type { SeriesStore } from '../../views/store/series-store';
import { SIMPLE_KV_OFFLOAD_OUTCOMES, type KvOffloadStats, type SimpleKvOffloadStats } from '../stats/types';
import type { EngineSeries } from './engine-series';

/** The flat families of an offloading report, in the order vLLM declares them, with the field that feeds each. */
const OFFLOAD_COUNTERS = [
  ['kvOffloadLoadBytes', 'loadBytes'],
  ['kvOffloadLoadTime', 'loadTime'],
  ['kvOffloadStoreBytes', 'storeBytes'],
  ['kvOffloadStoreTime', 'storeTime'],
  ['kvOffloadAllocationFailure', 'allocationFailures'],
  ['kvOffloadStoresSkipped', 'storesSkipped'],
] as const satisfies ReadonlyArray<readonly [UpstreamFamilyKey, keyof KvOffloadStats]>;
const OFFLOAD_HISTOGRAMS = [
  ['kvOffloadLoadSize', 'loadSize'],
  ['kvOffloadStoreSize', 'storeSize'],
  ['kvOffloadLookupSyncDelay', 'lookupSyncDelaySeconds'],
  ['kvOffloadLookupAsyncDelay', 'lookupAsyncDelaySeconds'],
] as const satisfies ReadonlyArray<readonly [UpstreamFamilyKey, keyof KvOffloadStats]>;

/**
 * vLLM's `OffloadPromMetrics.observe`: each field of the report is one payload entry, whose series
 * `_get_prometheus_metric` creates on its first entry (an engine that never reported one has
 * none); for the CPU spec, the load and store entries also feed the deprecated `transfer_type`
 * families, whose series exist from start (load = CPU_to_GPU, store = GPU_to_CPU).
 */
export function recordKvOffload(store: SeriesStore, modelName: string, engine: StageReplica, deprecated: EngineSeries, stats: KvOffloadStats): void {
  const labels = [modelName, engine.stage, engine.replica];
  for (const [key, field] of OFFLOAD_COUNTERS) {
    const value = stats[field];
    if (typeof value === 'number') store.bind(`upstream.${key}`, labels).record(value);
  }
  for (const [key, field] of OFFLOAD_HISTOGRAMS) {
    const values = stats[field];
    if (!Array.isArray(values) || values.length === 0) continue;
    const series = store.bind(`upstream.${key}`, labels);
    for (const value of values as readonly number[]) series.record(value);
  }
  if (stats.cpuSpec !== false) recordDeprecatedTransfers(deprecated, stats);
}

/** The deprecated `transfer_type` families, fed from the same report while dashboards migrate. */
function recordDeprecatedTransfers(series: EngineSeries, stats: KvOffloadStats): void {
  if (typeof stats.loadBytes === 'number') series.kvOffloadTotalBytes.CPU_to_GPU.record(stats.loadBytes);
  if (typeof stats.loadTime === 'number') series.kvOffloadTotalTime.CPU_to_GPU.record(stats.loadTime);
  if (typeof stats.storeBytes === 'number') series.kvOffloadTotalBytes.GPU_to_CPU.record(stats.storeBytes);
  if (typeof stats.storeTime === 'number') series.kvOffloadTotalTime.GPU_to_CPU.record(stats.storeTime);
  if (Array.isArray(stats.loadSize)) for (const size of stats.loadSize as readonly number[]) series.kvOffloadSize.CPU_to_GPU.record(size);
  if (Array.isArray(stats.storeSize)) for (const size of stats.storeSize as readonly number[]) series.kvOffloadSize.GPU_to_CPU.record(size);
}

/**
 * vLLM's `SimpleCPUOffloadPromMetrics.observe`: labelled counters by outcome and phase, two gauges,
 * the info gauge, every series created by the first report that carries it, as vLLM creates them.
 * The scheduler's `get_stats` puts an outcome or a load phase in its report only when it moved
 * since the last one, so a zero increment is no report: it creates no series.
 */
export function recordSimpleKvOffload(store: SeriesStore, modelName: string, engine: StageReplica, stats: SimpleKvOffloadStats): void {
  const { stage, replica } = engine;
  for (const outcome of SIMPLE_KV_OFFLOAD_OUTCOMES) {
    const value = stats.saveOutcomes?.[outcome];
    if (value !== undefined && value !== 0) store.bind('upstream.simpleKvOffloadSaveOutcomes', [modelName, stage, replica, outcome]).record(value);
  }
  for (const phase of ['issued', 'completed'] as const) {
    const value = stats.loadBlocks?.[phase];
    if (value !== undefined && value !== 0) store.bind('upstream.simpleKvOffloadLoadBlocks', [modelName, stage, replica, phase]).record(value);
  }
  if (stats.usedBlocks !== undefined) store.bind('upstream.simpleKvOffloadUsedBlocks', [modelName, stage, replica]).record(stats.usedBlocks);
  if (stats.pendingStoreBlocks !== undefined)
    store.bind('upstream.simpleKvOffloadPendingStoreBlocks', [modelName, stage, replica]).record(stats.pendingStoreBlocks);
  const info = stats.info;
  if (info) {
    const labels = [modelName, stage, replica, info.backend, String(info.pageCache), String(info.lazyOffload), String(info.capacityBlocks)];
    store.bind('upstream.simpleKvOffloadInfo', labels).record(1);
  }
}
