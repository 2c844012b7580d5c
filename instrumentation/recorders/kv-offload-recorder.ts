import type { StageReplica } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import { SIMPLE_KV_OFFLOAD_OUTCOMES, type KvOffloadStats, type SimpleKvOffloadStats } from '../stats/types';
import type { EngineSeries } from './engine-series';

/**
 * vLLM's `OffloadPromMetrics.observe`: the flat load/store families, and, for the CPU spec, the
 * deprecated `transfer_type` families fed from the same payload (load = CPU_to_GPU, store = GPU_to_CPU).
 */
export function recordKvOffload(series: EngineSeries, stats: KvOffloadStats): void {
  const legacy = stats.cpuSpec !== false;
  const counter = (value: number | undefined, flat: EngineSeries['kvOffloadLoadBytes'], old: EngineSeries['kvOffloadLoadBytes']): void => {
    if (value === undefined) return;
    flat.record(value);
    if (legacy) old.record(value);
  };
  counter(stats.loadBytes, series.kvOffloadLoadBytes, series.kvOffloadTotalBytes.CPU_to_GPU);
  counter(stats.loadTime, series.kvOffloadLoadTime, series.kvOffloadTotalTime.CPU_to_GPU);
  counter(stats.storeBytes, series.kvOffloadStoreBytes, series.kvOffloadTotalBytes.GPU_to_CPU);
  counter(stats.storeTime, series.kvOffloadStoreTime, series.kvOffloadTotalTime.GPU_to_CPU);
  for (const size of stats.loadSize ?? []) {
    series.kvOffloadLoadSize.record(size);
    if (legacy) series.kvOffloadSize.CPU_to_GPU.record(size);
  }
  for (const size of stats.storeSize ?? []) {
    series.kvOffloadStoreSize.record(size);
    if (legacy) series.kvOffloadSize.GPU_to_CPU.record(size);
  }
  if (stats.storesSkipped !== undefined) series.kvOffloadStoresSkipped.record(stats.storesSkipped);
}

/**
 * vLLM's `SimpleCPUOffloadPromMetrics.observe`: labelled counters by outcome and phase, two gauges,
 * the info gauge, every series created by the first report that carries it, as vLLM creates them.
 */
export function recordSimpleKvOffload(store: SeriesStore, modelName: string, engine: StageReplica, stats: SimpleKvOffloadStats): void {
  const { stage, replica } = engine;
  for (const outcome of SIMPLE_KV_OFFLOAD_OUTCOMES) {
    const value = stats.saveOutcomes?.[outcome];
    if (value !== undefined) store.bind('upstream.simpleKvOffloadSaveOutcomes', [modelName, stage, replica, outcome]).record(value);
  }
  for (const phase of ['issued', 'completed'] as const) {
    const value = stats.loadBlocks?.[phase];
    if (value !== undefined) store.bind('upstream.simpleKvOffloadLoadBlocks', [modelName, stage, replica, phase]).record(value);
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
