/**
 * omni-otel-metrics: vLLM's metrics, per stage and replica, for multi-stage LLM / speech
 * pipelines, on OpenTelemetry. Every public name is listed here; nothing is re-exported wholesale.
 */

// Registration
export { registerOmniMetrics } from './register';
export { declaredFamilies } from './views/declared-families';
export type { OmniMetricsHandle } from './register';
export type { OmniMetricsOptions, PrometheusOptions, LogSink } from './options';
export type {
  HostMethod,
  SelfCheckOptions,
  SelfCheckReport,
  SilenceReason,
  SilentFamily,
  StageReplicaRef,
} from './instrumentation/self-check/types';

// Catalog and views
export { resolveCatalog, resolveFullCatalog, DEFAULT_MAX_MODEL_LEN } from './views/catalog';
export type {
  CatalogOptions,
  CustomFamily,
  FamilyKey,
  FeatureOptions,
  ResolvedCatalog,
  ResolvedFamily,
} from './views/catalog';
export type { FamilyDefinition, FamilyGroup, FamilyType, DerivedBuckets } from './views/family-definition';
export { PIPELINE_FAMILIES } from './views/pipeline-families';
export type { PipelineFamilyKey } from './views/pipeline-families';
export { UPSTREAM_FAMILIES } from './views/upstream-families';
export type { UpstreamFamilyKey } from './views/upstream-families';
export {
  SECONDS_BUCKETS,
  SECONDS_FAST_BUCKETS,
  RTF_BUCKETS,
  BYTES_BUCKETS,
  REQUEST_LATENCY_BUCKETS,
  TIME_TO_FIRST_TOKEN_BUCKETS,
  INTER_TOKEN_LATENCY_BUCKETS,
  ITERATION_TOKENS_BUCKETS,
  REQUEST_PARAMS_N_BUCKETS,
  REQUEST_NUM_PREEMPTIONS_BUCKETS,
  KV_CACHE_RESIDENCY_BUCKETS,
  build125Buckets,
} from './views/buckets';
export { DEFAULT_PIPELINE_PREFIX, PIPELINE_PREFIXES } from './views/names';
export type { PipelinePrefix } from './views/names';
export { StageReplicaMap } from './views/stage-replica-map';
export type { ReplicaChange, ReplicaChangeListener, StageReplica } from './views/stage-replica-map';
export { FAILURE_REASONS } from './views/stage-service-families';
export type { FailureReason } from './views/stage-service-families';
export { EngineRelabelProcessor } from './views/engine-relabel-processor';
export { createOmniViews, OMNI_METER_NAME, PACKAGE_VERSION } from './views/views';

// The series store: bound series of every catalog family, and its producer for any reader
export { SeriesStore, DEFAULT_CARDINALITY_LIMIT } from './views/store/series-store';
export type { SeriesStoreOptions } from './views/store/series-store';
export { FamilySeries, OVERFLOW_ATTRIBUTE } from './views/store/family-series';
export type { LabelValue } from './views/store/family-series';
export type { BoundSeries } from './views/store/series';
export { OmniMetricProducer } from './views/store/metric-producer';
export type { OmniMetricProducerOptions } from './views/store/metric-producer';
export type { NamingScheme, OmniViewsOptions } from './views/views';
export { loadMetricsConfig, validateMetricsConfig, MetricsConfigError } from './views/metrics-config';
export type { MetricsConfig } from './views/metrics-config';

// Prometheus exposition
export { OmniPrometheusReader } from './exporters/prometheus-reader';
export type { OmniPrometheusReaderOptions } from './exporters/prometheus-reader';
export {
  serializePrometheus,
  TEXT_CONTENT_TYPE,
  OPENMETRICS_CONTENT_TYPE,
} from './exporters/prometheus-serializer';
export type { ExpositionFormat, SerializeOptions } from './exporters/prometheus-serializer';
export type { DeclaredFamily } from './views/declared-families';
export {
  createMetricsHandler,
  startPrometheusServer,
  serveMetrics,
  resolvePrometheusServerSettings,
  negotiateFormat,
  DEFAULT_PROMETHEUS_PORT,
  DEFAULT_PROMETHEUS_HOST,
  DEFAULT_METRICS_PATH,
  DEFAULT_HEADERS_TIMEOUT_MILLIS,
  DEFAULT_IDLE_TIMEOUT_MILLIS,
  DEFAULT_MAX_CONNECTIONS,
} from './exporters/prometheus-http';
export type {
  MetricsHandlerOptions,
  MetricsMiddleware,
  MetricsTextSource,
  PrometheusServer,
  PrometheusServerOptions,
  PrometheusServerSettings,
  PrometheusTlsOptions,
} from './exporters/prometheus-http';
export type { ScrapeAuth } from './exporters/scrape-auth';
export { formatGoFloat } from './views/go-float';

