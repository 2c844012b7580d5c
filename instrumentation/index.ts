// The public types use Node's (Buffer, node:http, NodeJS.ProcessEnv): with this reference, a
// project compiled with `types: []` and `skipLibCheck: false` still finds them (@types/node).
/// <reference types="node" preserve="true" />
/**
 * `omni-otel-metrics/instrumentation`: the recorders behind the hooks, for hosts that call them
 * directly instead of (or beside) `OmniInstrumentation`, and the audio helpers they use.
 */
export { OmniInstrumentation, type HostModuleHook, type OmniInstrumentationConfig } from './hooks/omni-instrumentation';
export type { InstrumentedMetrics } from './hooks/instrumented-metrics';
export { OMNI_CHANNELS, type OmniChannelMessages } from './hooks/channels';
export { createRecorders, type OmniRecorders, type RecorderSettings } from './recorders/recorders';
export { OmniPrometheusMetrics, OmniRequestCounter, waitingRequests, type RecorderOptions } from './recorders/pipeline-metrics';
export { OmniModalityMetrics, type FinalizeInput, type FirstPacketInput, type StreamingFinalizeInput, type StageMetrics } from './recorders/modality-metrics';
export { OmniStageServiceMetrics, normalizeFailureReason, type StageFinishInput } from './recorders/stage-service-metrics';
export { OmniDiffusionMetrics, type DiffusionBreakdown, type DiffusionFinalizeInput } from './recorders/diffusion-metrics';
export { OmniTransferMetrics } from './recorders/transfer-metrics';
export { OmniSloMetrics } from './recorders/slo-metrics';
export {
  OrchestratorAggregator,
  type OrchestratorAggregatorOptions,
  type ReplicaResolver,
  type TransferRxInput,
  type TransferTxInput,
} from './recorders/orchestrator-aggregator';
export { OmniStageReplicaMetrics, type StageReplicaSample } from './recorders/stage-replica-metrics';
export { OmniStatLogger, type CacheConfigInfo, type IterationStatsSink, type OmniStatLoggerOptions } from './recorders/stat-logger';
export { OmniGenAiMetrics, GEN_AI_METER_NAME } from './recorders/gen-ai-metrics';
export { countAudioFrames, audioChunkPcmBytes } from './audio/frames';
export { computeContinuityStats, AUDIO_CONTINUITY_DEFAULT_THRESHOLD_S, type ContinuityOptions, type ContinuityStats } from './audio/continuity';
export { resolveAudioSampleRate, DEFAULT_AUDIO_SAMPLE_RATE, SAMPLE_RATE_KEYS, type SampleRateSource } from './audio/sample-rate';
export { computeAudioRtf } from './audio/audio-rtf';
export { OmniCustomMetrics } from './recorders/custom-metrics';
export { startProcessMetrics, type ProcessMetrics, type ProcessMetricsOptions } from './process/process-metrics';
export type {
  BoundCustomCounter,
  BoundCustomGauge,
  BoundCustomHistogram,
  CustomCounter,
  CustomGauge,
  CustomHistogram,
  CustomLabels,
} from './recorders/custom-metrics';
export type { HostMethod, SelfCheckOptions, SelfCheckReport, SilenceReason, SilentFamily, StageReplicaRef } from './self-check/types';
export type * from './pipeline/host-contract';
