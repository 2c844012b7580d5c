// The public types use Node's (Buffer, node:http, NodeJS.ProcessEnv): with this reference, a
// project compiled with `types: []` and `skipLibCheck: false` still finds them (@types/node).
/// <reference types="node" preserve="true" />
/**
 * `omni-otel-metrics/exporters`: the pieces `registerOmniMetrics` assembles, for setups that wire
 * them by hand. The vLLM-exact serializer and HTTP handler, OTLP and console push readers with the
 * standard `OTEL_*` configuration, metrics as log lines, and the node:cluster aggregate.
 */
export { OmniPrometheusReader, type OmniPrometheusReaderOptions } from './prometheus-reader';
export { serializePrometheus, type SerializeOptions } from './prometheus-serializer';
export { TEXT_CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE, type ExpositionFormat } from './exposition/exposition-text';
export { createMetricsHandler, DEFAULT_METRICS_PATH, type MetricsHandlerOptions, type MetricsMiddleware, type MetricsTextSource } from './metrics-handler';
export {
  startPrometheusServer,
  serveMetrics,
  resolvePrometheusServerSettings,
  DEFAULT_PROMETHEUS_PORT,
  DEFAULT_PROMETHEUS_HOST,
  DEFAULT_HEADERS_TIMEOUT_MILLIS,
  DEFAULT_IDLE_TIMEOUT_MILLIS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_WRITE_TIMEOUT_MILLIS,
  SHUTDOWN_GRACE_MILLIS,
  type PrometheusServer,
  type PrometheusServerOptions,
  type PrometheusServerSettings,
  type PrometheusTlsOptions,
} from './prometheus-http';
export { negotiateFormat } from './content-negotiation';
export type { ScrapeAuth } from './scrape-auth';
export { parseOtelEnv, type FromVariable, type OtelEnvConfig, type OtelEnvironment } from './otlp/otel-env';
export { resolveExportSettings, type ExportOptions, type ExportSettings, type OtlpExporterSettings } from './otlp/export-settings';
export { createOtlpMetricExporter, GRPC_EXPORTER_PACKAGE } from './otlp/otlp-metric-exporter';
export { createPushReaders } from './otlp/push-readers';
export { buildResource, type ResourceOptions } from './otlp/otel-resource';
export { collectorPrometheusName, collectorNamingMarkdown, COLLECTOR_TRANSLATION_STRATEGIES, type CollectorTranslationStrategy } from './otlp/collector-naming';
export {
  METRICS_EXPORTER_NAMES,
  OTLP_PROTOCOLS,
  OTLP_COMPRESSIONS,
  TEMPORALITY_PREFERENCES,
  DEFAULT_OTLP_PROTOCOL,
  DEFAULT_EXPORT_INTERVAL_MILLIS,
  DEFAULT_EXPORT_TIMEOUT_MILLIS,
  type MetricsExporterName,
  type OtlpCompression,
  type OtlpOptions,
  type OtlpProtocol,
  type TemporalityPreference,
} from './otlp/types';
export { LogMetricExporter, type LogDestination, type LogLineStream, type LogMetricExporterOptions } from './log-exporter/log-metric-exporter';
export type { LogMetricFormat } from './log-exporter/log-lines';
export { startClusterPrimary, type ClusterPrimary, type ClusterPrimaryOptions } from './cluster/cluster-primary';
export { serveClusterWorker, type ClusterWorker, type ClusterWorkerOptions, type ClusterWorkerSource } from './cluster/cluster-worker';
export type { GaugeMerge } from './cluster/merge';
export type { EnginePullOptions, EngineTarget } from './engine-pull/types';
