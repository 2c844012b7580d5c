import { packageDiag } from './views/common/package-diag';
import { metrics as metricsApi, type MeterProvider as ApiMeterProvider } from '@opentelemetry/api';
import { MeterProvider, type AggregationTemporalitySelector, type MetricReader, type ViewOptions } from '@opentelemetry/sdk-metrics';
import { EnginePullProducer } from './exporters/engine-pull/engine-pull-producer';
import { EnginePuller } from './exporters/engine-pull/engine-puller';
import type { ExportSettings } from './exporters/otlp/export-settings';
import { createPushReaders } from './exporters/otlp/push-readers';
import { createMetricsHandler, type MetricsMiddleware } from './exporters/metrics-handler';
import type { ScrapeAuth } from './exporters/scrape-auth';
import { serveMetrics, type PrometheusServer } from './exporters/prometheus-http';
import { OmniPrometheusReader } from './exporters/prometheus-reader';
import type { ExpositionFormat } from './exporters/exposition/exposition-text';
import type { InstrumentedMetrics } from './instrumentation/hooks/instrumented-metrics';
import { stopFeedOf } from './instrumentation/hooks/handle-feed';
import { createRecorders, stopRecorders, type RecorderSettings } from './instrumentation/recorders/recorders';
import { HostCallCounts, setHostCallCounts } from './instrumentation/self-check/host-calls';
import { recordStageNames } from './instrumentation/recorders/stage-info';
import { SilentFamilyCheck } from './instrumentation/self-check/self-check';
import { startProcessMetrics } from './instrumentation/process/process-metrics';
import { SelfCheckMonitor } from './instrumentation/self-check/self-check-monitor';
import type { SelfCheckReport } from './instrumentation/self-check/types';
import type { OmniMetricsOptions } from './options';
import { resolveOmniSettings, type OmniSettings } from './settings';
import type { ResolvedCatalog } from './views/catalog/catalog';
import { scrapeUpFamily } from './views/catalog/scrape-up-family';
import { OmniMetricProducer, type MetricProducerOptions } from './views/store/metric-producer';
import { checkObject } from './views/common/option-checks';
import { SeriesStore } from './views/store/series-store';
import { createOmniViews } from './views/views';
import { HandleLifecycle } from './handle-lifecycle';
import { EXEMPLARS_NOT_PRODUCED, uncarriedFeatures } from './feature-combinations';
import { WarnOnce } from './views/common/diag-warnings';

/** What `registerOmniMetrics` returns: the recorders, the readers and servers it started, and the replica topology. */
export interface OmniMetricsHandle extends InstrumentedMetrics {
  /** @internal */
  readonly catalog: ResolvedCatalog;
  /** Views for instruments of your own under the catalog's names (give them to NodeSDK's `views`). */
  readonly views: readonly ViewOptions[];
  /**
   * The reader behind `metricsText()`, `metricsHandler()` and the built-in server: the `prometheusReader` option, else
   * one this call built; absent with a `meterProvider` of your own and no `prometheusReader`.
   */
  readonly prometheusReader?: OmniPrometheusReader;
  /** The built-in server, when `prometheus` is not `false` and the exporters include it. */
  readonly prometheusServer?: PrometheusServer;
  /**
   * The settled exporter configuration (options over `OTEL_*` variables over defaults).
   * @internal
   */
  readonly exportSettings: ExportSettings;
  /** A handler to mount `/metrics` (or `path`) on the host's own HTTP server or framework, optionally behind `auth`. */
  metricsHandler(pathOrOptions?: string | { readonly path?: string; readonly auth?: ScrapeAuth }): MetricsMiddleware;
  /** The exact text the Prometheus endpoint would serve. */
  metricsText(format?: ExpositionFormat): Promise<string>;
  /**
   * A producer of the store for a reader of your own (`metricProducers: [producer]`), at the
   * temporality its exporter selects (pass `exporter.selectAggregationTemporality`, alone or as
   * `aggregationTemporalitySelector`); cumulative by default. Families with native buckets come as
   * exponential histograms when a temporality selector is given (a push exporter: OTLP, console),
   * as classic buckets otherwise (a pull reader such as the SDK's `PrometheusExporter`);
   * `exponentialHistograms` decides it either way.
   */
  createMetricProducer(options?: AggregationTemporalitySelector | MetricProducerOptions): OmniMetricProducer;
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
   * The replica's engine index (vLLM's `engine` label value, what `statLogger.recordSleepState`
   * takes): assigned in stage order at registration, the next unused one for a replica added
   * later, never reused after a removal. Undefined for a replica the stage pools do not have.
   */
  engineIndex(stage: number, replica: number): number | undefined;
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
 * Registers every family for one pipeline at startup and returns the recorders. Every option is
 * checked and settled first (a bad one throws before anything exists); then the parts are built;
 * then the server binds its port and the provider takes its readers, the steps that can still
 * fail, before any timer or pull starts.
 */