// OTLP, console and the standard OTEL_* configuration
export { parseOtelEnv } from './exporters/otlp/otel-env';
export type { FromVariable, OtelEnvConfig, OtelEnvironment } from './exporters/otlp/otel-env';
export { resolveExportSettings } from './exporters/otlp/export-settings';
export type { ExportOptions, ExportSettings, OtlpExporterSettings } from './exporters/otlp/export-settings';
export { createOtlpMetricExporter, GRPC_EXPORTER_PACKAGE } from './exporters/otlp/otlp-metric-exporter';
export { createPushReaders } from './exporters/otlp/push-readers';
export { buildResource } from './exporters/otlp/otel-resource';
export type { ResourceOptions } from './exporters/otlp/otel-resource';
export {
  collectorPrometheusName,
  collectorNamingMarkdown,
  COLLECTOR_TRANSLATION_STRATEGIES,
} from './exporters/otlp/collector-naming';
export type { CollectorTranslationStrategy } from './exporters/otlp/collector-naming';
export {
  METRICS_EXPORTER_NAMES,
  OTLP_PROTOCOLS,
  OTLP_COMPRESSIONS,
  TEMPORALITY_PREFERENCES,
  DEFAULT_OTLP_PROTOCOL,
  DEFAULT_EXPORT_INTERVAL_MILLIS,
  DEFAULT_EXPORT_TIMEOUT_MILLIS,
} from './exporters/otlp/types';
export type { MetricsExporterName, OtlpCompression, OtlpOptions, OtlpProtocol, TemporalityPreference } from './exporters/otlp/types';

// Recorders
export { OmniPrometheusMetrics, OmniRequestCounter, waitingRequests } from './instrumentation/recorders/pipeline-metrics';
export type { RecorderOptions } from './instrumentation/recorders/pipeline-metrics';
export { OmniModalityMetrics } from './instrumentation/recorders/modality-metrics';
export type {
  FinalizeInput,
  FirstPacketInput,
  StreamingFinalizeInput,
  StageMetrics,
} from './instrumentation/recorders/modality-metrics';
export { OmniStageServiceMetrics, normalizeFailureReason } from './instrumentation/recorders/stage-service-metrics';
export type { StageFinishInput } from './instrumentation/recorders/stage-service-metrics';
export { OmniDiffusionMetrics } from './instrumentation/recorders/diffusion-metrics';
export type { DiffusionBreakdown, DiffusionFinalizeInput } from './instrumentation/recorders/diffusion-metrics';
export { OmniTransferMetrics } from './instrumentation/recorders/transfer-metrics';
export { OrchestratorAggregator } from './instrumentation/recorders/orchestrator-aggregator';
export type {
  OrchestratorAggregatorOptions,
  ReplicaResolver,
  TransferEdgeStats,
  TransferRxInput,
  TransferTxInput,
} from './instrumentation/recorders/orchestrator-aggregator';
export { OmniStageReplicaMetrics } from './instrumentation/recorders/stage-replica-metrics';
export type { StageReplicaSample } from './instrumentation/recorders/stage-replica-metrics';
export { OmniStatLogger } from './instrumentation/recorders/stat-logger';
export type { CacheConfigInfo, IterationStatsSink, OmniStatLoggerOptions } from './instrumentation/recorders/stat-logger';
export { OmniGenAiMetrics, GEN_AI_METER_NAME } from './instrumentation/recorders/gen-ai-metrics';
export {
  GEN_AI_METRICS,
  GEN_AI_TIME_TO_FIRST_TOKEN_BUCKETS,
  GEN_AI_TIME_PER_OUTPUT_TOKEN_BUCKETS,
  GEN_AI_DURATION_BUCKETS,
  GEN_AI_TOKEN_BUCKETS,
} from './views/gen-ai-families';
export type { GenAiMetricDefinition } from './views/gen-ai-families';
export { countAudioFrames, audioChunkPcmBytes } from './instrumentation/audio/frames';

