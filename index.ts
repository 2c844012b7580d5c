// The public types use Node's (Buffer, node:http, NodeJS.ProcessEnv): with this reference, a
// project compiled with `types: []` and `skipLibCheck: false` still finds them (@types/node).
/// <reference types="node" preserve="true" />
/**
 * omni-otel-metrics: vLLM's metrics, per stage and replica, for multi-stage LLM / speech
 * pipelines, on OpenTelemetry. The package's one entry point, and its whole public API: register,
 * hook the host's classes (or call the recorders), serve or push, scale out over node:cluster.
 * Every name here is kept across minor releases (docs/api/omni-otel-metrics.api.md lists them);
 * everything else is internal.
 */

// Registration, its options, and the handle it returns
export { registerOmniMetrics } from './register';
export type { OmniMetricsHandle } from './register';
export type { LogSink, OmniMetricsOptions, PrometheusOptions } from './options';
export type { NativeHistogramOptions } from './views/store/native-histogram-settings';
export type { CustomFamily, FeatureOptions } from './views/catalog/catalog';
export type { NamingScheme } from './views/views';
export type { PipelinePrefix } from './views/catalog/names';
export type { LabelledRequest, RequestLabelOptions } from './instrumentation/recorders/request-labels';
export type { SelfCheckOptions, SelfCheckReport, SilentFamily } from './instrumentation/self-check/types';
export type { GenerateOutcome } from './instrumentation/pipeline/pipeline-observer';
export { OmniOptionError } from './views/common/option-checks';
export { OmniShutdownError } from './handle-lifecycle';
export { MetricsConfigError } from './views/catalog/metrics-config';

// The recorders the handle holds, for hosts that call them directly
export type { OmniRecorders } from './instrumentation/recorders/recorders';
export type { OmniPrometheusMetrics } from './instrumentation/recorders/pipeline-metrics';
export type { FinalizeInput, FirstPacketInput, OmniModalityMetrics, StageMetrics, StreamingFinalizeInput } from './instrumentation/recorders/modality-metrics';
export type { OmniStageServiceMetrics, StageFinishInput } from './instrumentation/recorders/stage-service-metrics';
export type { DiffusionBreakdown, DiffusionFinalizeInput, OmniDiffusionMetrics } from './instrumentation/recorders/diffusion-metrics';
export type { OmniTransferMetrics } from './instrumentation/recorders/transfer-metrics';
export type { OmniStageReplicaMetrics, StageReplicaSample } from './instrumentation/recorders/stage-replica-metrics';
export type { OmniRealtimeVadMetrics } from './instrumentation/recorders/realtime-vad-metrics';
export type { OmniStatLogger, CacheConfigInfo } from './instrumentation/recorders/stat-logger';
export type { OmniGenAiMetrics } from './instrumentation/recorders/gen-ai-metrics';
export type { OmniRequestLabelledMetrics } from './instrumentation/recorders/request-labelled-metrics';
export type { OmniSloMetrics } from './instrumentation/recorders/slo-metrics';
export type { CustomCounter, CustomGauge, CustomHistogram, CustomLabels, OmniCustomMetrics } from './instrumentation/recorders/custom-metrics';
export type { LabelValue } from './views/store/family-series';

// Goodput: the objectives and the rule that judges a request against them
export { SLO_OBJECTIVES, type SloObjective, type SloOptions } from './views/catalog/slo-families';
export { missedObjectives, type RequestTimings } from './instrumentation/recorders/slo-objectives';

// Hooks on the host's classes, or diagnostics_channel messages
export { OmniInstrumentation } from './instrumentation/hooks/omni-instrumentation';
export type { OmniInstrumentationConfig } from './instrumentation/hooks/omni-instrumentation';
export type { InstrumentedMetrics } from './instrumentation/hooks/instrumented-metrics';
export { OMNI_CHANNELS } from './instrumentation/hooks/channels';
export type { OmniChannelMessages } from './instrumentation/hooks/channels';

// The host contract: what the hooked methods take and return
export type {
  DiffusionStageMetrics,
  EngineCoreEvent,
  EngineCoreOutput,
  EngineCoreOutputs,
  OmniRealtimeLike,
  OmniRequestOutput,
  OmniServingLike,
  OrchestratorLike,
  OrchestratorRequest,
  RealtimeSessionRequest,
  ReceiveReceipt,
  ServerVadBatch,
  ServerVadDecision,
  StageOutputMetrics,
  StagePoolLike,
  StageRequest,
  TransferReceipt,
} from './instrumentation/pipeline/host-contract';

// vLLM's engine statistics, as a host's engines report them
export {
  createSchedulerStats,
  createPrefixCacheStats,
  createSpecDecodingStats,
  createMultiModalCacheStats,
  FINISH_REASONS,
} from './instrumentation/stats/types';
export type {
  BaseCacheStats,
  EngineSleepState,
  FinishReason,
  KvCacheEvictionEvent,
  KvOffloadStats,
  MultiModalCacheStats,
  NixlKvConnectorStats,
  PerfStats,
  PrefixCacheCounts,
  PrefixCacheStats,
  SchedulerStats,
  SimpleKvOffloadStats,
  SpecDecodingCounts,
  SpecDecodingStats,
} from './instrumentation/stats/types';
export { StatsThrottle, type StatsThrottleOptions } from './instrumentation/stats/stats-throttle';
export { FAILURE_REASONS, type FailureReason } from './views/catalog/stage-service-families';

// Serving /metrics, pushing OTLP, readers for a provider of your own (NodeSDK)
export { OmniPrometheusReader, type OmniPrometheusReaderOptions } from './exporters/prometheus-reader';
export { OmniMetricProducer, type MetricProducerOptions } from './views/store/metric-producer';
export { LogMetricExporter, type LogMetricExporterOptions } from './exporters/log-exporter/log-metric-exporter';
export type { ExpositionFormat } from './exporters/exposition/exposition-text';
export type { PrometheusServer, PrometheusServerOptions } from './exporters/prometheus-http';
export type { MetricsMiddleware } from './exporters/metrics-handler';
export type { ScrapeAuth } from './exporters/scrape-auth';
export type { MetricsExporterName, OtlpOptions } from './exporters/otlp/types';
export type { EnginePullOptions, EngineTarget } from './exporters/engine-pull/types';

// Scale-out across node:cluster workers
export { startClusterPrimary, type ClusterPrimaryOptions } from './cluster-primary';
export type { ClusterPrimary } from './exporters/cluster/cluster-primary';
export { serveClusterWorker, type ClusterWorker, type ClusterWorkerOptions, type ClusterWorkerSource } from './exporters/cluster/cluster-worker';
export type { GaugeMerge } from './exporters/cluster/merge';
