/** Prometheus name rules, shared by the catalog, the config loader and the serializer. */

export const METRIC_NAME_PATTERN = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
export const LABEL_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The pipeline prefix: the seed design's spelling, or the one newer vLLM-Omni switched to. */
export type PipelinePrefix = 'vllm:omni_' | 'vllm_omni:';
export const PIPELINE_PREFIXES: readonly PipelinePrefix[] = ['vllm:omni_', 'vllm_omni:'];
export const DEFAULT_PIPELINE_PREFIX: PipelinePrefix = 'vllm:omni_';

/** Exposed family name: prometheus_client appends `_total` to every counter. */
export function exposedName(prefix: string, baseName: string, type: string): string {
  return `${prefix}${baseName}${type === 'counter' ? '_total' : ''}`;
}

/**
 * A name the OpenTelemetry API accepts without a diag warning (`[a-zA-Z][a-zA-Z0-9_.\-/]*`):
 * colons become dots. Views rename the stream to the exposed name when the `vllm` naming is used.
 */
export function instrumentNameFor(prefix: string, baseName: string): string {
  return `${prefix}${baseName}`.replace(/:/g, '.');
}

/**
 * The `otel` naming scheme's stream name: the instrument name without a trailing unit token,
 * since OpenTelemetry carries the unit separately (`vllm.e2e_request_latency_seconds` with unit
 * `s` becomes `vllm.e2e_request_latency`; a collector's suffix strategy adds `_seconds` back).
 */
export function otelNameFor(instrumentName: string, unit: string): string {
  const token = unit === 's' ? /_(seconds|s)$/ : unit === 'By' ? /_bytes$/ : undefined;
  return token ? instrumentName.replace(token, '') : instrumentName;
}

/** A name that is not a valid metric name, repaired the usual way: invalid characters become `_`. */
export function prometheusMetricName(name: string): string {
  return METRIC_NAME_PATTERN.test(name) ? name : sanitize(name, /[^a-zA-Z0-9_:]/g);
}

/** An attribute key as a Prometheus label name (`otel.metric.overflow` → `otel_metric_overflow`). */
export function prometheusLabelName(key: string): string {
  return LABEL_NAME_PATTERN.test(key) ? key : sanitize(key, /[^a-zA-Z0-9_]/g);
}

function sanitize(name: string, invalid: RegExp): string {
  const replaced = name.replace(invalid, '_');
  return /^[0-9]/.test(replaced) ? `_${replaced}` : replaced;
}
