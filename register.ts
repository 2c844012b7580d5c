import { diag, type MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import { MeterProvider, type MetricReader } from '@opentelemetry/sdk-metrics';
import type { Resource } from '@opentelemetry/resources';
import {
  createMetricsHandler,
  resolvePrometheusServerSettings,
  serveMetrics,
  type MetricsHandlerOptions,
  type MetricsMiddleware,
  type PrometheusServer,
  type PrometheusServerOptions,
} from './exporters/prometheus-http';
import { resolveExportSettings, type ExportSettings } from './exporters/otlp/export-settings';
import { parseOtelEnv } from './exporters/otlp/otel-env';
import { buildResource } from './exporters/otlp/otel-resource';
import { createPushReaders } from './exporters/otlp/push-readers';
import type { MetricsExporterName, OtlpOptions } from './exporters/otlp/types';
import { EnginePullProducer } from './exporters/engine-pull/engine-pull-producer';
import { resolveEnginePullSettings } from './exporters/engine-pull/engine-pull-settings';
import { EnginePuller } from './exporters/engine-pull/engine-puller';
import { scrapeUpFamily } from './views/scrape-up-family';
import type { EnginePullOptions } from './exporters/engine-pull/types';
import { OmniPrometheusReader } from './exporters/prometheus-reader';
import type { ExpositionFormat } from './exporters/prometheus-serializer';
import { OmniMetricProducer, type OmniMetricProducerOptions } from './views/store/metric-producer';
import { SeriesStore } from './views/store/series-store';
import type { AggregationTemporalitySelector } from '@opentelemetry/sdk-metrics';
import { resolveCatalog, type FeatureOptions, type ResolvedCatalog } from './views/catalog';
import { loadMetricsConfig } from './views/metrics-config';
import type { PipelinePrefix } from './views/names';
import { StageReplicaMap } from './views/stage-replica-map';
import { streamNameFor, type NamingScheme } from './views/views';
import { createRecorders, stopRecorders, type OmniRecorders, type RecorderSettings } from './instrumentation/recorders/recorders';
import { validateCacheConfig, type CacheConfigInfo } from './instrumentation/recorders/stat-logger';
import { HostCallCounts, setHostCallCounts } from './instrumentation/self-check/host-calls';
import { SilentFamilyCheck } from './instrumentation/self-check/self-check';
import { resolveSelfCheckInterval, SelfCheckMonitor } from './instrumentation/self-check/self-check-monitor';
import type { SelfCheckOptions, SelfCheckReport } from './instrumentation/self-check/types';

export interface PrometheusOptions extends PrometheusServerOptions {
  /** Add `target_info` from the resource (vLLM has none). */
  readonly withTargetInfo?: boolean;
  /** Add `otel_scope_*` labels (vLLM has none). */
  readonly withScopeLabels?: boolean;
  /**
   * Print `<name>_created` for every counter and histogram series, as vLLM's prometheus_client
   * does. Default on, unless `PROMETHEUS_DISABLE_CREATED_SERIES` is `true`, `1` or `t`.
   */
  readonly createdSeries?: boolean;
}

export interface OmniMetricsOptions {
  /** `model_name` label value (vLLM's served model name). */
  readonly modelName: string;
  /** Replicas per stage in stage order, e.g. [1, 2, 1]; defines the engine → (stage, replica) map. */
  readonly stagePools: readonly number[];
  /** Upstream `--log-stats`, default off: pipeline families declared but silent, upstream families absent. */
  readonly logStats?: boolean;
  /** Pipeline family prefix; default `vllm:omni_`. */
  readonly prefix?: PipelinePrefix;
  /** vLLM's `max_model_len`, for the 1-2-5 token buckets; default 4096. */
  readonly maxModelLen?: number;
  /** Optional vLLM features whose families are registered only when configured. */
  readonly features?: FeatureOptions;
  /** Expose deprecated upstream names (vLLM's `--show-hidden-metrics-for-version`). */
  readonly showHiddenMetrics?: boolean;
  /** YAML/JSON file with bucket overrides and extra families (see `loadMetricsConfig`). */
  readonly configFile?: string;
  /** `vllm:cache_config_info` labels: the engine's CacheConfig fields, as vLLM's `metrics_info()`. */
  readonly cacheConfig?: CacheConfigInfo;
  /**
   * Serve `/metrics` on its own port (default: `OTEL_EXPORTER_PROMETHEUS_HOST/PORT`, else
   * 0.0.0.0:9464), or `false` for no server (mount `handle.metricsHandler()` instead). No server
   * either when `exporters` leaves out `prometheus`; `metricsText()` works in every case.
   */
  readonly prometheus?: false | PrometheusOptions;
  /**
   * Which exporters run; default `OTEL_METRICS_EXPORTER`, else `['prometheus']`. `otlp` and
   * `console` push periodically; `['none']` (or `[]`) runs none.
   */
  readonly exporters?: readonly MetricsExporterName[];
  /** OTLP protocol, endpoint, headers, timeouts, interval, temporality; each wins over its `OTEL_*` variable. */
  readonly otlp?: OtlpOptions;
  /** `service.name` of the resource; wins over `OTEL_SERVICE_NAME` and the `resource` option. */
  readonly serviceName?: string;
  /**
   * Also record the GenAI semantic-convention histograms (`gen_ai.server.time_to_first_token`,
   * `…time_per_output_token`, `…request.duration`, `gen_ai.client.token.usage`) from the upstream
   * stats; needs `logStats`. Default off.
   */
  readonly genAiMetrics?: boolean;
  /** Stream naming; default `vllm` (exact vLLM names). */
  readonly naming?: NamingScheme;
  /** Merged over the SDK default and `OTEL_RESOURCE_ATTRIBUTES` / `OTEL_SERVICE_NAME`. */
  readonly resource?: Resource;
  /**
   * Further readers of your own, attached to the provider this call creates. The package's
   * families reach a reader through an `OmniMetricProducer` in its `metricProducers`: create one,
   * give it to the reader, and list it in `metricProducers` here.
   */
  readonly readers?: readonly MetricReader[];
  /** Producers (created before the store existed) that this call attaches to the package's series store. */
  readonly metricProducers?: readonly OmniMetricProducer[];
  /** Label sets per family before new ones fold into one overflow series; default 2000. */
  readonly cardinalityLimit?: number;
  /**
   * Real vLLM servers behind the pipeline: per (stage, replica), the server's `/metrics` URL (and
   * `engine` label, for data-parallel servers). Their `vllm:*` families are pulled, relabelled to
   * `stage` + `replica`, and served with the package's own, in `/metrics` and over OTLP; for these
   * replicas the pulled figures win over in-process ones. See the README, "Real vLLM engines".
   */
  readonly enginePull?: EnginePullOptions;
  /**
   * Bring your own provider: the package's families reach its readers through `OmniMetricProducer`s
   * (list them in `metricProducers`), and an `OmniPrometheusReader` among its readers, passed here
   * as `prometheusReader`, serves `metricsText()` and the built-in server. This call then neither
   * owns nor shuts the provider down.
   */
  readonly meterProvider?: ApiMeterProvider;
  readonly prometheusReader?: OmniPrometheusReader;
  /** Periodic log line per (stage, replica) while `logStats` is on; default 10 s, 0 disables. */
  readonly logIntervalSeconds?: number;
  /** Where log lines go; default `console.info` / nowhere for debug. */
  readonly logSink?: { info(line: string): void; debug?(line: string): void };
  /**
   * The periodic self-check for silent families (default on, every 60 s): a family registered for
   * this configuration that receives nothing while requests flow is warned about through `diag`
   * and `logSink` once it stays silent for two checks, and summarised at `shutdown()`. `false`
   * turns the warning and summary off; `handle.selfCheck()` works either way.
   */
  readonly selfCheck?: false | SelfCheckOptions;
}

export interface OmniMetricsHandle extends OmniRecorders {
  readonly catalog: ResolvedCatalog;
  /** Every series of the catalog's families. */
  readonly store: SeriesStore;
  readonly stageReplicaMap: StageReplicaMap;
  readonly meterProvider: ApiMeterProvider;
  /** What the recorders were built with; `createRecorders(provider, settings)` rebuilds them elsewhere. */
  readonly settings: RecorderSettings;
  readonly prometheusReader?: OmniPrometheusReader;
  /** The built-in server, when `prometheus` is not `false` and the exporters include it. */
  readonly prometheusServer?: PrometheusServer;
  /** The settled exporter configuration (options over `OTEL_*` variables over defaults). */
  readonly exportSettings: ExportSettings;
  /** A handler to mount `/metrics` (or `path`) on the host's own HTTP server or framework, optionally behind `auth`. */
  metricsHandler(pathOrOptions?: string | MetricsHandlerOptions): MetricsMiddleware;
  /** The exact text the Prometheus endpoint would serve. */
  metricsText(format?: ExpositionFormat): Promise<string>;
  /**
   * A producer of the store for a reader of your own (`metricProducers: [producer]`), at the
   * temporality its exporter selects (pass `exporter.selectAggregationTemporality`); cumulative by default.
   */
  createMetricProducer(aggregationTemporalitySelector?: AggregationTemporalitySelector): OmniMetricProducer;
  /**
   * Adds a replica to a stage while serving (`replica`, or one above the stage's highest): with
   * `logStats` its `vllm:*` series appear at once, at zero, created now. Returns the replica id.
   */
  addReplica(stage: number, replica?: number): number;
  /**
   * Removes a replica: every series labelled with it (and the transfer hops to or from it) leaves
   * the next scrape and export; the other replicas' series are untouched. A stage after
   * `stagePools` (no vLLM engine, e.g. a diffusion stage) works too: its replica's per-replica
   * series go. False when there was none.
   */
  removeReplica(stage: number, replica: number): boolean;
  /** A replica restarted: its series start over from zero with a new `_created`, as a restarted vLLM engine's do. */
  replaceReplica(stage: number, replica: number): void;
  /**
   * Checks now which registered families received nothing while requests flowed since the
   * previous check, and why (see `SelfCheckReport`). Reads the store's totals; the record path
   * pays nothing. Each call is one check, as the periodic ones are.
   */
  selfCheck(): SelfCheckReport;
  /** Collects and pushes now on every push exporter (OTLP, console), waiting for the exports. */
  forceFlush(): Promise<void>;
  /**
   * Stops the server and periodic logging, and shuts down the provider if this call created it
   * (which flushes the push exporters one last time).
   */
  shutdown(): Promise<void>;
}

/**
 * Registers every family for one pipeline at startup and returns the recorders. Validates all
 * options first (a bad option throws before anything is started).
 */
export async function registerOmniMetrics(options: OmniMetricsOptions): Promise<OmniMetricsHandle> {
  if (typeof options.modelName !== 'string' || options.modelName === '') {
    throw new TypeError('modelName must be a non-empty string');
  }
  const stageReplicaMap = new StageReplicaMap(options.stagePools);
  const enginePullSettings = options.enginePull === undefined ? undefined : resolveEnginePullSettings(options.enginePull, options.stagePools);
  const logStats = options.logStats === true;
  const selfCheckIntervalSeconds = resolveSelfCheckInterval(options.selfCheck);
  const config = options.configFile ? loadMetricsConfig(options.configFile, options.prefix) : undefined;
  const catalog = resolveCatalog({
    logStats,
    prefix: options.prefix,
    maxModelLen: options.maxModelLen,
    features: options.features,
    showHiddenMetrics: options.showHiddenMetrics,
    buckets: config?.buckets,
    customFamilies: config?.customFamilies,
  });
  if (options.cacheConfig !== undefined) validateCacheConfig(options.cacheConfig);
  const naming = options.naming ?? 'vllm';
  const store = new SeriesStore(catalog, { modelName: options.modelName, naming, cardinalityLimit: options.cardinalityLimit, stageReplicaMap });

  // Built here, started below with the rest: no timer or socket exists before every option has been checked.
  const puller = enginePullSettings === undefined ? undefined : new EnginePuller(enginePullSettings, stageReplicaMap, scrapeUpFamily(catalog.prefix));
  const newProducer = puller === undefined ? undefined : (producerOptions: OmniMetricProducerOptions) => new EnginePullProducer(puller, producerOptions);
  const ownsProvider = options.meterProvider === undefined;
  const otelEnv = parseOtelEnv(process.env);
  const exportSettings = resolveExportSettings(options, otelEnv);
  // Checked (TLS files read) before any provider, reader or timer exists.
  const serverSettings =
    options.prometheus !== false && exportSettings.exporters.has('prometheus') ? resolvePrometheusServerSettings(options.prometheus ?? {}) : undefined;
  const resource = ownsProvider ? buildResource(otelEnv, options) : undefined;
  const pushReaders = ownsProvider ? createPushReaders(exportSettings, store, undefined, newProducer) : [];
  if (!ownsProvider && (exportSettings.exporters.has('otlp') || exportSettings.exporters.has('console'))) {
    if (exportSettings.exportersSource === 'option') {
      throw new Error('exporters otlp and console need the provider registerOmniMetrics creates; add createPushReaders() readers to your own meterProvider instead');
    }
    diag.info('omni-otel-metrics: OTEL_METRICS_EXPORTER push exporters are left to the owner of the meterProvider passed in');
  }
  const reader =
    options.prometheusReader ??
    (ownsProvider
      ? new OmniPrometheusReader({
          withTargetInfo: options.prometheus ? options.prometheus.withTargetInfo : undefined,
          withScopeLabels: options.prometheus ? options.prometheus.withScopeLabels : undefined,
          createdSeries: options.prometheus ? options.prometheus.createdSeries : undefined,
        })
      : undefined);
  reader?.attachStore(store, newProducer?.({ store }));
  for (const producer of options.metricProducers ?? []) producer.attach(store);
  const meterProvider =
    options.meterProvider ??
    new MeterProvider({
      resource,
      readers: [...(reader ? [reader] : []), ...pushReaders, ...(options.readers ?? [])],
    });

  const settings: RecorderSettings = {
    catalog,
    naming,
    modelName: options.modelName,
    logStats,
    stageReplicaMap,
    features: options.features,
    cacheConfig: options.cacheConfig,
    logIntervalSeconds: options.logIntervalSeconds,
    logSink: options.logSink,
    genAiMetrics: options.genAiMetrics,
  };
  const recorders = createRecorders(store, settings, meterProvider);

  puller?.start();
  let server: PrometheusServer | undefined;
  if (serverSettings !== undefined) {
    try {
      if (reader === undefined) throw new Error('a Prometheus server needs prometheusReader when you bring your own meterProvider');
      server = await serveMetrics(reader, serverSettings);
    } catch (error) {
      // Nothing half-started stays behind: no log timer, no engine pulls, no provider of ours.
      stopRecorders(recorders);
      puller?.stop();
      if (ownsProvider) await (meterProvider as MeterProvider).shutdown();
      throw error;
    }
  }

  const hostCalls = new HostCallCounts(stageReplicaMap);
  const silentFamilies = new SilentFamilyCheck({ store, stageReplicaMap, logStats, hostCalls, pulledReplicas: enginePullSettings?.targets });
  // Started last: a failed start above leaves no timer behind.
  const monitor = selfCheckIntervalSeconds === undefined ? undefined : new SelfCheckMonitor(silentFamilies, selfCheckIntervalSeconds, options.logSink);

  const handle: OmniMetricsHandle = {
    catalog,
    store,
    stageReplicaMap,
    meterProvider,
    settings,
    ...recorders,
    prometheusReader: reader,
    prometheusServer: server,
    exportSettings,
    metricsHandler: (pathOrOptions) => {
      if (reader === undefined) throw new Error('metricsHandler() needs an OmniPrometheusReader (pass prometheusReader)');
      return createMetricsHandler(reader, pathOrOptions);
    },
    metricsText: async (format) => {
      if (reader === undefined) throw new Error('metricsText() needs an OmniPrometheusReader (pass prometheusReader)');
      return reader.metricsText(format);
    },
    createMetricProducer: (aggregationTemporalitySelector) =>
      newProducer?.({ store, aggregationTemporalitySelector }) ?? new OmniMetricProducer({ store, aggregationTemporalitySelector }),
    addReplica: (stage, replica) => stageReplicaMap.addReplica(stage, replica).replica,
    removeReplica: (stage, replica) => {
      if (stageReplicaMap.removeReplica(stage, replica) !== undefined) return true;
      // A stage that is no vLLM engine (a diffusion stage) is not in the map; its per-replica pipeline series go all the same.
      return stage >= stageReplicaMap.replicasPerStage.length && store.removeReplicaSeries(String(stage), String(replica)) > 0;
    },
    replaceReplica: (stage, replica) => {
      if (stageReplicaMap.removeReplica(stage, replica) === undefined) throw new RangeError(`stage ${stage} has no replica ${replica} to replace`);
      stageReplicaMap.addReplica(stage, replica);
    },
    selfCheck: () => silentFamilies.check(),
    forceFlush: async () => {
      await (meterProvider as Partial<Pick<MeterProvider, 'forceFlush'>>).forceFlush?.();
    },
    shutdown: async () => {
      monitor?.stop();
      stopRecorders(recorders);
      puller?.stop();
      await server?.close();
      if (ownsProvider) await (meterProvider as MeterProvider).shutdown();
    },
  };
  setHostCallCounts(handle, hostCalls);
  return handle;
}
