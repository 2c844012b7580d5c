import type { FeatureOptions } from '../../views/catalog/catalog';
import type { StageReplica } from '../../views/stage-replica-map';
import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';
import { UPSTREAM_FAMILIES, type UpstreamFamilyKey } from '../../views/catalog/upstream-families';
import { FINISH_REASONS, PromptTokenStats, type FinishReason, type PromptTokenSource } from '../stats/types';

const SLEEP_STATES = ['awake', 'weights_offloaded', 'discard_all'] as const;
export type SleepStateLabel = (typeof SLEEP_STATES)[number];
const WAITING_REASONS = ['capacity', 'deferred'] as const;
/** vLLM's `_TransferType.ALL`: the deprecated offload families' children, created per engine at start. */
export const KV_OFFLOAD_TRANSFER_TYPES = ['CPU_to_GPU', 'GPU_to_CPU'] as const;
type TransferType = (typeof KV_OFFLOAD_TRANSFER_TYPES)[number];

/**
 * Engine-only families vLLM creates on an engine's first report that carries them rather than at
 * start (the offloading connectors bind a child on its first payload entry): the recorder binds
 * them then.
 */
const BOUND_ON_FIRST_REPORT = [
  'kvOffloadLoadBytes',
  'kvOffloadLoadTime',
  'kvOffloadLoadSize',
  'kvOffloadStoreBytes',
  'kvOffloadStoreTime',
  'kvOffloadStoreSize',
  'kvOffloadLookupSyncDelay',
  'kvOffloadLookupAsyncDelay',
  'kvOffloadAllocationFailure',
  'kvOffloadStoresSkipped',
  'simpleKvOffloadUsedBlocks',
  'simpleKvOffloadPendingStoreBlocks',
] as const;
type BoundOnFirstReport = (typeof BOUND_ON_FIRST_REPORT)[number];

/** Upstream families labelled by `model_name` and the engine alone: one series per engine. */
type PerEngineKey = Exclude<
  {
    [K in UpstreamFamilyKey]: (typeof UPSTREAM_FAMILIES)[K]['labels'] extends readonly ['model_name', 'engine'] ? K : never;
  }[UpstreamFamilyKey],
  BoundOnFirstReport
>;

/**
 * Every upstream series of one (stage, replica), by the family's catalog key, bound at
 * registration as vLLM binds its per-engine children when the engine starts: an idle scrape
 * already shows them at zero. The record path then does property reads and cell updates only.
 * Families this configuration does not register are no-op series. A family with one more label
 * holds a series per value of it.
 */
export type EngineSeries = { readonly [K in PerEngineKey]: BoundSeries } & {
  readonly numRequestsWaitingByReason: Readonly<Record<(typeof WAITING_REASONS)[number], BoundSeries>>;
  readonly engineSleepState: Readonly<Record<SleepStateLabel, BoundSeries>>;
  readonly promptTokensBySource: Readonly<Record<PromptTokenSource, BoundSeries>>;
  readonly requestSuccess: Readonly<Record<FinishReason, BoundSeries>>;
  readonly specDecodeNumAcceptedTokensPerPos: readonly BoundSeries[];
  readonly kvOffloadTotalBytes: Readonly<Record<TransferType, BoundSeries>>;
  readonly kvOffloadTotalTime: Readonly<Record<TransferType, BoundSeries>>;
  readonly kvOffloadSize: Readonly<Record<TransferType, BoundSeries>>;
};

const PER_ENGINE_KEYS = (Object.keys(UPSTREAM_FAMILIES) as UpstreamFamilyKey[]).filter(
  (key): key is PerEngineKey => UPSTREAM_FAMILIES[key].labels.join() === 'model_name,engine' && !(BOUND_ON_FIRST_REPORT as readonly string[]).includes(key),
);

/**
 * Binds every engine's series, family by family in catalog order, engines in index order within
 * a family; for a family with an extra label, value by value with every engine inside, as vLLM's
 * `{value: {engine: metric.labels(...)}}` dictionaries create them. That creation order is the
 * order the exposition prints.
 */
export function bindEngineSeries(store: SeriesStore, modelName: string, engines: readonly StageReplica[], features: FeatureOptions = {}): EngineSeries[] {
  const perEngine = (key: UpstreamFamilyKey, ...extra: string[]): BoundSeries[] =>
    engines.map(({ stage, replica }) => store.bind(`upstream.${key}`, [modelName, stage, replica, ...extra]));
  const perValue = <V extends string>(key: UpstreamFamilyKey, values: readonly V[]): Array<Record<V, BoundSeries>> => {
    const byValue = values.map((value) => perEngine(key, value));
    return engines.map((_, engine) => Object.fromEntries(values.map((value, i) => [value, byValue[i]?.[engine]])) as Record<V, BoundSeries>);
  };
  const positions = Array.from({ length: features.specDecode?.numSpeculativeTokens ?? 0 }, (_, position) => String(position));
  const acceptedPerPosition = positions.map((position) => perEngine('specDecodeNumAcceptedTokensPerPos', position));
  const plain = PER_ENGINE_KEYS.map((key) => [key, perEngine(key)] as const);
  const waitingByReason = perValue('numRequestsWaitingByReason', WAITING_REASONS);
  const sleepState = perValue('engineSleepState', SLEEP_STATES);
  const promptTokensBySource = perValue('promptTokensBySource', PromptTokenStats.ALL_SOURCES);
  const requestSuccess = perValue('requestSuccess', FINISH_REASONS);
  // vLLM's OffloadPromMetrics binds these engine by engine, each transfer type inside: that order prints.
  const perEngineThenValue = <V extends string>(key: UpstreamFamilyKey, values: readonly V[]): Array<Record<V, BoundSeries>> =>
    engines.map(
      ({ stage, replica }) =>
        Object.fromEntries(values.map((value) => [value, store.bind(`upstream.${key}`, [modelName, stage, replica, value])])) as Record<V, BoundSeries>,
    );
  const offloadBytes = perEngineThenValue('kvOffloadTotalBytes', KV_OFFLOAD_TRANSFER_TYPES);
  const offloadTime = perEngineThenValue('kvOffloadTotalTime', KV_OFFLOAD_TRANSFER_TYPES);
  const offloadSize = perEngineThenValue('kvOffloadSize', KV_OFFLOAD_TRANSFER_TYPES);
  // A loop, not entries and spreads: this runs once per engine, hundreds of times in a large pipeline's registration.
  return engines.map((_, engine) => {
    const series: Record<string, unknown> = {};
    for (const [key, byEngine] of plain) series[key] = byEngine[engine];
    series.numRequestsWaitingByReason = waitingByReason[engine];
    series.engineSleepState = sleepState[engine];
    series.promptTokensBySource = promptTokensBySource[engine];
    series.requestSuccess = requestSuccess[engine];
    series.kvOffloadTotalBytes = offloadBytes[engine];
    series.kvOffloadTotalTime = offloadTime[engine];
    series.kvOffloadSize = offloadSize[engine];
    series.specDecodeNumAcceptedTokensPerPos = acceptedPerPosition.map((byEngine) => byEngine[engine] as BoundSeries);
    // Copied once: an object given this many properties one by one is a hash table to V8, and the
    // record path reads a dozen of them on every poll; the copy has fast, fixed-offset properties.
    return { ...series } as EngineSeries;
  });
}
