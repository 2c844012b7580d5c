// The public types use Node's (Buffer, node:http, NodeJS.ProcessEnv): with this reference, a
// project compiled with `types: []` and `skipLibCheck: false` still finds them (@types/node).
/// <reference types="node" preserve="true" />
/**
 * omni-otel-metrics: vLLM's metrics, per stage and replica, for multi-stage LLM / speech
 * pipelines, on OpenTelemetry. This entry is what an application needs: register, hook the
 * host's classes, serve or push. Building blocks live behind subpaths:
 * `omni-otel-metrics/views` (the catalog, store and views), `/instrumentation` (the recorders),
 * `/stats` (vLLM's engine statistics) and `/exporters` (serializer, OTLP, logs, cluster).
 */

// Registration and the handle it returns
export { registerOmniMetrics } from './register';
export type { OmniMetricsHandle } from './register';
export type { LogSink, OmniMetricsOptions, PrometheusOptions } from './options';
export type { NativeHistogramOptions } from './views/store/native-histogram-settings';
export { OmniOptionError } from './views/option-checks';
export { OmniShutdownError } from './handle-lifecycle';
export { MetricsConfigError } from './views/metrics-config';
export type { FeatureOptions } from './views/catalog';
export type { CacheConfigInfo } from './instrumentation/recorders/stat-logger';
export type { OmniRecorders } from './instrumentation/recorders/recorders';
export type { OmniCustomMetrics, CustomCounter, CustomGauge, CustomHistogram } from './instrumentation/recorders/custom-metrics';
export type { SelfCheckOptions, SelfCheckReport, SilentFamily } from './instrumentation/self-check/types';
export type { LabelledRequest, RequestLabelOptions } from './instrumentation/pipeline/request-labels';
export { SLO_OBJECTIVES, type SloObjective, type SloOptions } from './views/slo-families';
export { missedObjectives, type RequestTimings } from './instrumentation/pipeline/slo-objectives';

// Hooks on the host's classes, or diagnostics_channel messages
export { OmniInstrumentation } from './instrumentation/hooks/omni-instrumentation';
export type { HostModuleHook, OmniInstrumentationConfig } from './instrumentation/hooks/omni-instrumentation';
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
export {
  createSchedulerStats,
  createPrefixCacheStats,
  createSpecDecodingStats,
  createMultiModalCacheStats,
  FINISH_REASONS,
} from './instrumentation/stats/types';
export type { FinishReason, PrefixCacheStats, SchedulerStats } from './instrumentation/stats/types';
export { StatsThrottle } from './instrumentation/stats/stats-throttle';
export { FAILURE_REASONS, type FailureReason } from './views/stage-service-families';

// Readers and producers for a provider of your own (NodeSDK), and the exposition options
export { OmniPrometheusReader } from './exporters/prometheus-reader';
export { OmniMetricProducer } from './views/store/metric-producer';
export type { MetricProducerOptions } from './views/store/metric-producer';
export type { ExpositionFormat } from './exporters/exposition/exposition-text';
export type { PrometheusServer } from './exporters/prometheus-http';
export type { MetricsExporterName, OtlpOptions } from './exporters/otlp/types';
export type { EnginePullOptions, EngineTarget } from './exporters/engine-pull/types';

// Scale-out across node:cluster workers
export { startClusterPrimary, type ClusterPrimary, type ClusterPrimaryOptions } from './exporters/cluster/cluster-primary';
export { serveClusterWorker, type ClusterWorker, type ClusterWorkerOptions } from './exporters/cluster/cluster-worker';
