import type { FamilyKey } from '../../views/catalog/catalog';
import type { PipelineFamilyKey } from '../../views/catalog/pipeline-families';
import type { UpstreamFamilyKey } from '../../views/catalog/upstream-families';
import type { HostMethod } from './types';

/**
 * When a family is expected to receive data while requests flow:
 * - `always`: every request (or every engine step) feeds it;
 * - `audio` / `image`: every request once the pipeline has produced audio / images at all (any
 *   family of that modality has data), so a text-only pipeline is not told about its audio families;
 * - `multi-stage`: every request of a pipeline with more than one stage (cross-stage hops);
 * - `event`: only on particular events or optional host fields (failures, preemptions, cache hits,
 *   optional pool methods): tracked, never reported;
 * - `snapshot`: a gauge holding a current value (or an info gauge): a value sampled at check time
 *   cannot tell "never set" from "set to the same value", so it is tracked, never reported.
 */
export type Expectation = 'always' | 'audio' | 'image' | 'multi-stage' | 'event' | 'snapshot';

export interface FamilySource {
  readonly expect: Expectation;
  /** Host methods whose calls feed the family, in call order; the first never called is the reason given. */
  readonly methods: readonly HostMethod[];
  /** What of those calls carries the value, for the report. */
  readonly via: string;
}

const GENERATE = ['generate'] as const;
const FINISHED = 'the finished output of generate';
const STAGE_METRICS = "the finished output's stageMetrics";
const ITERATION = 'engine-core outputs of pollEngine (per-request events and tokens, after submitToStage)';
const SCHEDULER = 'schedulerStats of pollEngine';
const POLL = ['pollEngine'] as const;
const SUBMIT_POLL = ['submitToStage', 'pollEngine'] as const;

const s = (expect: Expectation, methods: readonly HostMethod[], via: string): FamilySource => ({ expect, methods, via });

/**
 * Which host call feeds each pipeline family (see `PipelineObserver` and the recorders it calls).
 * A `Record` over every key, so a new family cannot be added without saying what feeds it.
 */
export const PIPELINE_FAMILY_SOURCES: Readonly<Record<PipelineFamilyKey, FamilySource>> = {
  numRequestsRunning: s('snapshot', ['addRequest', 'cleanupRequest'], 'admissions and cleanups'),
  numRequestsWaiting: s('snapshot', ['generate', 'addRequest'], 'streams served but not yet admitted'),
  requestsSuccess: s('always', GENERATE, `${FINISHED} (abort: a stream that ends without it)`),
  e2eRequestLatency: s('always', GENERATE, FINISHED),
  audioTtfp: s('audio', GENERATE, 'the first audio output of a stream'),
  audioDuration: s('audio', GENERATE, `${FINISHED}: audio frames / sample rate`),
  audioRtf: s('audio', GENERATE, `${FINISHED}: stageGenTimeMs / audio duration`),
  audioFrames: s('audio', GENERATE, `${FINISHED}: stageMetrics audioGeneratedFrames or the audio chunks`),
  audioUnderrun: s('audio', GENERATE, 'audio chunks of a stream consumed to its end'),
  audioContinuityOk: s('event', GENERATE, 'a stream whose worst underrun stayed within the threshold'),
  audioSkippedRequests: s('event', GENERATE, 'a finished audio request without audio'),
  transferSize: s('multi-stage', ['sendToNextStage'], 'the TransferReceipt sendToNextStage returns'),
  transferTx: s('multi-stage', ['sendToNextStage'], 'the TransferReceipt sendToNextStage returns'),
  transferRx: s('multi-stage', ['receiveFromPreviousStage'], 'the ReceiveReceipt receiveFromPreviousStage returns'),
  transferInFlight: s('multi-stage', ['receiveFromPreviousStage'], 'the ReceiveReceipt receiveFromPreviousStage returns'),
  promptTokens: s('always', GENERATE, `${STAGE_METRICS} numTokensIn of stage 0`),
  generationTokens: s('always', GENERATE, `${STAGE_METRICS} numTokensOut`),
  stageOutputsQueueSize: s('event', POLL, "the stage pool's optional outputsQueueSize()"),
  stageInflightRequests: s('event', POLL, "the stage pool's optional inflight()"),
  stageGenTime: s('always', GENERATE, `${STAGE_METRICS} stageGenTimeMs`),
  requestQueueWait: s('always', ['generate', 'submitToStage'], 'generate to the first submitToStage of its request'),
  stageWaitingRequests: s('event', POLL, 'numWaitingReqs / numWaitingRequests of pollEngine'),
  numInferenceSteps: s('event', GENERATE, `${STAGE_METRICS} numInferenceSteps`),
  imageCount: s('image', GENERATE, `${STAGE_METRICS} outputUnitType "image" and outputUnitCount`),
  imagePixels: s('image', GENERATE, `${STAGE_METRICS} imagePixels`),
  peakMemory: s('event', GENERATE, `${STAGE_METRICS} peakMemoryMb`),
  stageInQueue: s('event', GENERATE, `${STAGE_METRICS} diffusionMetrics.schedulerQueueWaitS`),
  requestsFailed: s('event', GENERATE, 'a stream that ends without its finished output, or abort'),
  kvWait: s('event', POLL, 'kvTransferParams.kvWaitS of engine-core outputs'),
  diffusionExec: s('image', GENERATE, `${STAGE_METRICS} diffusionMetrics.diffusionEngineExecTimeS`),
  diffusionExecPerStep: s('event', GENERATE, `${STAGE_METRICS} diffusion exec time and step count`),
  diffusionPreprocess: s('event', GENERATE, `${STAGE_METRICS} diffusionMetrics.preprocessTimeS`),
  diffusionPostprocess: s('event', GENERATE, `${STAGE_METRICS} diffusionMetrics.postprocessTimeS`),
  vaeDecode: s('event', GENERATE, `${STAGE_METRICS} diffusionMetrics.vaeDecodeTimeS`),
  diffusionForward: s('event', GENERATE, `${STAGE_METRICS} diffusionMetrics.forwardTimeS (profiler on)`),
  diffusionKvLoad: s('event', GENERATE, `${STAGE_METRICS} diffusionMetrics.kvRecvTimeS`),
  imageTtfp: s('event', GENERATE, `${STAGE_METRICS} imageTimeToFirstOutputMs`),
  denoiseStepLatency: s('event', GENERATE, `${STAGE_METRICS} diffusionMetrics.forwardTimeS per step`),
  // Realtime sessions are their own traffic, not part of every request: tracked, never reported.
  realtimeVadActiveSessions: s('snapshot', [], 'openRealtimeSession / closeRealtimeSession with server_vad'),
  realtimeVadInferenceLatency: s('event', [], 'inferenceMs of the batch appendRealtimeAudio returns'),
  realtimeVadEndpointDelay: s('event', [], 'endpointDelayMs of the frames appendRealtimeAudio returns'),
  realtimeVadErrors: s('event', [], 'an appendRealtimeAudio that throws or rejects'),
  stageInfo: s('snapshot', [], 'the stageNames option'),
  // Each successful finish feeds one of the two (good, or the objectives it missed), so neither alone is owed data.
  requestsGood: s('event', GENERATE, `${FINISHED} of a request that met every objective of the slo option`),
  sloMisses: s('event', GENERATE, `${FINISHED} of a request that missed an objective of the slo option`),
};