export async function registerOmniMetrics(options: OmniMetricsOptions): Promise<OmniMetricsHandle> {
  const settings = resolveOmniSettings(options);
  // `host.id` is read from a file: settled before anything reads the resource (the first scrape's target_info).
  if (settings.provider.kind === 'own') await settings.provider.resource.waitForAsyncAttributes?.();
  const stageReplicaMap = settings.stageReplicaMap;
  const store = new SeriesStore(settings.catalog, {
    modelName: settings.modelName,
    naming: settings.naming,
    cardinalityLimit: settings.cardinalityLimit,
    stageReplicaMap,
    nativeHistograms: settings.nativeHistograms,
    exemplars: settings.exemplars,
  });
  const puller =
    settings.enginePull === undefined
      ? undefined
      : new EnginePuller(settings.enginePull, stageReplicaMap, scrapeUpFamily(settings.catalog.prefix), {
          ownFamilies: store.families.map(({ family }) => ({ name: family.name, type: family.type })),
          cardinalityLimit: store.cardinalityLimit,
        });
  const newProducer = (producerOptions: MetricProducerOptions): OmniMetricProducer =>
    puller === undefined ? new OmniMetricProducer(producerOptions) : new EnginePullProducer(puller, producerOptions);
  const reader =
    settings.reader instanceof OmniPrometheusReader ? settings.reader : settings.reader === undefined ? undefined : new OmniPrometheusReader(settings.reader);
  reader?.attachStore(store, puller === undefined ? undefined : newProducer({ store, exponentialHistograms: false }));
  warnAboutMisplacedExporters(settings);
  for (const line of uncarriedFeatures(settings, reader)) packageDiag.warn(line);
  // Built, not started: a push reader's export timer starts when a provider takes it.
  const pushReaders =
    settings.provider.kind === 'own' && !settings.sdkDisabled ? createPushReaders(settings.exportSettings, store, undefined, newProducer) : [];

  // The two steps that can still fail: binding the port, and a provider refusing a reader of the caller's that another
  // provider already has. Nothing else runs yet; what they started stops, and a reader the caller passed in no longer
  // reads this store (whose engine pulls would never be stopped).
  let server: PrometheusServer | undefined;
  let meterProvider: ApiMeterProvider;
  try {
    server = settings.server === undefined || reader === undefined ? undefined : await serveMetrics(reader, settings.server);
    meterProvider = providerFor(settings, reader, pushReaders);
  } catch (error) {
    await Promise.allSettled([server?.close(), ...pushReaders.map((pushReader) => pushReader.shutdown())]);
    reader?.detachStore();
    // A server whose listen failed releases its handle in the event loop's close phase: one full turn, so a failed start leaves nothing behind.
    await new Promise((resolve) => setTimeout(resolve, 0));
    throw error;
  }
  // Said once per handle: its producers are alike.
  const producersWarning = new WarnOnce();
  for (const producer of settings.metricProducers) producer.attach(store);
  if (settings.exemplars === true && settings.metricProducers.length > 0) producersWarning.warn('producers', EXEMPLARS_NOT_PRODUCED);
  const recorderSettings: RecorderSettings = {
    catalog: settings.catalog,
    naming: settings.naming,
    modelName: settings.modelName,
    logStats: settings.logStats,
    stageReplicaMap,
    features: settings.features,
    cacheConfig: settings.cacheConfig,
    logIntervalSeconds: settings.sdkDisabled ? 0 : settings.logIntervalSeconds,
    logSink: settings.logSink,
    genAiMetrics: settings.genAiMetrics,
    requestLabels: settings.requestLabels,
    slo: settings.slo,
  };
  const recorders = createRecorders(store, recorderSettings, meterProvider);
  recordStageNames(store, settings.modelName, settings.stageNames);
  puller?.start();
  const hostCalls = new HostCallCounts(stageReplicaMap);
  const silentFamilies = new SilentFamilyCheck({
    store,
    stageReplicaMap,
    logStats: settings.logStats,
    hostCalls,
    pulledReplicas: settings.enginePull?.targets,
  });
  const monitor =
    settings.selfCheckIntervalSeconds === undefined ? undefined : new SelfCheckMonitor(silentFamilies, settings.selfCheckIntervalSeconds, settings.logSink);
  // Nothing unless the catalog has the process families; between collections only its GC observer runs.
  const processMetrics = startProcessMetrics(store);
  const ownedProvider = settings.provider.kind === 'own' && meterProvider instanceof MeterProvider ? meterProvider : undefined;

  const lifecycle = new HandleLifecycle();
  const handle: OmniMetricsHandle = {
    catalog: settings.catalog,
    store,
    stageReplicaMap,
    get meterProvider() {
      return settings.provider.kind === 'external' ? metricsApi.getMeterProvider() : meterProvider;
    },
    views: createOmniViews(settings.catalog, { naming: settings.naming, stageReplicaMap, cardinalityLimit: settings.cardinalityLimit }),
    settings: recorderSettings,
    ...recorders,
    prometheusReader: reader,
    prometheusServer: server,
    exportSettings: settings.exportSettings,
    metricsHandler: (pathOrOptions) => createMetricsHandler(readerFor('metricsHandler()'), pathOrOptions),
    metricsText: async (format) => readerFor('metricsText()').metricsText(format),
    createMetricProducer: (producerOptions) => {
      lifecycle.assertRunning('createMetricProducer()');
      if (typeof producerOptions !== 'function' && producerOptions !== undefined)
        checkObject(producerOptions, 'createMetricProducer options', ['aggregationTemporalitySelector', 'exponentialHistograms']);
      const producer = newProducer(
        typeof producerOptions === 'function' ? { store, aggregationTemporalitySelector: producerOptions } : { ...producerOptions, store },
      );
      if (settings.exemplars === true) producersWarning.warn('producers', EXEMPLARS_NOT_PRODUCED);
      return producer;
    },
    addReplica: (stage, replica) => {
      lifecycle.assertRunning('addReplica()');
      return stageReplicaMap.addReplica(stage, replica).replica;
    },
    removeReplica: (stage, replica) => {
      lifecycle.assertRunning('removeReplica()');
      if (stageReplicaMap.removeReplica(stage, replica) !== undefined) return true;
      // A stage that is no vLLM engine (a diffusion stage) is not in the map; its per-replica pipeline series go all the same.
      return stage >= stageReplicaMap.replicasPerStage.length && store.removeReplicaSeries(String(stage), String(replica)) > 0;
    },
    replaceReplica: (stage, replica) => {
      lifecycle.assertRunning('replaceReplica()');
      if (stageReplicaMap.removeReplica(stage, replica) === undefined) throw new RangeError(`stage ${stage} has no replica ${replica} to replace`);
      stageReplicaMap.addReplica(stage, replica);
    },
    engineIndex: (stage, replica) => stageReplicaMap.engineIndex(stage, replica),
    selfCheck: () => {
      lifecycle.assertRunning('selfCheck()');
      return silentFamilies.check();
    },
    forceFlush: async () => {
      lifecycle.assertRunning('forceFlush()');
      await (meterProvider as Partial<Pick<MeterProvider, 'forceFlush'>>).forceFlush?.();
    },
    shutdown: () =>
      lifecycle.shutDownOnce(async () => {
        monitor?.stop();
        processMetrics.stop();
        // The hooks' observer and idle sweep are the handle's, whichever instrumentation fed them.
        stopFeedOf(handle);
        stopRecorders(recorders);
        puller?.stop();
        await server?.close();
        await ownedProvider?.shutdown();
      }),
  };
  setHostCallCounts(handle, hostCalls);
  return handle;

  function readerFor(method: string): OmniPrometheusReader {
    lifecycle.assertRunning(method);
    if (reader === undefined) throw new Error(`${method} needs an OmniPrometheusReader (pass prometheusReader with your meterProvider)`);
    return reader;
  }
}

/** The provider the recorders use: built here with the package's readers and the caller's, the caller's own, or (external) the global one, looked up on use. */
function providerFor(settings: OmniSettings, reader: OmniPrometheusReader | undefined, pushReaders: readonly MetricReader[]): ApiMeterProvider {
  const provider = settings.provider;
  if (provider.kind === 'given') return provider.meterProvider;
  if (provider.kind === 'external') return { getMeter: (...args) => metricsApi.getMeterProvider().getMeter(...args) };
  return new MeterProvider({ resource: provider.resource, readers: [...(reader ? [reader] : []), ...pushReaders, ...provider.readers] });
}

/** Push exporters the environment asks for that this call cannot run: said once, at startup. */
function warnAboutMisplacedExporters(settings: OmniSettings): void {
  const { exporters, exportersSource } = settings.exportSettings;
  const pushes = exporters.has('otlp') || exporters.has('console');
  if (!pushes || settings.provider.kind === 'own' || exportersSource !== 'env') return;
  packageDiag.warn(
    "omni-otel-metrics: OTEL_METRICS_EXPORTER asks for push exporters, but the meter provider is not this package's: a reader built from that variable does not carry the package's families. Give your SDK's push reader `metricProducers: [handle.createMetricProducer()]`.",
  );
}
