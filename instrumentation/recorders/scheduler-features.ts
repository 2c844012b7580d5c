import type { FeatureOptions } from '../../views/catalog';
import type { StageReplica } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import type { SchedulerStats } from '../stats/types';
import type { EngineSeries } from './engine-series';
import { recordKvOffload, recordSimpleKvOffload } from './kv-offload-recorder';

/** What the features of one engine's scheduler step record into: its series, and what binds series on a first report. */
export interface FeatureTarget {
  readonly series: EngineSeries;
  readonly engine: StageReplica;
  readonly store: SeriesStore;
  readonly modelName: string;
}

/**
 * One optional part of a scheduler step (a connector, a cache, speculative decoding…): records
 * it when the step carries it, and returns at once when it does not (most steps carry none).
 */
export type SchedulerFeature = (stats: SchedulerStats, target: FeatureTarget) => void;

/**
 * Every optional part of a scheduler step the stat logger records. Each checks for itself whether
 * the step carries it, so a feature added here is recorded, and one missing here is missing
 * everywhere: there is no separate guard to keep in step with the list.
 */
const SCHEDULER_FEATURES: readonly SchedulerFeature[] = [
  ({ kvOffloadStats }, { store, modelName, engine, series }) => {
    if (kvOffloadStats) recordKvOffload(store, modelName, engine, series, kvOffloadStats);
  },
  ({ simpleKvOffloadStats }, { store, modelName, engine }) => {
    if (simpleKvOffloadStats) recordSimpleKvOffload(store, modelName, engine, simpleKvOffloadStats);
  },
  ({ connectorPrefixCacheStats: external }, { series }) => {
    if (!external) return;
    series.externalPrefixCacheQueries.record(external.queries);
    series.externalPrefixCacheHits.record(external.hits);
  },
  ({ mmCacheStats: mm }, { series }) => {
    if (!mm) return;
    series.mmCacheQueries.record(mm.queries);
    series.mmCacheHits.record(mm.hits);
  },
  ({ specDecodingStats: spec }, { series }) => {
    if (!spec) return;
    series.specDecodeNumDrafts.record(spec.numDrafts);
    series.specDecodeNumDraftTokens.record(spec.numDraftTokens);
    series.specDecodeNumAcceptedTokens.record(spec.numAcceptedTokens);
    const perPosition = series.specDecodeNumAcceptedTokensPerPos;
    for (let position = 0; position < perPosition.length; position++) perPosition[position]?.record(spec.numAcceptedTokensPerPos[position] ?? 0);
  },
  ({ kvConnectorStats: nixl }, { series }) => {
    if (!nixl) return;
    for (const value of nixl.transferDuration) series.nixlXferTimeSeconds.record(value);
    for (const value of nixl.postDuration) series.nixlPostTimeSeconds.record(value);
    for (const value of nixl.bytesTransferred) series.nixlBytesTransferred.record(value);
    for (const value of nixl.numDescriptors) series.nixlNumDescriptors.record(value);
    for (const value of nixl.numFailedTransfers) series.nixlNumFailedTransfers.record(value);
    for (const value of nixl.numFailedNotifications) series.nixlNumFailedNotifications.record(value);
    for (const value of nixl.numKvExpiredReqs) series.nixlNumKvExpiredReqs.record(value);
  },
  ({ kvCacheEvictionEvents }, { series }) => {
    if (kvCacheEvictionEvents.length === 0) return;
    for (const event of kvCacheEvictionEvents) {
      series.kvBlockLifetimeSeconds.record(event.lifetimeSeconds);
      series.kvBlockIdleBeforeEvictSeconds.record(event.idleSeconds);
      for (const gap of event.reuseGapsSeconds) series.kvBlockReuseGapSeconds.record(gap);
    }
  },
  ({ perfStats: perf }, { series }) => {
    // An all-zero estimate is no estimate (the engine has no performance model): nothing is added.
    if (!perf || (perf.numFlopsPerGpu === 0 && perf.numReadBytesPerGpu === 0 && perf.numWriteBytesPerGpu === 0)) return;
    series.estimatedFlopsPerGpu.record(perf.numFlopsPerGpu);
    series.estimatedReadBytesPerGpu.record(perf.numReadBytesPerGpu);
    series.estimatedWriteBytesPerGpu.record(perf.numWriteBytesPerGpu);
  },
  ({ sleepState }, { series }) => {
    if (sleepState) recordSleepState(series, sleepState.sleeping, sleepState.level);
  },
];

/**
 * The features a stat logger records for its configuration: with LoRA on, every step also sets
 * `vllm:lora_requests_info` (one series per distinct adapter set, valued with the current time,
 * as vLLM does), whatever else the step carries.
 */
export function schedulerFeaturesFor(features: FeatureOptions | undefined, wallClock: () => number): readonly SchedulerFeature[] {
  const lora = features?.lora;
  if (!lora) return SCHEDULER_FEATURES;
  const loraInfo: SchedulerFeature = (stats, { store }) => {
    const running = Object.keys(stats.runningLoraAdapters).join(',');
    const waiting = Object.keys(stats.waitingLoraAdapters).join(',');
    store.bind('upstream.loraRequestsInfo', [lora.maxLoras, waiting, running]).record(wallClock());
  };
  return [...SCHEDULER_FEATURES, loraInfo];
}

/** vLLM's `record_sleep_state(sleep, level)` on one engine's series: one of the three states is 1. */
export function recordSleepState(series: EngineSeries, sleeping: boolean, level: number): void {
  series.engineSleepState.awake.record(sleeping ? 0 : 1);
  series.engineSleepState.weights_offloaded.record(sleeping && level === 1 ? 1 : 0);
  series.engineSleepState.discard_all.record(sleeping && level === 2 ? 1 : 0);
}
