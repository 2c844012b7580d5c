import { MetricReader, type CollectionResult, type MetricCollectOptions } from '@opentelemetry/sdk-metrics';
import { emptyResource } from '@opentelemetry/resources';
import { LimitedWarning } from '../views/common/diag-warnings';
import { checkObject, checkOneOf, optionKeys } from '../views/common/option-checks';
import { OmniMetricProducer } from '../views/store/metric-producer';
import type { SeriesStore } from '../views/store/series-store';
import { OMNI_METER_NAME, PACKAGE_VERSION } from '../views/views';
import type { DeclaredFamily } from '../views/declared-families';
import { EXPOSITION_CHOICES, type ExpositionChoice } from './content-negotiation';
import { SharedRenderings, type ExpositionPieces } from './shared-rendering';
import { EnginePullProducer } from './engine-pull/engine-pull-producer';
import { joinPulled } from './engine-pull/pulled-families';
import { createdSeriesDisabledByEnv, renderRequest, type ExpositionFormat, type RenderKey } from './exposition/exposition-text';
import { collectedFamilies, targetInfoFamily } from './exposition/collected-families';
import { exposedFamilies, withScopeLabels } from './exposition/exposed-families';
import type { ExpositionFamily } from './exposition/model';
import { protobufExposition } from './exposition/protobuf-writer';
import { storeFamilies } from './exposition/store-families';
import { textExposition } from './exposition/text-writer';

/** Options of `OmniPrometheusReader`. */
export interface OmniPrometheusReaderOptions {
  /**
   * The package's series store; registration attaches it when the reader was created first.
   * @internal
   */
  readonly store?: SeriesStore;
  /**
   * Families announced before they have samples, among the streams the SDK collects.
   * @internal
   */
  readonly declaredFamilies?: readonly DeclaredFamily[];
  /** Add `target_info` from the resource (vLLM has none). Default off. */
  readonly withTargetInfo?: boolean;
  /** Add `otel_scope_name` / `otel_scope_version` labels to every series (vLLM has none). Default off. */
  readonly withScopeLabels?: boolean;
  /**
   * Print `<name>_created` for every counter and histogram series, as prometheus_client (and so
   * vLLM) does, and carry the same time as `created_timestamp` in the protobuf exposition. Default
   * on, unless `PROMETHEUS_DISABLE_CREATED_SERIES` is `true`, `1` or `t`.
   */
  readonly createdSeries?: boolean;
  /** `negotiate` (default): OpenMetrics to a scraper that prefers it; `text`: the 0.0.4 text to every scrape, as vLLM. */
  readonly exposition?: 'negotiate' | 'text';
}

const READER_OPTION_KEYS = optionKeys<OmniPrometheusReaderOptions>({
  store: true,
  declaredFamilies: true,
  withTargetInfo: true,
  withScopeLabels: true,
  createdSeries: true,
  exposition: true,
});

/** The scope the package's own families carry when scope labels are printed. */
const PACKAGE_SCOPE = Object.freeze({ otel_scope_name: OMNI_METER_NAME, otel_scope_version: PACKAGE_VERSION });

/**
 * A pull `MetricReader` whose output is vLLM's `/metrics` byte shape. Every format is written
 * from one model of the exposition (`expositionFamilies()`): the package's families read straight
 * from the series store, pulled engines' series joined in, then whatever else the SDK collects
 * (instruments of your own on the same provider). Concurrent scrapes of one format share one
 * rendering. Serving it over HTTP is `prometheus-http.ts`'s job.
 *
 * `collect()` returns the SDK's streams and the store's (cumulative), like any reader given an
 * `OmniMetricProducer`.
 */
export class OmniPrometheusReader extends MetricReader {
  private declared: readonly DeclaredFamily[];
  private store: { readonly series: SeriesStore; readonly producer: OmniMetricProducer } | undefined;
  private readonly createdSeries: boolean;
  /**
   * How the HTTP handlers serving this reader pick a scrape's format (the `exposition` option).
   * @internal
   */
  readonly expositionChoice: ExpositionChoice;
  /**
   * Every rendering of this reader, HTTP scrapes and `metricsBytes()` alike, per format and name escaping: those that overlap share one.
   * @internal
   */
  readonly sharedRenderings = new SharedRenderings((key: RenderKey) => this.exposition(key));
  /** Set once a MeterProvider takes this reader: before that only the store can be read. */
  private inProvider = false;

  constructor(private readonly options: OmniPrometheusReaderOptions = {}) {
    super();
    checkObject(options, 'OmniPrometheusReader options', READER_OPTION_KEYS);
    this.declared = options.declaredFamilies ?? [];
    this.createdSeries = options.createdSeries ?? !createdSeriesDisabledByEnv();
    checkOneOf(options.exposition, 'exposition', EXPOSITION_CHOICES);
    this.expositionChoice = options.exposition ?? 'negotiate';
    if (options.store) this.attachStore(options.store);
  }

  /**
   * Reads `store` from now on. A `producer` of the store given here (one that adds series, as
   * `enginePull`'s does) is what `collect()` returns, and its pulled engines join the exposition.
   * @internal
   */
  attachStore(store: SeriesStore, producer?: OmniMetricProducer): void {
    this.store = { series: store, producer: producer ?? new OmniMetricProducer({ store, exponentialHistograms: false }) };
  }

  /**
   * Stops reading the store it was given (a registration that failed after attaching it).
   * @internal
   */
  detachStore(): void {
    this.store = undefined;
  }