// Instrumentation: hooks on the host's classes, or diagnostics_channel messages
export { OmniInstrumentation } from './instrumentation/hooks/omni-instrumentation';
export type { HostModuleHook, OmniInstrumentationConfig } from './instrumentation/hooks/omni-instrumentation';
export { OMNI_CHANNELS } from './instrumentation/hooks/channels';
export type { OmniChannelMessages } from './instrumentation/hooks/channels';
export type { GenerateOutcome } from './instrumentation/pipeline/pipeline-observer';
export type {
  DiffusionStageMetrics,
  EngineCoreOutput,
  EngineCoreOutputs,
  OmniRequestOutput,
  OmniServingLike,
  OrchestratorLike,
  OrchestratorRequest,
  ReceiveReceipt,
  StageOutputMetrics,
  StagePoolLike,
  StageRequest,
  TransferReceipt,
} from './instrumentation/pipeline/host-contract';
export { createRecorders } from './instrumentation/recorders/recorders';
export type { OmniRecorders, RecorderSettings } from './instrumentation/recorders/recorders';

// vLLM's stats records and math
export {
  FINISH_REASONS,
  isFinishReason,
  PrefixCacheStats,
  MultiModalCacheStats,
  SpecDecodingStats,
  PromptTokenStats,
  createSchedulerStats,
  createPrefixCacheStats,
  createMultiModalCacheStats,
  createSpecDecodingStats,
  createPrefillStats,
  createPromptTokenStats,
  createRequestStateStats,
  createFinishedRequestStats,
} from './instrumentation/stats/types';
export type {
  FinishReason,
  BaseCacheStats,
  PrefixCacheCounts,
  KvCacheEvictionEvent,
  NixlKvConnectorStats,
  PerfStats,
  EngineSleepState,
  SpecDecodingCounts,
  SchedulerStats,
  PrefillStats,
  PrefillStatsInput,
  PromptTokenSource,
  RequestStateStats,
  FinishedRequestStats,
  EngineCoreEvent,
  EngineCoreEventType,
} from './instrumentation/stats/types';
export { IterationStats } from './instrumentation/stats/iteration-stats';
export type { EngineCoreOutputUpdate, FinishedRequestInput, IterationStatsOptions } from './instrumentation/stats/iteration-stats';
export { RequestStatsBuilder } from './instrumentation/stats/request-stats-builder';
export type { ArrivedInfo, ScheduledInfo, RequestStatsBuilderOptions } from './instrumentation/stats/request-stats-builder';
export { StatsThrottle, DEFAULT_STATS_INTERVAL_SECONDS } from './instrumentation/stats/stats-throttle';
export type { StatsThrottleOptions } from './instrumentation/stats/stats-throttle';
export { LoggingStatLogger } from './instrumentation/stats/logging-stat-logger';
export type { LoggingStatLoggerOptions, LogLineSink } from './instrumentation/stats/logging-stat-logger';
export { PeriodicLogger, DEFAULT_LOG_STATS_INTERVAL_SECONDS } from './instrumentation/stats/periodic-logger';
export type { PeriodicLoggerOptions, PeriodicLoggable } from './instrumentation/stats/periodic-logger';
export { CachingMetrics } from './instrumentation/stats/caching-metrics';
export type { CachingMetricsOptions } from './instrumentation/stats/caching-metrics';

// Audio helpers
export { computeContinuityStats, AUDIO_CONTINUITY_DEFAULT_THRESHOLD_S } from './instrumentation/audio/continuity';
export type { ContinuityOptions, ContinuityStats } from './instrumentation/audio/continuity';
export { resolveAudioSampleRate, DEFAULT_AUDIO_SAMPLE_RATE, SAMPLE_RATE_KEYS } from './instrumentation/audio/sample-rate';
export type { SampleRateSource } from './instrumentation/audio/sample-rate';
export { computeAudioRtf } from './instrumentation/audio/audio-rtf';

// Metrics as log lines
export { LogMetricExporter } from './exporters/log-exporter/log-metric-exporter';
export type { LogDestination, LogLineStream, LogMetricExporterOptions } from './exporters/log-exporter/log-metric-exporter';
export type { LogMetricFormat } from './exporters/log-exporter/log-lines';

// Scale-out across node:cluster workers
export { startClusterPrimary } from './exporters/cluster/cluster-primary';
export type { ClusterPrimary, ClusterPrimaryOptions } from './exporters/cluster/cluster-primary';
export { serveClusterWorker } from './exporters/cluster/cluster-worker';
export type { ClusterWorker, ClusterWorkerOptions, ClusterWorkerSource } from './exporters/cluster/cluster-worker';
export type { GaugeMerge } from './exporters/cluster/merge';

// Real vLLM engines behind the pipeline: their /metrics pulled and served per stage and replica
export type { EnginePullOptions, EngineTarget } from './exporters/engine-pull/types';
