import { MetricReader, type CollectionResult, type MetricCollectOptions, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { emptyResource } from '@opentelemetry/resources';
import { LimitedWarning } from '../views/diag-warnings';
import { checkObject, checkOneOf, optionKeys } from '../views/option-checks';
import { OmniMetricProducer } from '../views/store/metric-producer';
import type { SeriesStore } from '../views/store/series-store';
import { createdSeriesDisabledByEnv, type ExpositionFormat } from './exposition-text';
import { EXPOSITION_CHOICES, type ExpositionChoice } from './content-negotiation';
import type { DeclaredFamily } from '../views/declared-families';
import { prometheusPieces, serializeFamilies, targetInfoText } from './prometheus-serializer';
import { SharedRenderings, type ExpositionPieces, type SharedRendering } from './shared-rendering';
import { parseExposition } from './engine-pull/exposition-parser';
import { collectedFamiliesProtobuf, parsedFamiliesProtobuf, storeProtobuf } from './protobuf-exposition';
import { collectedFamilies, targetInfoFamily } from './collected-families';
import { storeExposition } from './store-exposition';
import { EnginePullProducer, printedByEngines } from './engine-pull/engine-pull-producer';
import { joinedWithStore, pulledOnlyFamilies } from './engine-pull/pulled-exposition';

export interface OmniPrometheusReaderOptions {
  /** The package's series store; registration attaches it when the reader was created first. */
  readonly store?: SeriesStore;
  /** Families announced before they have samples, among the streams the SDK collects. */
  readonly declaredFamilies?: readonly DeclaredFamily[];
  readonly withTargetInfo?: boolean;
  readonly withScopeLabels?: boolean;
  /**
   * Print `<name>_created` for every counter and histogram series, as prometheus_client (and so
   * vLLM) does. Default on, unless `PROMETHEUS_DISABLE_CREATED_SERIES` is `true`, `1` or `t`.
   */
  readonly createdSeries?: boolean;
  /** `negotiate` (default): OpenMetrics to a scraper that prefers it; `text`: the 0.0.4 text to every scrape, as vLLM. */
  readonly exposition?: ExpositionChoice;
}

const READER_OPTION_KEYS = optionKeys<OmniPrometheusReaderOptions>({
  store: true,
  declaredFamilies: true,
  withTargetInfo: true,
  withScopeLabels: true,
  createdSeries: true,
  exposition: true,
});

/**
 * A pull `MetricReader` whose output is vLLM's `/metrics` byte shape. The package's families are
 * rendered straight from the series store; whatever else the SDK collects (instruments of your
 * own on the same provider) follows through the generic serializer. Concurrent scrapes of one
 * format share one rendering. Serving it over HTTP is `prometheus-http.ts`'s job.
 *
 * `collect()` returns the SDK's streams and the store's (cumulative), like any reader given an
 * `OmniMetricProducer`.
 */
export class OmniPrometheusReader extends MetricReader {
  private declared: readonly DeclaredFamily[];
  private store:
    | {
        readonly series: SeriesStore;
        readonly producer: OmniMetricProducer;
        readonly families: readonly DeclaredFamily[];
        readonly names: ReadonlySet<string>;
        readonly generic: boolean;
      }
    | undefined;
  private readonly createdSeries: boolean;
  /** How the HTTP handlers serving this reader pick a scrape's format (the `exposition` option). */
  readonly expositionChoice: ExpositionChoice;
  /** Every rendering of this reader, HTTP scrapes and `metricsBytes()` alike: those that overlap share one. */
  readonly sharedRenderings = new SharedRenderings((format: ExpositionFormat) => this.exposition(format));
  /** The protobuf renderings, shared the same way. */
  private readonly protobufRenderings = new SharedRenderings((_format: 'protobuf') => this.protobufExposition());
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
   * `enginePull`'s does) is rendered through the generic serializer, which joins families of the
   * same name into one block.
   */
  attachStore(store: SeriesStore, producer?: OmniMetricProducer): void {
    const families = store.families.map(({ family, streamName }) => ({
      name: family.name,
      type: family.type,
      help: family.help,
      streamName,
      omitCreated: family.omitCreated,
    }));
    this.store = {
      series: store,
      producer: producer ?? new OmniMetricProducer({ store, exponentialHistograms: false }),
      families,
      names: new Set(families.map((family) => family.name)),
      generic: producer !== undefined,
    };
  }

  /** Stops reading the store it was given (a registration that failed after attaching it). */
  detachStore(): void {
    this.store = undefined;
  }

  /** Replaces the announced families. */
  declareFamilies(families: readonly DeclaredFamily[]): void {
    this.declared = families;
  }

  protected override onInitialized(): void {
    this.inProvider = true;
  }

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
   * A rendering of the Prometheus protobuf exposition, when this reader offers it: only when some
   * family keeps native histograms (the text formats carry everything else, as vLLM serves it),
   * and not with scope labels or another producer's series (which only the text path prints).
   */
  protobufRendering(gzip: boolean): SharedRendering | undefined {
    const store = this.store;
    if (store === undefined || this.options.withScopeLabels) return undefined;
    if (store.generic && !(store.producer instanceof EnginePullProducer)) return undefined;
    if (!store.series.families.some((family) => family.native !== undefined)) return undefined;
    return this.protobufRenderings.rendering('protobuf', gzip);
  }

  /** The exact protobuf bytes a scrape asking for them would receive, or undefined when this reader does not offer them. */
  protobufBytes(): Promise<Buffer> | undefined {
    return this.protobufRendering(false)?.bytes();
  }

  /**
   * The store's families encoded directly (native buckets included); then the rest of what the
   * text exposition prints (`target_info`, the application's own instruments), encoded from the
   * same collected families the text serializer prints, so both formats carry the same families.
   */
  private async protobufExposition(): Promise<ExpositionPieces> {
    const store = this.store;
    if (store === undefined) return [];
    if (store.producer instanceof EnginePullProducer) return this.pulledProtobufExposition(store.series, store.names, store.producer);
    const { resourceMetrics, errors } = await this.collectSdk();
    reportErrors(errors);
    const [targetInfo, own] = this.collectedProtobuf(resourceMetrics, store.names);
    return (function* (): Generator<Buffer, void, undefined> {
      yield* storeProtobuf(store.series);
      if (targetInfo.length > 0) yield targetInfo;
      if (own.length > 0) yield own;
    })();
  }

  /**
   * With pulled engines: the families only the package records (the pipeline's), native buckets and
   * exemplars included, straight from the store; the families engines print too, joined with the
   * engines' series, and those only engines print, from their text exposition read back (classic
   * buckets, as pulled); then `target_info` and the application's instruments, as without engines.
   */
  private async pulledProtobufExposition(series: SeriesStore, storeNames: ReadonlySet<string>, producer: EnginePullProducer): Promise<ExpositionPieces> {
    const [{ resourceMetrics, errors }, pulled] = await Promise.all([this.collectSdk(), producer.pulled()]);
    reportErrors(errors);
    const direct = new Set(series.families.filter((family) => !printedByEngines(family)).map((family) => family.family.name));
    let text = '';
    for (const piece of storeExposition(series, { format: 'text', createdSeries: false }, joinedWithStore(pulled.exposition, pulled.replicas))) text += piece;
    for (const piece of pulledOnlyFamilies(pulled.exposition, storeNames, false, false)) text += piece;
    const joined = parsedFamiliesProtobuf(parseExposition(text).filter((family) => !direct.has(family.name)));
    const [targetInfo, own] = this.collectedProtobuf(resourceMetrics, new Set([...storeNames, ...pulled.exposition.families.keys()]));
    return (function* (): Generator<Buffer, void, undefined> {
      yield* storeProtobuf(series, (family) => direct.has(family.family.name));
      for (const piece of [targetInfo, joined, own]) if (piece.length > 0) yield piece;
    })();
  }

  /** `target_info` (empty when off) and the application's own families, encoded from the SDK's collected points; streams named like a `reserved` family are left out. */
  private collectedProtobuf(resourceMetrics: ResourceMetrics, reserved: ReadonlySet<string>): [targetInfo: Buffer, own: Buffer] {
    const targetInfo = collectedFamiliesProtobuf(this.options.withTargetInfo ? [targetInfoFamily(resourceMetrics)] : []);
    return [targetInfo, collectedFamiliesProtobuf(collectedFamilies(resourceMetrics, this.declared, false, reserved))];
  }

  /**
   * The exposition as pieces produced lazily: the SDK's streams are collected first (the one
   * asynchronous step), then the store's families are rendered piece by piece as the caller pulls
   * them, then the SDK's own families follow.
   */
  private async exposition(format: ExpositionFormat, createdSeries = this.createdSeries): Promise<ExpositionPieces> {
    const serializeOptions = {
      format,
      withTargetInfo: this.options.withTargetInfo,
      withScopeLabels: this.options.withScopeLabels,
      createdSeries,
    };
    const store = this.store;
    // The pulled engines' series are rendered once per pull and printed in the store's blocks; with families declared
    // to the reader as well, the generic path keeps the declared order among them.
    const pulling = store?.producer instanceof EnginePullProducer && this.declared.length === 0 ? store.producer : undefined;
    // Scope labels are not part of the store's pre-rendered label blocks, nor are series another producer adds: those take the generic path.
    if (store === undefined || (store.generic && pulling === undefined) || this.options.withScopeLabels) {
      const { resourceMetrics, errors } = await this.collect();
      reportErrors(errors);
      return prometheusPieces(resourceMetrics, [...(store?.families ?? []), ...this.declared], serializeOptions);
    }
    const [{ resourceMetrics, errors }, pulled] = await Promise.all([this.collectSdk(), pulling?.pulled()]);
    reportErrors(errors);
    const openMetrics = format === 'openmetrics';
    const targetInfo = this.options.withTargetInfo ? targetInfoText(resourceMetrics, openMetrics) : '';
    const declared = this.declared;
    // A stream of the application's named like a pulled family would print that family twice: it is left out, as one named like the store's.
    const reserved = pulled === undefined ? store.names : new Set([...store.names, ...pulled.exposition.families.keys()]);
    return (function* (): Generator<string, void, undefined> {
      if (targetInfo !== '') yield targetInfo;
      yield* storeExposition(store.series, { format, createdSeries }, pulled && joinedWithStore(pulled.exposition, pulled.replicas));
      if (pulled !== undefined) yield* pulledOnlyFamilies(pulled.exposition, store.names, openMetrics, createdSeries);
      const rest = `${serializeFamilies(resourceMetrics, declared, serializeOptions, reserved)}${openMetrics ? '# EOF\n' : ''}`;
      if (rest !== '') yield rest;
    })();
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

  protected override async onForceFlush(): Promise<void> {
    // Pull reader: nothing is buffered.
  }

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
