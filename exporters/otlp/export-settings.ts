import { packageDiag } from '../../views/common/package-diag';
import { checkObject, didYouMean, OmniOptionError, optionKeys, shown } from '../../views/common/option-checks';
import { redactedUrlText } from '../../views/common/redaction';
import { isHttpUrl, type FromVariable, type OtelEnvConfig } from './otel-env';
import {
  DEFAULT_EXPORT_INTERVAL_MILLIS,
  DEFAULT_EXPORT_TIMEOUT_MILLIS,
  DEFAULT_OTLP_PROTOCOL,
  METRICS_EXPORTER_NAMES,
  OTLP_COMPRESSIONS,
  OTLP_PROTOCOLS,
  TEMPORALITY_PREFERENCES,
  type MetricsExporterName,
  type OtlpCompression,
  type OtlpOptions,
  type OtlpProtocol,
  type TemporalityPreference,
} from './types';

/** The exporter choices of `registerOmniMetrics`, before the environment is consulted. */
export interface ExportOptions {
  readonly exporters?: readonly MetricsExporterName[];
  readonly otlp?: OtlpOptions;
}

/** What one OTLP exporter is built with: every value settled, `undefined` leaves the exporter's default. */
export interface OtlpExporterSettings {
  readonly protocol: OtlpProtocol;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMillis?: number;
  readonly compression?: OtlpCompression;
  readonly temporality: TemporalityPreference;
}

/** The settled exporter configuration of one registration. */
export interface ExportSettings {
  /** Exporters to run; `none` already removed. */
  readonly exporters: ReadonlySet<Exclude<MetricsExporterName, 'none'>>;
  /** Where the exporter list came from: `option`, `env` (`OTEL_METRICS_EXPORTER`) or `default` (Prometheus only). */
  readonly exportersSource: 'option' | 'env' | 'default';
  readonly otlp: OtlpExporterSettings;
  readonly exportIntervalMillis: number;
  readonly exportTimeoutMillis: number;
}

/**
 * Settles exporters and OTLP settings: each option wins over its variable, a metrics-specific
 * variable over the generic one, then the spec defaults. Invalid options throw (programmer error)
 * naming the option; `env` was validated by `parseOtelEnv`.
 */
export function resolveExportSettings(options: ExportOptions, env: OtelEnvConfig): ExportSettings {
  const otlp = options.otlp ?? {};
  validateOptions(options);

  const exportersList = options.exporters ?? env.exporters;
  const exporters = new Set((exportersList ?? ['prometheus']).filter((name): name is Exclude<MetricsExporterName, 'none'> => name !== 'none'));

  const protocol = otlp.protocol ?? env.protocol?.value ?? DEFAULT_OTLP_PROTOCOL;
  const headers = env.headers || otlp.headers ? { ...env.headers, ...otlp.headers } : undefined;

  const interval = setting(otlp.exportIntervalMillis, 'otlp.exportIntervalMillis', env.exportIntervalMillis);
  const timeout = setting(otlp.exportTimeoutMillis, 'otlp.exportTimeoutMillis', env.exportTimeoutMillis);
  const exportIntervalMillis = interval?.value ?? DEFAULT_EXPORT_INTERVAL_MILLIS;
  let exportTimeoutMillis = timeout?.value ?? DEFAULT_EXPORT_TIMEOUT_MILLIS;
  if (exportTimeoutMillis > exportIntervalMillis) {
    if (timeout !== undefined) {
      throw new RangeError(`${timeout.variable} (${timeout.value}) must not exceed ${interval?.variable ?? 'the export interval'} (${exportIntervalMillis})`);
    }
    // Only the default is in the way: the SDK reader needs timeout <= interval.
    packageDiag.info(`omni-otel-metrics: export timeout lowered to the ${exportIntervalMillis} ms export interval`);
    exportTimeoutMillis = exportIntervalMillis;
  }

  return {
    exporters,
    exportersSource: options.exporters ? 'option' : env.exporters ? 'env' : 'default',
    otlp: {
      protocol,
      url: otlpUrl(protocol, otlp.endpoint, env),
      headers,
      timeoutMillis: otlp.timeoutMillis ?? env.timeoutMillis?.value,
      compression: otlp.compression ?? env.compression?.value,
      temporality: otlp.temporality ?? env.temporality?.value ?? 'cumulative',
    },
    exportIntervalMillis,
    exportTimeoutMillis,
  };
}

function setting<T>(option: T | undefined, optionName: string, fromEnv: FromVariable<T> | undefined): FromVariable<T> | undefined {
  return option !== undefined ? { value: option, variable: optionName } : fromEnv;
}

