import type { FeatureOptions, FamilyKey } from '../../views/catalog';
import type { StageReplica } from '../../views/stage-replica-map';
import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';
import { FINISH_REASONS, PromptTokenStats, type FinishReason, type PromptTokenSource } from '../stats/types';

const SLEEP_STATES = ['awake', 'weights_offloaded', 'discard_all'] as const;
export type SleepStateLabel = (typeof SLEEP_STATES)[number];
const WAITING_REASONS = ['capacity', 'deferred'] as const;

/**
 * Every upstream series of one (stage, replica), bound at registration as vLLM binds its
 * per-engine children when the engine starts: an idle scrape already shows them at zero. The
 * record path then does property reads and cell updates only. Families this configuration does
 * not register are no-op series.
 */
export interface EngineSeries {
  readonly running: BoundSeries;
  readonly waiting: BoundSeries;
  readonly waitingByReason: Readonly<Record<(typeof WAITING_REASONS)[number], BoundSeries>>;
  readonly sleepState: Readonly<Record<SleepStateLabel, BoundSeries>>;
  readonly kvCacheUsage: BoundSeries;
  readonly prefixCacheQueries: BoundSeries;
  readonly prefixCacheHits: BoundSeries;
  readonly externalPrefixCacheQueries: BoundSeries;
  readonly externalPrefixCacheHits: BoundSeries;
  readonly mmCacheQueries: BoundSeries;
  readonly mmCacheHits: BoundSeries;
  readonly corruptedRequests: BoundSeries;
  readonly numPreemptions: BoundSeries;
  readonly promptTokens: BoundSeries;
  readonly promptTokensBySource: Readonly<Record<PromptTokenSource, BoundSeries>>;
  readonly promptTokensCached: BoundSeries;
  readonly generationTokens: BoundSeries;
  readonly requestSuccess: Readonly<Record<FinishReason, BoundSeries>>;
  readonly requestPromptTokens: BoundSeries;
  readonly requestGenerationTokens: BoundSeries;
  readonly iterationTokens: BoundSeries;
  readonly maxNumGenerationTokens: BoundSeries;
  readonly paramsN: BoundSeries;
  readonly paramsMaxTokens: BoundSeries;
  readonly prefillKvComputedTokens: BoundSeries;
  readonly requestNumPreemptions: BoundSeries;
  readonly timeToFirstToken: BoundSeries;
  readonly interTokenLatency: BoundSeries;
  readonly timePerOutputTokenPerRequest: BoundSeries;
  readonly e2eLatency: BoundSeries;
  readonly queueTime: BoundSeries;
  readonly inferenceTime: BoundSeries;
  readonly prefillTime: BoundSeries;
  readonly decodeTime: BoundSeries;
  readonly kvBlockLifetime: BoundSeries;
  readonly kvBlockIdleBeforeEvict: BoundSeries;
  readonly kvBlockReuseGap: BoundSeries;
  readonly estimatedFlops: BoundSeries;
  readonly estimatedReadBytes: BoundSeries;
  readonly estimatedWriteBytes: BoundSeries;
  readonly specDecodeDrafts: BoundSeries;
  readonly specDecodeDraftTokens: BoundSeries;
  readonly specDecodeAcceptedTokens: BoundSeries;
  readonly specDecodeAcceptedPerPos: readonly BoundSeries[];
  readonly nixlXferTime: BoundSeries;
  readonly nixlPostTime: BoundSeries;
  readonly nixlBytes: BoundSeries;
  readonly nixlDescriptors: BoundSeries;
  readonly nixlFailedTransfers: BoundSeries;
  readonly nixlFailedNotifications: BoundSeries;
  readonly nixlKvExpiredReqs: BoundSeries;
  readonly hiddenGpuCacheUsage: BoundSeries;
  readonly hiddenGpuPrefixCacheQueries: BoundSeries;
  readonly hiddenGpuPrefixCacheHits: BoundSeries;
  readonly hiddenTimePerOutputToken: BoundSeries;
}

/**
 * Binds every engine's series, family by family in catalog order, engines in index order within
 * a family; for a family with an extra label, value by value with every engine inside, as vLLM's
 * `{value: {engine: metric.labels(...)}}` dictionaries create them. That creation order is the
 * order the exposition prints.
 */