/** Which engine statistics feed each upstream family (`OmniStatLogger.record`, reached through `pollEngine`). */
export const UPSTREAM_FAMILY_SOURCES: Readonly<Record<UpstreamFamilyKey, FamilySource>> = {
  numRequestsRunning: s('snapshot', POLL, SCHEDULER),
  numRequestsWaiting: s('snapshot', POLL, SCHEDULER),
  numRequestsWaitingByReason: s('snapshot', POLL, SCHEDULER),
  engineSleepState: s('snapshot', POLL, 'sleep state of schedulerStats'),
  kvCacheUsagePerc: s('snapshot', POLL, SCHEDULER),
  prefixCacheQueries: s('event', POLL, `${SCHEDULER} prefixCacheStats`),
  prefixCacheHits: s('event', POLL, `${SCHEDULER} prefixCacheStats`),
  externalPrefixCacheQueries: s('event', POLL, `${SCHEDULER} connectorPrefixCacheStats`),
  externalPrefixCacheHits: s('event', POLL, `${SCHEDULER} connectorPrefixCacheStats`),
  mmCacheQueries: s('event', POLL, `${SCHEDULER} mmCacheStats`),
  mmCacheHits: s('event', POLL, `${SCHEDULER} mmCacheStats`),
  corruptedRequests: s('event', SUBMIT_POLL, ITERATION),
  numPreemptions: s('event', SUBMIT_POLL, `${ITERATION}: PREEMPTED events`),
  promptTokens: s('always', SUBMIT_POLL, ITERATION),
  promptTokensBySource: s('always', SUBMIT_POLL, ITERATION),
  promptTokensCached: s('event', SUBMIT_POLL, `${ITERATION}: numCachedTokens`),
  generationTokens: s('always', SUBMIT_POLL, ITERATION),
  requestSuccess: s('always', SUBMIT_POLL, `${ITERATION}: finishReason`),
  requestPromptTokens: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  requestGenerationTokens: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  iterationTokensTotal: s('always', SUBMIT_POLL, ITERATION),
  requestMaxNumGenerationTokens: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  requestParamsN: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  requestParamsMaxTokens: s('event', SUBMIT_POLL, `${ITERATION}: finished requests with maxTokens`),
  requestPrefillKvComputedTokens: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  requestNumPreemptions: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  timeToFirstTokenSeconds: s('always', SUBMIT_POLL, `${ITERATION}: first token`),
  interTokenLatencySeconds: s('event', SUBMIT_POLL, `${ITERATION}: second and later tokens`),
  requestTimePerOutputTokenSeconds: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  e2eRequestLatencySeconds: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  requestQueueTimeSeconds: s('always', SUBMIT_POLL, `${ITERATION}: QUEUED / SCHEDULED events`),
  requestInferenceTimeSeconds: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  requestPrefillTimeSeconds: s('always', SUBMIT_POLL, `${ITERATION}: SCHEDULED event and first token`),
  requestDecodeTimeSeconds: s('always', SUBMIT_POLL, `${ITERATION}: finished requests`),
  kvBlockLifetimeSeconds: s('event', POLL, `${SCHEDULER} kvCacheEvictionEvents`),
  kvBlockIdleBeforeEvictSeconds: s('event', POLL, `${SCHEDULER} kvCacheEvictionEvents`),
  kvBlockReuseGapSeconds: s('event', POLL, `${SCHEDULER} kvCacheEvictionEvents`),
  loraRequestsInfo: s('snapshot', POLL, `${SCHEDULER} LoRA adapters`),
  cacheConfigInfo: s('snapshot', [], 'the cacheConfig option'),
  estimatedFlopsPerGpu: s('event', POLL, `${SCHEDULER} perfStats`),
  estimatedReadBytesPerGpu: s('event', POLL, `${SCHEDULER} perfStats`),
  estimatedWriteBytesPerGpu: s('event', POLL, `${SCHEDULER} perfStats`),
  specDecodeNumDrafts: s('always', POLL, `${SCHEDULER} specDecodingStats`),
  specDecodeNumDraftTokens: s('always', POLL, `${SCHEDULER} specDecodingStats`),
  specDecodeNumAcceptedTokens: s('event', POLL, `${SCHEDULER} specDecodingStats`),
  specDecodeNumAcceptedTokensPerPos: s('event', POLL, `${SCHEDULER} specDecodingStats`),
  admissionRejections: s('event', [], 'statLogger.recordAdmissionRejection(reason)'),
  kvOffloadLoadBytes: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadLoadTime: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadLoadSize: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadStoreBytes: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadStoreTime: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadStoreSize: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadLookupSyncDelay: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadLookupAsyncDelay: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadAllocationFailure: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadStoresSkipped: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadTotalBytes: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadTotalTime: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  kvOffloadSize: s('event', POLL, `${SCHEDULER} kvOffloadStats`),
  simpleKvOffloadSaveOutcomes: s('event', POLL, `${SCHEDULER} simpleKvOffloadStats`),
  simpleKvOffloadLoadBlocks: s('event', POLL, `${SCHEDULER} simpleKvOffloadStats`),
  simpleKvOffloadUsedBlocks: s('snapshot', POLL, `${SCHEDULER} simpleKvOffloadStats`),
  simpleKvOffloadPendingStoreBlocks: s('snapshot', POLL, `${SCHEDULER} simpleKvOffloadStats`),
  simpleKvOffloadInfo: s('snapshot', POLL, `${SCHEDULER} simpleKvOffloadStats`),
  nixlXferTimeSeconds: s('always', POLL, `${SCHEDULER} kvConnectorStats`),
  nixlPostTimeSeconds: s('event', POLL, `${SCHEDULER} kvConnectorStats`),
  nixlBytesTransferred: s('always', POLL, `${SCHEDULER} kvConnectorStats`),
  nixlNumDescriptors: s('event', POLL, `${SCHEDULER} kvConnectorStats`),
  nixlNumFailedTransfers: s('event', POLL, `${SCHEDULER} kvConnectorStats`),
  nixlNumFailedNotifications: s('event', POLL, `${SCHEDULER} kvConnectorStats`),
  nixlNumKvExpiredReqs: s('event', POLL, `${SCHEDULER} kvConnectorStats`),
  gpuCacheUsagePerc: s('snapshot', POLL, SCHEDULER),
  gpuPrefixCacheQueries: s('event', POLL, `${SCHEDULER} prefixCacheStats`),
  gpuPrefixCacheHits: s('event', POLL, `${SCHEDULER} prefixCacheStats`),
  timePerOutputTokenSeconds: s('event', SUBMIT_POLL, `${ITERATION}: second and later tokens`),
};

/** Custom (config-file) families are fed by the user's own code: tracked, never reported. */
const CUSTOM_SOURCE = s('event', [], 'your own code');

/** The source of a family by catalog key. */
export function familySource(key: FamilyKey): FamilySource {
  const dot = key.indexOf('.');
  const namespace = key.slice(0, dot);
  const name = key.slice(dot + 1);
  if (namespace === 'pipeline') return PIPELINE_FAMILY_SOURCES[name as PipelineFamilyKey] ?? CUSTOM_SOURCE;
  if (namespace === 'upstream') return UPSTREAM_FAMILY_SOURCES[name as UpstreamFamilyKey] ?? CUSTOM_SOURCE;
  return CUSTOM_SOURCE;
}
