/**
 * omni-otel-metrics: vLLM's metrics, per stage and replica, for multi-stage LLM / speech
 * pipelines, on OpenTelemetry. Every public name is listed here; nothing is re-exported wholesale.
 */

// Registration
export { registerOmniMetrics, declaredFamilies } from './instrumentation/register';
export type { OmniMetricsOptions, OmniMetricsHandle, PrometheusOptions } from './instrumentation/register';

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
export type { StageReplica } from './views/stage-replica-map';
export { EngineRelabelProcessor } from './views/engine-relabel-processor';
export { createOmniViews, OMNI_METER_NAME } from './views/views';
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
export type { DeclaredFamily, ExpositionFormat, SerializeOptions } from './exporters/prometheus-serializer';
export {
  createMetricsHandler,
  startPrometheusServer,
  negotiateFormat,
  DEFAULT_PROMETHEUS_PORT,
  DEFAULT_PROMETHEUS_HOST,
  DEFAULT_METRICS_PATH,
} from './exporters/prometheus-http';
export type { MetricsMiddleware, MetricsTextSource, PrometheusServer, PrometheusServerOptions } from './exporters/prometheus-http';
export { formatGoFloat } from './exporters/go-float';

// Recorders
export { OmniPrometheusMetrics, OmniRequestCounter, waitingRequests } from './instrumentation/recorders/pipeline-metrics';
export type { RecorderOptions } from './instrumentation/recorders/pipeline-metrics';
export {
  OmniModalityMetrics,
  AUDIO_CONTINUITY_DEFAULT_THRESHOLD_S,
  DEFAULT_AUDIO_SAMPLE_RATE,
} from './instrumentation/recorders/modality-metrics';
export type {
  FinalizeInput,
  FirstPacketInput,
  StreamingFinalizeInput,
  StageMetrics,
} from './instrumentation/recorders/modality-metrics';
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
export type { CacheConfigInfo, OmniStatLoggerOptions } from './instrumentation/recorders/stat-logger';
export type { LabelValue } from './instrumentation/series-table';
export { countAudioFrames } from './instrumentation/audio/frames';
