import type { Attributes } from '@opentelemetry/api';
import type { FeatureOptions, FamilyKey } from '../../views/catalog';
import type { BoundSeries, FamilyInstruments } from '../family-instruments';
import { FINISH_REASONS, PromptTokenStats, type FinishReason, type PromptTokenSource } from '../stats/types';

const SLEEP_STATES = ['awake', 'weights_offloaded', 'discard_all'] as const;
export type SleepStateLabel = (typeof SLEEP_STATES)[number];

/**
 * Every upstream series of one (stage, replica), bound once: the record path then does property
 * reads and SDK calls only. Families this configuration does not register bind to no-ops.
 */
export class EngineSeries {
  readonly running: BoundSeries;
  readonly waiting: BoundSeries;
  readonly waitingCapacity: BoundSeries;
  readonly waitingDeferred: BoundSeries;
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
  /** True once the engine-initialized sleep state has been published. */
  sleepStateInitialised = false;

  constructor(instruments: FamilyInstruments, labels: Attributes, features: FeatureOptions = {}) {
    const bind = (key: FamilyKey, extra?: Attributes): BoundSeries => instruments.bind(key, extra ? { ...labels, ...extra } : labels);
    this.running = bind('upstream.numRequestsRunning');
    this.waiting = bind('upstream.numRequestsWaiting');
    this.waitingCapacity = bind('upstream.numRequestsWaitingByReason', { reason: 'capacity' });
    this.waitingDeferred = bind('upstream.numRequestsWaitingByReason', { reason: 'deferred' });
    this.sleepState = {
      awake: bind('upstream.engineSleepState', { sleep_state: 'awake' }),
      weights_offloaded: bind('upstream.engineSleepState', { sleep_state: 'weights_offloaded' }),
      discard_all: bind('upstream.engineSleepState', { sleep_state: 'discard_all' }),
    };
    this.kvCacheUsage = bind('upstream.kvCacheUsagePerc');
    this.prefixCacheQueries = bind('upstream.prefixCacheQueries');
    this.prefixCacheHits = bind('upstream.prefixCacheHits');
    this.externalPrefixCacheQueries = bind('upstream.externalPrefixCacheQueries');
    this.externalPrefixCacheHits = bind('upstream.externalPrefixCacheHits');
    this.mmCacheQueries = bind('upstream.mmCacheQueries');
    this.mmCacheHits = bind('upstream.mmCacheHits');
    this.corruptedRequests = bind('upstream.corruptedRequests');
    this.numPreemptions = bind('upstream.numPreemptions');
    this.promptTokens = bind('upstream.promptTokens');
    this.promptTokensBySource = Object.fromEntries(
      PromptTokenStats.ALL_SOURCES.map((source) => [source, bind('upstream.promptTokensBySource', { source })]),
    ) as Record<PromptTokenSource, BoundSeries>;
    this.promptTokensCached = bind('upstream.promptTokensCached');
    this.generationTokens = bind('upstream.generationTokens');
    this.requestSuccess = Object.fromEntries(
      FINISH_REASONS.map((reason) => [reason, bind('upstream.requestSuccess', { finished_reason: reason })]),
    ) as Record<FinishReason, BoundSeries>;
    this.requestPromptTokens = bind('upstream.requestPromptTokens');
    this.requestGenerationTokens = bind('upstream.requestGenerationTokens');
    this.iterationTokens = bind('upstream.iterationTokensTotal');
    this.maxNumGenerationTokens = bind('upstream.requestMaxNumGenerationTokens');
    this.paramsN = bind('upstream.requestParamsN');
    this.paramsMaxTokens = bind('upstream.requestParamsMaxTokens');
    this.prefillKvComputedTokens = bind('upstream.requestPrefillKvComputedTokens');
    this.requestNumPreemptions = bind('upstream.requestNumPreemptions');
    this.timeToFirstToken = bind('upstream.timeToFirstTokenSeconds');
    this.interTokenLatency = bind('upstream.interTokenLatencySeconds');
    this.timePerOutputTokenPerRequest = bind('upstream.requestTimePerOutputTokenSeconds');
    this.e2eLatency = bind('upstream.e2eRequestLatencySeconds');
    this.queueTime = bind('upstream.requestQueueTimeSeconds');
    this.inferenceTime = bind('upstream.requestInferenceTimeSeconds');
    this.prefillTime = bind('upstream.requestPrefillTimeSeconds');
    this.decodeTime = bind('upstream.requestDecodeTimeSeconds');
    this.kvBlockLifetime = bind('upstream.kvBlockLifetimeSeconds');
    this.kvBlockIdleBeforeEvict = bind('upstream.kvBlockIdleBeforeEvictSeconds');
    this.kvBlockReuseGap = bind('upstream.kvBlockReuseGapSeconds');
    this.estimatedFlops = bind('upstream.estimatedFlopsPerGpu');
    this.estimatedReadBytes = bind('upstream.estimatedReadBytesPerGpu');
    this.estimatedWriteBytes = bind('upstream.estimatedWriteBytesPerGpu');
    this.specDecodeDrafts = bind('upstream.specDecodeNumDrafts');
    this.specDecodeDraftTokens = bind('upstream.specDecodeNumDraftTokens');
    this.specDecodeAcceptedTokens = bind('upstream.specDecodeNumAcceptedTokens');
    this.specDecodeAcceptedPerPos = Array.from({ length: features.specDecode?.numSpeculativeTokens ?? 0 }, (_, position) =>
      bind('upstream.specDecodeNumAcceptedTokensPerPos', { position: String(position) }),
    );
    this.nixlXferTime = bind('upstream.nixlXferTimeSeconds');
    this.nixlPostTime = bind('upstream.nixlPostTimeSeconds');
    this.nixlBytes = bind('upstream.nixlBytesTransferred');
    this.nixlDescriptors = bind('upstream.nixlNumDescriptors');
    this.nixlFailedTransfers = bind('upstream.nixlNumFailedTransfers');
    this.nixlFailedNotifications = bind('upstream.nixlNumFailedNotifications');
    this.nixlKvExpiredReqs = bind('upstream.nixlNumKvExpiredReqs');
    this.hiddenGpuCacheUsage = bind('upstream.gpuCacheUsagePerc');
    this.hiddenGpuPrefixCacheQueries = bind('upstream.gpuPrefixCacheQueries');
    this.hiddenGpuPrefixCacheHits = bind('upstream.gpuPrefixCacheHits');
    this.hiddenTimePerOutputToken = bind('upstream.timePerOutputTokenSeconds');
  }
}
