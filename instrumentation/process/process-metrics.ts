import type { SeriesStore } from '../../views/store/series-store';
import { GcDurations } from './gc-durations';
import { NodeRuntimeCollector } from './node-runtime-collector';
import { ProcessCollector, type ProcessCollectorOptions } from './process-collector';

export type ProcessMetricsOptions = ProcessCollectorOptions;

export interface ProcessMetrics {
  /** Stops refreshing the families and observing garbage collections. */
  stop(): void;
}

/**
 * Fills the store's `process_*` and `nodejs_*` families (a catalog resolved with
 * `processMetrics: true`): their values are read right before each scrape or export, through
 * the store's collect hook, so nothing runs on the record path. Only garbage collections are
 * observed as they happen. Does nothing for a catalog without these families.
 */
export function startProcessMetrics(store: SeriesStore, options: ProcessMetricsOptions = {}): ProcessMetrics {
  if (!store.has('process.residentMemoryBytes')) return { stop: () => {} };
  const processCollector = new ProcessCollector(store, options);
  const runtimeCollector = new NodeRuntimeCollector(store);
  const gcDurations = new GcDurations(store);
  const removeHook = store.addCollectHook(function collectProcessMetrics() {
    runtimeCollector.collect();
    processCollector.collect();
  });
  gcDurations.start();
  return {
    stop: () => {
      removeHook();
      gcDurations.stop();
    },
  };
}
