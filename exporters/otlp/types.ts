/** Public configuration of the push exporters (OTLP, console), as options and as `OTEL_*` variables. */

/** `OTEL_METRICS_EXPORTER` values. `none` stands alone: no exporter at all. */
export type MetricsExporterName = 'prometheus' | 'otlp' | 'console' | 'none';
export const METRICS_EXPORTER_NAMES: readonly MetricsExporterName[] = Object.freeze(['prometheus', 'otlp', 'console', 'none']);

/** `OTEL_EXPORTER_OTLP_(METRICS_)PROTOCOL` values. */
export type OtlpProtocol = NonNullable<OtlpOptions['protocol']>;
export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = Object.freeze(['http/protobuf', 'http/json', 'grpc']);

/** `OTEL_EXPORTER_OTLP_(METRICS_)COMPRESSION` values. */
export type OtlpCompression = NonNullable<OtlpOptions['compression']>;
export const OTLP_COMPRESSIONS: readonly OtlpCompression[] = Object.freeze(['gzip', 'none']);

/** `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` values (see `OtlpOptions.temporality`). */
export type TemporalityPreference = NonNullable<OtlpOptions['temporality']>;
export const TEMPORALITY_PREFERENCES: readonly TemporalityPreference[] = Object.freeze(['cumulative', 'delta', 'lowmemory']);

/** `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` values, as the OpenTelemetry specification and JS SDK name them. */
export type HistogramAggregation = 'explicit_bucket_histogram' | 'base2_exponential_bucket_histogram';
export const HISTOGRAM_AGGREGATIONS: readonly HistogramAggregation[] = Object.freeze(['explicit_bucket_histogram', 'base2_exponential_bucket_histogram']);

/**
 * `OTEL_NODE_RESOURCE_DETECTORS` values, as `@opentelemetry/sdk-node` names its detectors (besides
 * `all` and `none`): `env` is `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME`; `serviceinstance`
 * is `service.instance.id`.
 */
export type ResourceDetectorName = 'env' | 'host' | 'os' | 'process' | 'serviceinstance';
export const RESOURCE_DETECTOR_NAMES: readonly ResourceDetectorName[] = Object.freeze(['env', 'host', 'os', 'process', 'serviceinstance']);

export const DEFAULT_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';
export const DEFAULT_EXPORT_INTERVAL_MILLIS = 60_000;
export const DEFAULT_EXPORT_TIMEOUT_MILLIS = 30_000;

/** OTLP settings; each one wins over its `OTEL_*` variable. */
export interface OtlpOptions {
  /** Default `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, then `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`. */
  readonly protocol?: 'http/protobuf' | 'http/json' | 'grpc';
  /**
   * Where to send. For HTTP, a URL without a path is a base, as `OTEL_EXPORTER_OTLP_ENDPOINT` is:
   * `http://collector:4318` posts to `http://collector:4318/v1/metrics`; a URL with a path is the
   * full URL (`http://collector:4318/v1/metrics`, `https://gateway/otlp/v1/metrics`). For gRPC, a
   * URL or `host:port`, as given. Default: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` as given, else
   * `OTEL_EXPORTER_OTLP_ENDPOINT` (plus `v1/metrics` for HTTP), else the exporter's default.
   */
  readonly endpoint?: string;
  /** Merged over `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_METRICS_HEADERS`, key by key. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per export request; default `OTEL_EXPORTER_OTLP_(METRICS_)TIMEOUT`, else 10 000. */
  readonly timeoutMillis?: number;
  /** Default `OTEL_EXPORTER_OTLP_(METRICS_)COMPRESSION`, else none. */
  readonly compression?: 'gzip' | 'none';
  /** Between exports (OTLP and console); default `OTEL_METRIC_EXPORT_INTERVAL`, else 60 000. */
  readonly exportIntervalMillis?: number;
  /**
   * For one collect-and-export; default `OTEL_METRIC_EXPORT_TIMEOUT`, else 30 000 (or the
   * interval, when that is shorter).
   */
  readonly exportTimeoutMillis?: number;
  /**
   * Default `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`, else `cumulative`, what
   * `prometheusremotewrite` accepts; `delta` makes counters, histograms and gauges delta;
   * `lowmemory` makes only synchronous counters and histograms delta.
   */
  readonly temporality?: 'cumulative' | 'delta' | 'lowmemory';
}
