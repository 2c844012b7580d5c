import type { MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import { resolveEnginePullSettings, type EnginePullSettings } from './exporters/engine-pull/engine-pull-settings';
import { resolveExportSettings, type ExportSettings } from './exporters/otlp/export-settings';
import { parseOtelEnv, type OtelEnvConfig } from './exporters/otlp/otel-env';
import { buildResource } from './exporters/otlp/otel-resource';
import {
  PROMETHEUS_SERVER_OPTION_KEYS,
  resolvePrometheusServerSettings,
  type PrometheusServerOptions,
  type PrometheusServerSettings,
} from './exporters/prometheus-http';
import { OmniPrometheusReader, type OmniPrometheusReaderOptions } from './exporters/prometheus-reader';
import { resolveRequestLabels, type RequestLabelSettings } from './instrumentation/recorders/request-labels';
import { resolveSlo } from './instrumentation/recorders/slo-objectives';
import { EXPOSITION_CHOICES } from './exporters/content-negotiation';
import { tracingRegistered } from './views/store/exemplar-trace';
import { validateCacheConfig, type CacheConfigInfo } from './instrumentation/recorders/stat-logger';
import { resolveSelfCheckInterval } from './instrumentation/self-check/self-check-monitor';
import type { LogSink, OmniMetricsOptions, PrometheusOptions } from './options';
import { PEP440_VERSION, vllmHistogramBuckets } from './views/catalog/vllm-histogram-buckets';
import { KV_CONNECTOR_KINDS, resolveCatalog, type FeatureOptions, type ResolvedCatalog } from './views/catalog/catalog';
import { loadMetricsConfig } from './views/catalog/metrics-config';
import { PIPELINE_PREFIXES } from './views/catalog/names';
import { StageReplicaMap } from './views/stage-replica-map';
import {
  checkArray,
  checkBoolean,
  checkMethods,
  checkNonNegativeNumber,
  checkObject,
  checkOneOf,
  checkPositiveInteger,
  checkString,
  checked,
  OmniOptionError,
  optionKeys,
  shown,
} from './views/common/option-checks';
import { OmniMetricProducer } from './views/store/metric-producer';
import { resolveNativeHistograms, type NativeHistogramSettings } from './views/store/native-histogram-settings';
import { DEFAULT_CARDINALITY_LIMIT } from './views/store/series-store';
import { resolveStageNames } from './views/catalog/stage-names';
import type { SloOptions } from './views/catalog/slo-families';
import { NAMING_SCHEMES, type NamingScheme } from './views/views';

/** Who owns the meter provider: this package (built from the settings), the caller, or an SDK set up later. */
export type ProviderSettings =
  | { readonly kind: 'own'; readonly resource: Resource; readonly readers: readonly MetricReader[] }
  | { readonly kind: 'given'; readonly meterProvider: ApiMeterProvider }
  | { readonly kind: 'external' };

/** Every option settled: defaults applied, `OTEL_*` variables read, files read, nothing built yet. */
export interface OmniSettings {
  readonly modelName: string;
  /** The engine → (stage, replica) map of `stagePools`, checked. */
  readonly stageReplicaMap: StageReplicaMap;
  /** A name per stage id (`stageNames`), checked; empty without the option. */
  readonly stageNames: readonly string[];
  readonly logStats: boolean;
  readonly naming: NamingScheme;
  readonly catalog: ResolvedCatalog;
  readonly features?: FeatureOptions;
  readonly cacheConfig?: CacheConfigInfo;
  readonly cardinalityLimit?: number;
  /** Per-request labels on the request families, checked; empty when the option is off. */
  readonly requestLabels: readonly RequestLabelSettings[];
  /** The declared objectives (`slo`), checked and copied; undefined without the option. */
  readonly slo?: SloOptions;
  readonly logIntervalSeconds?: number;
  readonly logSink?: LogSink;
  readonly genAiMetrics: boolean;
  readonly processMetrics: boolean;
  /**
   * Whether the latency histograms and request counters keep exemplars: the option, else on when a
   * tracer provider is registered now, else `'when-traced'`: on once one is (NodeSDK's `start()`
   * registers its own after this call), found at a record or after a collection.
   */
  readonly exemplars: boolean | 'when-traced';
  /** Seconds between self-checks; undefined turns the periodic check off. */
  readonly selfCheckIntervalSeconds?: number;
  readonly enginePull?: EnginePullSettings;
  readonly exportSettings: ExportSettings;
  /** The built-in server's settings; undefined when no server runs. */
  readonly server?: PrometheusServerSettings;
  /** The reader the caller passed, or the options of the one to build; undefined: no reader at all. */
  readonly reader?: OmniPrometheusReader | OmniPrometheusReaderOptions;
  readonly provider: ProviderSettings;
  readonly metricProducers: readonly OmniMetricProducer[];
  /** `OTEL_SDK_DISABLED=true`: nothing is exported, served, pulled or timed; recording still works. */
  readonly sdkDisabled: boolean;
  /** Histogram families that keep native buckets too; undefined: none. */
  readonly nativeHistograms?: NativeHistogramSettings;
}

/** Every key of `OmniMetricsOptions`, spelled once: the unknown-option check and the options page test read it. */
export const OPTION_KEYS = optionKeys<OmniMetricsOptions>({
  modelName: true,
  stagePools: true,
  stageNames: true,
  logStats: true,
  prefix: true,
  maxModelLen: true,
  features: true,
  showHiddenMetrics: true,
  showHiddenMetricsForVersion: true,
  customHistogramBuckets: true,
  configFile: true,
  cacheConfig: true,
  prometheus: true,
  exporters: true,
  otlp: true,
  serviceName: true,
  genAiMetrics: true,
  naming: true,
  resource: true,
  readers: true,
  metricProducers: true,
  cardinalityLimit: true,
  requestLabels: true,
  slo: true,
  enginePull: true,
  meterProvider: true,
  prometheusReader: true,
  logIntervalSeconds: true,
  logSink: true,
  selfCheck: true,
  processMetrics: true,
  nativeHistograms: true,
  exemplars: true,
});
const PROMETHEUS_KEYS = [
  ...PROMETHEUS_SERVER_OPTION_KEYS,
  ...optionKeys<Omit<PrometheusOptions, keyof PrometheusServerOptions>>({ withTargetInfo: true, withScopeLabels: true, createdSeries: true, exposition: true }),
];
const FEATURE_KEYS = optionKeys<FeatureOptions>({
  specDecode: true,
  kvConnector: true,
  lora: true,
  kvCacheMetrics: true,
  corruptedRequests: true,
});
const KV_CONNECTORS = KV_CONNECTOR_KINDS;

/**
 * Options and environment to settings, checking everything: unknown keys, wrong types, values out
 * of range, combinations that cannot work. It reads files the options name (the config file, TLS
 * keys) and builds only plain data (the stage/replica map): no provider, reader, timer or socket
 * exists when it throws. What a check of another module refuses comes out as an `OmniOptionError`
 * too, naming the option group.
 */
export function resolveOmniSettings(options: OmniMetricsOptions, env: NodeJS.ProcessEnv = process.env): OmniSettings {
  checkObject(options, '', OPTION_KEYS);
  if (typeof options.modelName !== 'string' || options.modelName === '') {
    throw new OmniOptionError('modelName', `modelName must be a non-empty string (vLLM's served model name); got ${shown(options.modelName)}`);
  }
  checkArray(options.stagePools, 'stagePools');
  for (const flag of ['logStats', 'showHiddenMetrics', 'genAiMetrics', 'processMetrics', 'exemplars'] as const) checkBoolean(options[flag], flag);
  checkOneOf(options.prefix, 'prefix', PIPELINE_PREFIXES);
  checkOneOf(options.naming, 'naming', NAMING_SCHEMES);
  checkPositiveInteger(options.maxModelLen, 'maxModelLen');
  checkPositiveInteger(options.cardinalityLimit, 'cardinalityLimit');
  checkNonNegativeNumber(options.logIntervalSeconds, 'logIntervalSeconds');
  checkString(options.configFile, 'configFile');
  checkMethods(options.logSink, 'logSink', ['info']);
  checkArray(options.readers, 'readers');
  checkArray(options.metricProducers, 'metricProducers');
  options.metricProducers?.forEach((producer, i) => {
    if (!(producer instanceof OmniMetricProducer))
      throw new OmniOptionError(`metricProducers[${i}]`, `metricProducers[${i}] must be an OmniMetricProducer; got ${shown(producer)}`);
  });
  checkFeatures(options.features);
  const requestLabels = resolveRequestLabels(options.requestLabels, options.cardinalityLimit ?? DEFAULT_CARDINALITY_LIMIT);
  const slo = checked('slo', () => resolveSlo(options.slo));
  if (options.cacheConfig !== undefined) checked('cacheConfig', () => validateCacheConfig(options.cacheConfig as CacheConfigInfo));
  const logStats = options.logStats === true;
  if (options.genAiMetrics === true && !logStats) {
    throw new OmniOptionError('genAiMetrics', 'genAiMetrics needs logStats: true (the GenAI histograms are derived from the upstream stats)');
  }
  if (options.prometheus !== undefined && options.prometheus !== false) {
    if (typeof options.prometheus !== 'object' || options.prometheus === null) {
      throw new OmniOptionError(
        'prometheus',
        `prometheus must be false or an object of server options ({} for the defaults); got ${shown(options.prometheus)}`,
      );
    }
    checkObject(options.prometheus, 'prometheus', PROMETHEUS_KEYS);
    for (const flag of ['withTargetInfo', 'withScopeLabels', 'createdSeries'] as const) checkBoolean(options.prometheus[flag], `prometheus.${flag}`);
    checkOneOf(options.prometheus.exposition, 'prometheus.exposition', EXPOSITION_CHOICES);
  }
  const providerSettings = resolveProvider(options);

  const stagePools = options.stagePools ?? [];
  const stageReplicaMap = checked('stagePools', () => new StageReplicaMap(stagePools));
  const stageNames = resolveStageNames(options.stageNames, stagePools.length);
  const sdkDisabled = isTrue(env.OTEL_SDK_DISABLED);
  const otelEnv = checked('environment', () => parseOtelEnv(env));
  const exportSettings = checked('otlp', () => resolveExportSettings(options, otelEnv));
  if (
    providerSettings !== 'own' &&
    exportSettings.exportersSource === 'option' &&
    (exportSettings.exporters.has('otlp') || exportSettings.exporters.has('console'))
  ) {
    throw new OmniOptionError(
      'exporters',
      'exporters otlp and console need the provider registerOmniMetrics creates; with a meterProvider of your own, give its push reader metricProducers: [handle.createMetricProducer()]',
    );
  }
  const enginePull = options.enginePull === undefined ? undefined : checked('enginePull', () => resolveEnginePullSettings(options.enginePull!, stagePools));
  const selfCheckIntervalSeconds = checked('selfCheck', () => resolveSelfCheckInterval(options.selfCheck));
  const config = options.configFile === undefined ? undefined : loadMetricsConfig(options.configFile, options.prefix);
  const hiddenFor = options.showHiddenMetricsForVersion;
  if (hiddenFor !== undefined && (typeof hiddenFor !== 'string' || !PEP440_VERSION.test(hiddenFor))) {
    throw new OmniOptionError('showHiddenMetricsForVersion', `showHiddenMetricsForVersion must be a version such as "0.31"; got ${shown(hiddenFor)}`);
  }
  const customBuckets =
    options.customHistogramBuckets === undefined
      ? undefined
      : vllmHistogramBuckets(options.customHistogramBuckets, (problem) => {
          throw new OmniOptionError('customHistogramBuckets', problem);
        });
  const catalog = resolveCatalog({
    logStats,
    stageNames: stageNames.length > 0,
    prefix: options.prefix,
    maxModelLen: options.maxModelLen,
    features: options.features,
    showHiddenMetrics: options.showHiddenMetrics === true,
    showHiddenMetricsForVersion: options.showHiddenMetricsForVersion,
    buckets: { ...config?.buckets, ...customBuckets },
    customFamilies: config?.customFamilies,
    processMetrics: options.processMetrics !== false,
    requestLabels: requestLabels.map((label) => label.name),
    slo: slo !== undefined,
  });
  const nativeHistograms = resolveNativeHistograms(options.nativeHistograms ?? nativeHistogramsFromEnv(otelEnv, exportSettings.exporters), catalog);
  const serves = options.prometheus !== false && exportSettings.exporters.has('prometheus') && !sdkDisabled;
  const server = serves ? checked('prometheus', () => resolvePrometheusServerSettings(options.prometheus || {}, env)) : undefined;
  const prometheus = options.prometheus || {};
  const reader =
    options.prometheusReader ??
    (providerSettings === 'given'
      ? undefined
      : {
          withTargetInfo: prometheus.withTargetInfo,
          withScopeLabels: prometheus.withScopeLabels,
          createdSeries: prometheus.createdSeries,
          exposition: prometheus.exposition,
        });
  if (server !== undefined && reader === undefined) {
    throw new OmniOptionError(
      'prometheusReader',
      'a Prometheus server needs prometheusReader when you bring your own meterProvider (or set prometheus: false and mount handle.metricsHandler())',
    );
  }

  return {
    modelName: options.modelName,
    stageReplicaMap,
    stageNames,
    logStats,
    naming: options.naming ?? 'vllm',
    catalog,
    features: options.features,
    cacheConfig: options.cacheConfig,
    cardinalityLimit: options.cardinalityLimit,
    requestLabels,
    slo,
    logIntervalSeconds: options.logIntervalSeconds,
    logSink: options.logSink,
    genAiMetrics: options.genAiMetrics === true,
    processMetrics: options.processMetrics !== false,
    exemplars: options.exemplars ?? (tracingRegistered() || 'when-traced'),
    selfCheckIntervalSeconds: sdkDisabled ? undefined : selfCheckIntervalSeconds,
    enginePull: sdkDisabled ? undefined : enginePull,
    exportSettings,
    server,
    reader,
    provider:
      providerSettings === 'own'
        ? { kind: 'own', resource: checked('serviceName', () => buildResource(otelEnv, options)), readers: options.readers ?? [] }
        : providerSettings === 'given'
          ? { kind: 'given', meterProvider: options.meterProvider as ApiMeterProvider }
          : { kind: 'external' },
    metricProducers: options.metricProducers ?? [],
    sdkDisabled,
    nativeHistograms,
  };
}

function resolveProvider(options: OmniMetricsOptions): ProviderSettings['kind'] {
  const given = options.meterProvider;
  if (given === undefined) {
    if (options.prometheusReader !== undefined) {
      throw new OmniOptionError(
        'prometheusReader',
        "prometheusReader is for a meterProvider of your own (or meterProvider: 'external'); without one, this call builds its reader",
      );
    }
    return 'own';
  }
  if (options.readers !== undefined)
    throw new OmniOptionError('readers', 'readers are attached to the provider this call creates; with meterProvider given, add them to that provider');
  if (options.resource !== undefined || options.serviceName !== undefined) {
    const option = options.resource !== undefined ? 'resource' : 'serviceName';
    throw new OmniOptionError(option, `${option} shapes the provider this call creates; with meterProvider given, set it on that provider`);
  }
  if (given === 'external') return 'external';
  checkMethods(given, 'meterProvider', ['getMeter']);
  return 'given';
}

function checkFeatures(features: FeatureOptions | undefined): void {
  if (features === undefined) return;
  checkObject(features, 'features', FEATURE_KEYS);
  checkOneOf(features.kvConnector, 'features.kvConnector', KV_CONNECTORS);
  checkBoolean(features.kvCacheMetrics, 'features.kvCacheMetrics');
  checkBoolean(features.corruptedRequests, 'features.corruptedRequests');
  if (features.specDecode !== undefined) {
    checkObject(features.specDecode, 'features.specDecode', ['numSpeculativeTokens']);
    if (!(Number.isInteger(features.specDecode.numSpeculativeTokens) && features.specDecode.numSpeculativeTokens > 0)) {
      throw new OmniOptionError(
        'features.specDecode.numSpeculativeTokens',
        `features.specDecode.numSpeculativeTokens must be a positive integer; got ${shown(features.specDecode.numSpeculativeTokens)}`,
      );
    }
  }
  if (features.lora !== undefined) {
    checkObject(features.lora, 'features.lora', ['maxLoras']);
    checkPositiveInteger(features.lora.maxLoras, 'features.lora.maxLoras');
    if (features.lora.maxLoras === undefined)
      throw new OmniOptionError('features.lora.maxLoras', 'features.lora.maxLoras must be a positive integer; got undefined');
  }
}

/** The spec's boolean variables: only `true` (any case) is true. */
function isTrue(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true';
}

/**
 * `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=base2_exponential_bucket_histogram`
 * asks the OTLP exporter for exponential histograms, as OpenTelemetry JS's exporters take it: here
 * every histogram family keeps native buckets, which OTLP carries as exponential histograms (the
 * text formats keep the classic ones). Only when OTLP is exported: the variable is the OTLP
 * exporter's, and the `nativeHistograms` option wins over it.
 */
function nativeHistogramsFromEnv(otelEnv: OtelEnvConfig, exporters: ReadonlySet<string>): true | undefined {
  return exporters.has('otlp') && otelEnv.defaultHistogramAggregation?.value === 'base2_exponential_bucket_histogram' ? true : undefined;
}
