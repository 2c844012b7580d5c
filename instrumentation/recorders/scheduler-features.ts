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

/** The fields of `SchedulerStats` every step fills; each of its other fields carries an optional feature. */
type StepField =
  | 'numRunningReqs'
  | 'numWaitingReqs'
  | 'numSkippedWaitingReqs'
  | 'stepCounter'
  | 'currentWave'
  | 'kvCacheUsage'
  | 'prefixCacheStats'
  | 'waitingLoraAdapters'
  | 'runningLoraAdapters'
  | 'sleepStateOnly';

/** A field of `SchedulerStats` that carries an optional part of a step (a connector, a cache, speculative decoding…). */
export type FeatureField = Exclude<keyof SchedulerStats, StepField>;

type FeatureRecorders = { readonly [K in FeatureField]: (value: NonNullable<SchedulerStats[K]>, target: FeatureTarget) => void };

/**
 * What recording each optional part of a step means, by the field that carries it. The compiler
 * refuses a table that leaves out a field of `SchedulerStats` (other than the ones every step
 * fills): a feature added to the stats is recorded here or the build fails.
 */
const FEATURE_RECORDERS: FeatureRecorders = {
  kvOffloadStats: (stats, { store, modelName, engine, series }) => recordKvOffload(store, modelName, engine, series, stats),
  simpleKvOffloadStats: (stats, { store, modelName, engine }) => recordSimpleKvOffload(store, modelName, engine, stats),
  connectorPrefixCacheStats: (external, { series }) => {
    series.externalPrefixCacheQueries.record(external.queries);
    series.externalPrefixCacheHits.record(external.hits);
  },
  mmCacheStats: (mm, { series }) => {
    series.mmCacheQueries.record(mm.queries);
    series.mmCacheHits.record(mm.hits);
  },
  specDecodingStats: (spec, { series }) => {
    series.specDecodeNumDrafts.record(spec.numDrafts);
    series.specDecodeNumDraftTokens.record(spec.numDraftTokens);
    series.specDecodeNumAcceptedTokens.record(spec.numAcceptedTokens);
    const perPosition = series.specDecodeNumAcceptedTokensPerPos;
    for (let position = 0; position < perPosition.length; position++) perPosition[position]?.record(spec.numAcceptedTokensPerPos[position] ?? 0);
  },
  kvConnectorStats: (nixl, { series }) => {
    for (const value of nixl.transferDuration) series.nixlXferTimeSeconds.record(value);
    for (const value of nixl.postDuration) series.nixlPostTimeSeconds.record(value);
    for (const value of nixl.bytesTransferred) series.nixlBytesTransferred.record(value);
    for (const value of nixl.numDescriptors) series.nixlNumDescriptors.record(value);
    for (const value of nixl.numFailedTransfers) series.nixlNumFailedTransfers.record(value);
    for (const value of nixl.numFailedNotifications) series.nixlNumFailedNotifications.record(value);
    for (const value of nixl.numKvExpiredReqs) series.nixlNumKvExpiredReqs.record(value);
  },
  kvCacheEvictionEvents: (events, { series }) => {
    for (const event of events) {
      series.kvBlockLifetimeSeconds.record(event.lifetimeSeconds);
      series.kvBlockIdleBeforeEvictSeconds.record(event.idleSeconds);
      for (const gap of event.reuseGapsSeconds) series.kvBlockReuseGapSeconds.record(gap);
    }
  },
  perfStats: (perf, { series }) => {
    // An all-zero estimate is no estimate (the engine has no performance model): nothing is added.
    if (perf.numFlopsPerGpu === 0 && perf.numReadBytesPerGpu === 0 && perf.numWriteBytesPerGpu === 0) return;
    series.estimatedFlopsPerGpu.record(perf.numFlopsPerGpu);
    series.estimatedReadBytesPerGpu.record(perf.numReadBytesPerGpu);
    series.estimatedWriteBytesPerGpu.record(perf.numWriteBytesPerGpu);
  },
  sleepState: (sleep, { series }) => recordSleepState(series, sleep.sleeping, sleep.level),
};

/** Every feature field, in the table's order. */
export const FEATURE_FIELDS = Object.keys(FEATURE_RECORDERS) as readonly FeatureField[];

/**
 * Whether a step carries any optional feature: the one test most steps, which carry none, stop at.
 * It runs on every poll of every engine, so each field is named here rather than looked up in a
 * loop over `FEATURE_FIELDS`: the loop's keyed reads cost a request of the 3 × 4 bench pipeline
 * about 580 000 more instructions (+59 %). A test checks this list against every feature field.
 */
export function carriesFeature(stats: SchedulerStats): boolean {
  return !!(
    stats.kvOffloadStats ||
    stats.simpleKvOffloadStats ||
    stats.connectorPrefixCacheStats ||
    stats.mmCacheStats ||
    stats.specDecodingStats ||
    stats.kvConnectorStats ||
    stats.kvCacheEvictionEvents.length !== 0 ||
    stats.perfStats ||
    stats.sleepState
  );
}

/** Records every optional feature the step carries, in the table's order. */
export function recordFeatures(stats: SchedulerStats, target: FeatureTarget): void {
  for (const field of FEATURE_FIELDS) {
    const value = stats[field];
    if (carried(value)) (FEATURE_RECORDERS[field] as (value: unknown, target: FeatureTarget) => void)(value, target);
  }
}

/** A feature field holds something to record: a stats record, a state, or a list that is not empty. */
function carried(value: unknown): boolean {
  return Array.isArray(value) ? value.length !== 0 : !!value;
}

/** vLLM's `record_sleep_state(sleep, level)` on one engine's series: one of the three states is 1. */
export function recordSleepState(series: EngineSeries, sleeping: boolean, level: number): void {
  series.engineSleepState.awake.record(sleeping ? 0 : 1);
  series.engineSleepState.weights_offloaded.record(sleeping && level === 1 ? 1 : 0);
  series.engineSleepState.discard_all.record(sleeping && level === 2 ? 1 : 0);
}
