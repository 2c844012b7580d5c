import { redactedHeaderList, redactedUrlText } from '../../views/common/redaction';
import {
  HISTOGRAM_AGGREGATIONS,
  METRICS_EXPORTER_NAMES,
  OTLP_COMPRESSIONS,
  OTLP_PROTOCOLS,
  RESOURCE_DETECTOR_NAMES,
  TEMPORALITY_PREFERENCES,
  type HistogramAggregation,
  type MetricsExporterName,
  type OtlpCompression,
  type OtlpProtocol,
  type ResourceDetectorName,
  type TemporalityPreference,
} from './types';

/** An environment to read: `process.env`, or a plain object in tests. */
export type OtelEnvironment = Readonly<Record<string, string | undefined>>;

/** A value and the variable it came from, so later checks can name the variable. */
export interface FromVariable<T> {
  readonly value: T;
  readonly variable: string;
}

/** The `OTEL_*` metrics settings, validated; a field is absent when its variables are unset or empty. */
export interface OtelEnvConfig {
  /** `OTEL_METRICS_EXPORTER`, deduplicated; `['none']` when it says `none`. */
  readonly exporters?: readonly MetricsExporterName[];
  /** `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`. */
  readonly protocol?: FromVariable<OtlpProtocol>;
  /** `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as given). */
  readonly metricsEndpoint?: FromVariable<string>;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` (HTTP exporters append `v1/metrics`). */
  readonly endpoint?: FromVariable<string>;
  /** `OTEL_EXPORTER_OTLP_HEADERS` merged with `OTEL_EXPORTER_OTLP_METRICS_HEADERS` (which wins per key). */
  readonly headers?: Readonly<Record<string, string>>;
  /** `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`. */
  readonly timeoutMillis?: FromVariable<number>;
  /** `OTEL_EXPORTER_OTLP_METRICS_COMPRESSION`, else `OTEL_EXPORTER_OTLP_COMPRESSION`. */
  readonly compression?: FromVariable<OtlpCompression>;
  /** `OTEL_METRIC_EXPORT_INTERVAL`. */
  readonly exportIntervalMillis?: FromVariable<number>;
  /** `OTEL_METRIC_EXPORT_TIMEOUT`. */
  readonly exportTimeoutMillis?: FromVariable<number>;
  /** `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`. */
  readonly temporality?: FromVariable<TemporalityPreference>;
  /** `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION`: exponential (native) buckets for the histograms pushed over OTLP. */
  readonly defaultHistogramAggregation?: FromVariable<HistogramAggregation>;
  /** `OTEL_RESOURCE_ATTRIBUTES`, with `OTEL_SERVICE_NAME` as `service.name` (it wins). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** `OTEL_NODE_RESOURCE_DETECTORS`: absent when unset (every detector runs). */
  readonly resourceDetectors?: ResourceDetectorSelection;
}

/**
 * The detectors `OTEL_NODE_RESOURCE_DETECTORS` selects, read as `@opentelemetry/sdk-node` reads
 * it: a comma-separated list in which `all` anywhere selects every detector and otherwise `none`
 * anywhere selects none. Names this package has no detector for (the cloud and container detectors
 * of `@opentelemetry/auto-instrumentations-node` share the variable) are kept in `unknown`, to be
 * warned about and ignored rather than refused.
 */
export interface ResourceDetectorSelection {
  readonly names: readonly ResourceDetectorName[];
  readonly unknown: readonly string[];
}

/**
 * Reads and validates the standard OpenTelemetry metrics variables (what `@opentelemetry/sdk-node`
 * reads, which this package does not use). Pure: it reads only `env`. Empty values count as
 * unset; enumerations are case-insensitive; a metrics-specific variable wins over its generic
 * `OTEL_EXPORTER_OTLP_*` twin. An invalid value throws a `RangeError` naming the variable and the
 * accepted values.
 */
export function parseOtelEnv(env: OtelEnvironment): OtelEnvConfig {
  const metricsHeaders = keyValueList(env, 'OTEL_EXPORTER_OTLP_METRICS_HEADERS', redactedHeaderList);
  const genericHeaders = keyValueList(env, 'OTEL_EXPORTER_OTLP_HEADERS', redactedHeaderList);
  const headers = metricsHeaders || genericHeaders ? { ...genericHeaders, ...metricsHeaders } : undefined;
  return {
    exporters: exporterList(env),
    protocol: signalSpecific(env, 'PROTOCOL', (variable) => oneOf(env, variable, OTLP_PROTOCOLS)),
    metricsEndpoint: fromVariable(env, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', endpoint(env, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT')),
    endpoint: fromVariable(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', endpoint(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')),
    headers,
    timeoutMillis: signalSpecific(env, 'TIMEOUT', (variable) => positiveInteger(env, variable)),
    compression: signalSpecific(env, 'COMPRESSION', (variable) => oneOf(env, variable, OTLP_COMPRESSIONS)),
    exportIntervalMillis: fromVariable(env, 'OTEL_METRIC_EXPORT_INTERVAL', positiveInteger(env, 'OTEL_METRIC_EXPORT_INTERVAL')),
    exportTimeoutMillis: fromVariable(env, 'OTEL_METRIC_EXPORT_TIMEOUT', positiveInteger(env, 'OTEL_METRIC_EXPORT_TIMEOUT')),
    temporality: fromVariable(
      env,
      'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE',
      oneOf(env, 'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE', TEMPORALITY_PREFERENCES),
    ),
    defaultHistogramAggregation: fromVariable(
      env,
      'OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION',
      oneOf(env, 'OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION', HISTOGRAM_AGGREGATIONS),
    ),
    resourceAttributes: resourceAttributes(env),
    resourceDetectors: resourceDetectors(env),
  };
}

/** Whether `endpoint` is an `http://` or `https://` URL (what the HTTP exporters need). */
export function isHttpUrl(endpoint: string): boolean {
  if (!/^https?:\/\//i.test(endpoint)) return false;
  try {
    new URL(endpoint);
    return true;
  } catch {
    return false;
  }
}

/** A trimmed value, or undefined when unset or blank (the spec treats empty as unset). */
function read(env: OtelEnvironment, variable: string): string | undefined {
  const value = env[variable]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function fromVariable<T>(env: OtelEnvironment, variable: string, value: T | undefined): FromVariable<T> | undefined {
  return value === undefined ? undefined : { value, variable };
}

/** `OTEL_EXPORTER_OTLP_METRICS_<suffix>` if set, else `OTEL_EXPORTER_OTLP_<suffix>`; both are validated. */
function signalSpecific<T>(env: OtelEnvironment, suffix: string, parse: (variable: string) => T | undefined): FromVariable<T> | undefined {
  const specific = `OTEL_EXPORTER_OTLP_METRICS_${suffix}`;
  const generic = `OTEL_EXPORTER_OTLP_${suffix}`;
  const specificValue = parse(specific);
  const genericValue = parse(generic);
  if (specificValue !== undefined) return { value: specificValue, variable: specific };
  return genericValue === undefined ? undefined : { value: genericValue, variable: generic };
}

/** `shown` is the value as the message may print it: header values and URL credentials are redacted. */
function invalid(variable: string, expected: string, shown: string, detail?: string): RangeError {
  return new RangeError(`${variable} must be ${expected}; got ${JSON.stringify(shown)}${detail === undefined ? '' : ` (${detail})`}`);
}

function oneOf<T extends string>(env: OtelEnvironment, variable: string, accepted: readonly T[]): T | undefined {
  const raw = read(env, variable);
  if (raw === undefined) return undefined;
  const value = raw.toLowerCase();
  if (!(accepted as readonly string[]).includes(value)) throw invalid(variable, `one of ${accepted.join(', ')}`, raw);
  return value as T;
}

function positiveInteger(env: OtelEnvironment, variable: string): number | undefined {
  const raw = read(env, variable);
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value > 0) || !Number.isSafeInteger(value)) throw invalid(variable, 'a positive integer number of milliseconds', raw);
  return value;
}

function exporterList(env: OtelEnvironment): MetricsExporterName[] | undefined {
  const variable = 'OTEL_METRICS_EXPORTER';
  const raw = read(env, variable);
  if (raw === undefined) return undefined;
  const names: MetricsExporterName[] = [];
  for (const entry of raw.split(',')) {
    const name = entry.trim().toLowerCase();
    if (name === '') continue;
    if (!(METRICS_EXPORTER_NAMES as readonly string[]).includes(name)) {
      throw invalid(variable, `a comma-separated list of ${METRICS_EXPORTER_NAMES.join(', ')}`, raw);
    }
    if (!names.includes(name as MetricsExporterName)) names.push(name as MetricsExporterName);
  }
  if (names.includes('none') && names.length > 1) throw invalid(variable, '"none" alone or a list without "none"', raw);
  if (names.length === 0) throw invalid(variable, `a comma-separated list of ${METRICS_EXPORTER_NAMES.join(', ')}`, raw);
  return names;
}

/** A URL, or `host:port` (gRPC); whether it suits the protocol is checked once the protocol is known. */
function endpoint(env: OtelEnvironment, variable: string): string | undefined {
  const raw = read(env, variable);
  if (raw === undefined) return undefined;
  if (isHttpUrl(raw) || /^[A-Za-z0-9.\-[\]]+:\d+$/.test(raw) || /^unix:/.test(raw)) return raw;
  throw invalid(variable, 'an http:// or https:// URL (or host:port for grpc)', redactedUrlText(raw));
}

/**
 * `key1=value1,key2=value2`, values percent-decoded (the W3C Baggage form both `…_HEADERS` and
 * `OTEL_RESOURCE_ATTRIBUTES` use). `shown` is how a refused value is printed (headers: redacted).
 */
function keyValueList(env: OtelEnvironment, variable: string, shown: (raw: string) => string = (raw) => raw): Record<string, string> | undefined {
  const raw = read(env, variable);
  if (raw === undefined) return undefined;
  const pairs: Array<[string, string]> = [];
  for (const [index, entry] of raw.split(',').entries()) {
    if (entry.trim() === '') continue;
    const equals = entry.indexOf('=');
    const key = equals > 0 ? entry.slice(0, equals).trim() : '';
    if (key === '') throw invalid(variable, 'a comma-separated list of key=value pairs', shown(raw), `entry ${index + 1} is not key=value`);
    try {
      pairs.push([key, decodeURIComponent(entry.slice(equals + 1).trim())]);
    } catch {
      throw invalid(variable, 'a comma-separated list of key=value pairs with percent-encoded values', shown(raw), `entry ${index + 1} is not percent-encoded`);
    }
  }
  // `fromEntries` defines each key as the object's own: `__proto__=x` is a pair like any other, not a prototype to set.
  return Object.fromEntries(pairs);
}

function resourceAttributes(env: OtelEnvironment): Record<string, string> {
  const attributes = keyValueList(env, 'OTEL_RESOURCE_ATTRIBUTES') ?? {};
  const serviceName = read(env, 'OTEL_SERVICE_NAME');
  if (serviceName !== undefined) attributes['service.name'] = serviceName;
  return attributes;
}

function resourceDetectors(env: OtelEnvironment): ResourceDetectorSelection | undefined {
  const raw = read(env, 'OTEL_NODE_RESOURCE_DETECTORS');
  if (raw === undefined) return undefined;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  if (entries.includes('all')) return { names: RESOURCE_DETECTOR_NAMES, unknown: [] };
  if (entries.includes('none')) return { names: [], unknown: [] };
  const known = (entry: string): entry is ResourceDetectorName => (RESOURCE_DETECTOR_NAMES as readonly string[]).includes(entry);
  return { names: [...new Set(entries.filter(known))], unknown: [...new Set(entries.filter((entry) => !known(entry)))] };
}