  /**
   * Replaces the announced families.
   * @internal
   */
  declareFamilies(families: readonly DeclaredFamily[]): void {
    this.declared = families;
  }

  /** A MeterProvider took the reader: from now on its output includes the SDK's streams. */
  protected override onInitialized(): void {
    this.inProvider = true;
  }

  /** The SDK's streams with the package's families from the store (cumulative); only the store's while no MeterProvider has the reader. */
  override async collect(options?: MetricCollectOptions): Promise<CollectionResult> {
    const [sdk, store] = await Promise.all([this.collectSdk(options), this.store?.producer.collect()]);
    if (store === undefined) return sdk;
    return {
      resourceMetrics: { resource: sdk.resourceMetrics.resource, scopeMetrics: [...store.resourceMetrics.scopeMetrics, ...sdk.resourceMetrics.scopeMetrics] },
      errors: sdk.errors,
    };
  }

  /** The exact text a scrape would receive; rendered in slices as a scrape is, and shared with the scrapes it overlaps. */
  metricsText(format: ExpositionFormat = 'text'): Promise<string> {
    return this.sharedRenderings.rendering(format, false).text();
  }

  /** The exact bytes a scrape would receive (UTF-8); scrapes that overlap share one rendering. */
  metricsBytes(format: ExpositionFormat = 'text'): Promise<Buffer> {
    return this.sharedRenderings.rendering(format, false).bytes();
  }

  /**
   * Whether a scraper that prefers the Prometheus protobuf exposition gets it: when some family
   * keeps native histograms, which only that format carries (the text formats carry everything
   * else, as vLLM serves it).
   */
  offersProtobuf(): boolean {
    return this.store?.series.families.some((family) => family.native !== undefined) === true;
  }

  /** The exact protobuf bytes a scrape asking for them would receive, or undefined when this reader does not offer them. */
  protobufBytes(): Promise<Buffer> | undefined {
    return this.offersProtobuf() ? this.sharedRenderings.rendering('protobuf', false).bytes() : undefined;
  }

  /**
   * The exposition as a model, as of now: `target_info` when asked for, the store's families with
   * pulled engines' series joined in, the engines' other families, then the SDK's (declared
   * families first). What every format writes, and what a `node:cluster` worker sends its primary.
   * @internal
   */
  async expositionFamilies(): Promise<ExpositionFamily[]> {
    const store = this.store;
    const puller = store?.producer instanceof EnginePullProducer ? store.producer : undefined;
    const [{ resourceMetrics, errors }, pulled] = await Promise.all([this.collectSdk(), puller?.pulled()]);
    reportErrors(errors);
    const scopeLabels = this.options.withScopeLabels === true;
    const targetInfo = this.options.withTargetInfo === true ? targetInfoFamily(resourceMetrics.resource) : undefined;
    const application = collectedFamilies(resourceMetrics, this.declared, scopeLabels);
    if (store === undefined) return exposedFamilies({ targetInfo, own: [], application });
    let own = storeFamilies(store.series);
    let pulledOnly: ExpositionFamily[] = [];
    if (pulled !== undefined) ({ own, pulledOnly } = joinPulled(store.series, own, pulled.families, pulled.replicas));
    if (scopeLabels) {
      own = own.map((family) => withScopeLabels(family, PACKAGE_SCOPE));
      pulledOnly = pulledOnly.map((family) => withScopeLabels(family, PACKAGE_SCOPE));
    }
    return exposedFamilies({ targetInfo, own, pulled: pulledOnly, application });
  }

  /** One rendering's pieces, produced lazily as the rendering pulls them. */
  private async exposition(key: RenderKey): Promise<ExpositionPieces> {
    const { format, escaping } = renderRequest(key);
    const families = await this.expositionFamilies();
    const createdSeries = this.createdSeries;
    return format === 'protobuf' ? protobufExposition(families, { createdSeries, escaping }) : textExposition(families, { format, createdSeries, escaping });
  }

  /**
   * The SDK's streams, or none while no MeterProvider has this reader (handed to an SDK that has
   * not started yet, or never): the store is served all the same, and the slip is said once.
   */
  private async collectSdk(options?: MetricCollectOptions): Promise<CollectionResult> {
    if (this.inProvider) return super.collect(options);
    notInProvider.warn(
      "the OmniPrometheusReader is in no MeterProvider yet: /metrics serves the package's families but no other instruments. With meterProvider: 'external', put handle.prometheusReader in NodeSDK's metricReaders.",
    );
    return { resourceMetrics: { resource: emptyResource(), scopeMetrics: [] }, errors: [] };
  }

  /** Does nothing: a pull reader buffers nothing. */
  protected override async onForceFlush(): Promise<void> {
    // Pull reader: nothing is buffered.
  }

  /** Does nothing: the server that serves the reader is closed on its own (`PrometheusServer.close()`, called by the handle's `shutdown()`). */
  protected override async onShutdown(): Promise<void> {
    // The HTTP side owns its server and closes it itself.
  }
}

const notInProvider = new LimitedWarning(Infinity);
/** The SDK's collection errors (an instrument's callback that threw), at most one warning an interval. */
const collectionErrors = new LimitedWarning();

function reportErrors(errors: readonly unknown[]): void {
  for (const error of errors) collectionErrors.warn(`error while collecting metrics: ${error instanceof Error ? error.message : String(error)}`);
}