export function bindEngineSeries(store: SeriesStore, modelName: string, engines: readonly StageReplica[], features: FeatureOptions = {}): EngineSeries[] {
  const perEngine = (key: FamilyKey, ...extra: string[]): BoundSeries[] =>
    engines.map(({ stage, replica }) => store.bind(key, [modelName, stage, replica, ...extra]));
  const perValue = <V extends string>(key: FamilyKey, values: readonly V[]): Array<Record<V, BoundSeries>> => {
    const byValue = values.map((value) => perEngine(key, value));
    return engines.map((_, engine) => Object.fromEntries(values.map((value, i) => [value, byValue[i]?.[engine]])) as Record<V, BoundSeries>);
  };
  const positions = Array.from({ length: features.specDecode?.numSpeculativeTokens ?? 0 }, (_, position) => String(position));
  const specDecodeAcceptedPerPos = positions.map((position) => perEngine('upstream.specDecodeNumAcceptedTokensPerPos', position));
  const bound = {
    running: perEngine('upstream.numRequestsRunning'),
    waiting: perEngine('upstream.numRequestsWaiting'),
    waitingByReason: perValue('upstream.numRequestsWaitingByReason', WAITING_REASONS),
    sleepState: perValue('upstream.engineSleepState', SLEEP_STATES),
    kvCacheUsage: perEngine('upstream.kvCacheUsagePerc'),
    prefixCacheQueries: perEngine('upstream.prefixCacheQueries'),
    prefixCacheHits: perEngine('upstream.prefixCacheHits'),
    externalPrefixCacheQueries: perEngine('upstream.externalPrefixCacheQueries'),
    externalPrefixCacheHits: perEngine('upstream.externalPrefixCacheHits'),
    mmCacheQueries: perEngine('upstream.mmCacheQueries'),
    mmCacheHits: perEngine('upstream.mmCacheHits'),
    corruptedRequests: perEngine('upstream.corruptedRequests'),
    numPreemptions: perEngine('upstream.numPreemptions'),
    promptTokens: perEngine('upstream.promptTokens'),
    promptTokensBySource: perValue('upstream.promptTokensBySource', PromptTokenStats.ALL_SOURCES),
    promptTokensCached: perEngine('upstream.promptTokensCached'),
    generationTokens: perEngine('upstream.generationTokens'),
    requestSuccess: perValue('upstream.requestSuccess', FINISH_REASONS),
    requestPromptTokens: perEngine('upstream.requestPromptTokens'),
    requestGenerationTokens: perEngine('upstream.requestGenerationTokens'),
    iterationTokens: perEngine('upstream.iterationTokensTotal'),
    maxNumGenerationTokens: perEngine('upstream.requestMaxNumGenerationTokens'),
    paramsN: perEngine('upstream.requestParamsN'),
    paramsMaxTokens: perEngine('upstream.requestParamsMaxTokens'),
    prefillKvComputedTokens: perEngine('upstream.requestPrefillKvComputedTokens'),
    requestNumPreemptions: perEngine('upstream.requestNumPreemptions'),
    timeToFirstToken: perEngine('upstream.timeToFirstTokenSeconds'),
    interTokenLatency: perEngine('upstream.interTokenLatencySeconds'),
    timePerOutputTokenPerRequest: perEngine('upstream.requestTimePerOutputTokenSeconds'),
    e2eLatency: perEngine('upstream.e2eRequestLatencySeconds'),
    queueTime: perEngine('upstream.requestQueueTimeSeconds'),
    inferenceTime: perEngine('upstream.requestInferenceTimeSeconds'),
    prefillTime: perEngine('upstream.requestPrefillTimeSeconds'),
    decodeTime: perEngine('upstream.requestDecodeTimeSeconds'),
    kvBlockLifetime: perEngine('upstream.kvBlockLifetimeSeconds'),
    kvBlockIdleBeforeEvict: perEngine('upstream.kvBlockIdleBeforeEvictSeconds'),
    kvBlockReuseGap: perEngine('upstream.kvBlockReuseGapSeconds'),
    estimatedFlops: perEngine('upstream.estimatedFlopsPerGpu'),
    estimatedReadBytes: perEngine('upstream.estimatedReadBytesPerGpu'),
    estimatedWriteBytes: perEngine('upstream.estimatedWriteBytesPerGpu'),
    specDecodeDrafts: perEngine('upstream.specDecodeNumDrafts'),
    specDecodeDraftTokens: perEngine('upstream.specDecodeNumDraftTokens'),
    specDecodeAcceptedTokens: perEngine('upstream.specDecodeNumAcceptedTokens'),
    nixlXferTime: perEngine('upstream.nixlXferTimeSeconds'),
    nixlPostTime: perEngine('upstream.nixlPostTimeSeconds'),
    nixlBytes: perEngine('upstream.nixlBytesTransferred'),
    nixlDescriptors: perEngine('upstream.nixlNumDescriptors'),
    nixlFailedTransfers: perEngine('upstream.nixlNumFailedTransfers'),
    nixlFailedNotifications: perEngine('upstream.nixlNumFailedNotifications'),
    nixlKvExpiredReqs: perEngine('upstream.nixlNumKvExpiredReqs'),
    hiddenGpuCacheUsage: perEngine('upstream.gpuCacheUsagePerc'),
    hiddenGpuPrefixCacheQueries: perEngine('upstream.gpuPrefixCacheQueries'),
    hiddenGpuPrefixCacheHits: perEngine('upstream.gpuPrefixCacheHits'),
    hiddenTimePerOutputToken: perEngine('upstream.timePerOutputTokenSeconds'),
  };
  return engines.map((_, engine) => ({
    ...entriesAt(bound, engine),
    specDecodeAcceptedPerPos: specDecodeAcceptedPerPos.map((byEngine) => byEngine[engine] as BoundSeries),
  }));
}

/** Each field's entry for one engine. */
function entriesAt<T extends Record<string, readonly unknown[]>>(perEngine: T, engine: number): { [K in keyof T]: T[K][number] } {
  return Object.fromEntries(Object.entries(perEngine).map(([field, values]) => [field, values[engine]])) as { [K in keyof T]: T[K][number] };
}