/**
 * The export URL. For HTTP: the generic `OTEL_EXPORTER_OTLP_ENDPOINT` is a base, which
 * `v1/metrics` is resolved against as a path relative to it (the spec's rule); the option is a base
 * too when its path is empty (`http://collector:4318`, the way users of the variable write it), the
 * full URL otherwise (`http://collector:4318/v1/metrics`, a gateway's `/otlp/v1/metrics`);
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is used as given. The URL is built with the URL API: the
 * query is kept (`http://c:4318?tenant=a` posts to `/v1/metrics?tenant=a`), the fragment, which
 * HTTP never sends, is dropped. gRPC takes each as given. HTTP protocols need an http(s) URL.
 */
function otlpUrl(protocol: OtlpProtocol, option: string | undefined, env: OtelEnvConfig): string | undefined {
  const chosen: FromVariable<string> | undefined = option !== undefined ? { value: option, variable: 'otlp.endpoint' } : (env.metricsEndpoint ?? env.endpoint);
  if (chosen === undefined) return undefined;
  if (protocol === 'grpc') return chosen.value;
  if (!isHttpUrl(chosen.value)) {
    throw new RangeError(
      `${chosen.variable} must be an http:// or https:// URL for protocol ${protocol}; got ${JSON.stringify(redactedUrlText(chosen.value))}`,
    );
  }
  const url = new URL(chosen.value);
  url.hash = '';
  const base = chosen === env.endpoint || (chosen.variable === 'otlp.endpoint' && url.pathname === '/');
  if (base) url.pathname = `${url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`}v1/metrics`;
  return url.href;
}

const OTLP_OPTION_KEYS = optionKeys<OtlpOptions>({
  protocol: true,
  endpoint: true,
  headers: true,
  timeoutMillis: true,
  compression: true,
  exportIntervalMillis: true,
  exportTimeoutMillis: true,
  temporality: true,
});

function validateOptions(options: ExportOptions): void {
  if (options.exporters !== undefined) {
    const unknown = Array.isArray(options.exporters) ? options.exporters.find((name) => !METRICS_EXPORTER_NAMES.includes(name)) : options.exporters;
    if (unknown !== undefined) {
      throw new OmniOptionError(
        'exporters',
        `exporters must list only ${METRICS_EXPORTER_NAMES.join(', ')}; got ${shown(options.exporters)}${didYouMean(unknown, METRICS_EXPORTER_NAMES)}`,
      );
    }
    if (options.exporters.includes('none') && options.exporters.length > 1) {
      throw new OmniOptionError('exporters', `exporters: "none" cannot be combined with other exporters; got ${shown(options.exporters)}`);
    }
  }
  const otlp = options.otlp;
  if (otlp === undefined) return;
  checkObject(otlp, 'otlp', OTLP_OPTION_KEYS);
  enumOption('otlp.protocol', otlp.protocol, OTLP_PROTOCOLS);
  enumOption('otlp.compression', otlp.compression, OTLP_COMPRESSIONS);
  enumOption('otlp.temporality', otlp.temporality, TEMPORALITY_PREFERENCES);
  positiveOption('otlp.timeoutMillis', otlp.timeoutMillis);
  positiveOption('otlp.exportIntervalMillis', otlp.exportIntervalMillis);
  positiveOption('otlp.exportTimeoutMillis', otlp.exportTimeoutMillis);
  if (otlp.endpoint !== undefined && (typeof otlp.endpoint !== 'string' || otlp.endpoint.trim() === '')) {
    throw new RangeError(`otlp.endpoint must be a non-empty URL string; got ${shown(otlp.endpoint)}`);
  }
  if (otlp.headers !== undefined) checkHeaders(otlp.headers);
}

/** `otlp.headers` maps names to strings; a refusal names the header and the type, never a value (a token). */
function checkHeaders(headers: unknown): void {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new RangeError(
      `otlp.headers must map header names to strings; got ${headers === null ? 'null' : Array.isArray(headers) ? 'an array' : `a ${typeof headers}`}`,
    );
  }
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') {
      throw new RangeError(`otlp.headers must map header names to strings; got ${value === null ? 'null' : `a ${typeof value}`} for ${JSON.stringify(name)}`);
    }
  }
}

function enumOption<T extends string>(name: string, value: T | undefined, accepted: readonly T[]): void {
  if (value !== undefined && !accepted.includes(value)) {
    throw new RangeError(`${name} must be one of ${accepted.join(', ')}; got ${shown(value)}${didYouMean(value, accepted)}`);
  }
}

function positiveOption(name: string, value: number | undefined): void {
  if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    throw new RangeError(`${name} must be a positive number of milliseconds; got ${shown(value)}`);
  }
}
