import type { Attributes } from '@opentelemetry/api';
import type { FamilyKey, ResolvedCatalog, ResolvedFamily } from '../catalog/catalog';
import { WarnOnce } from '../common/diag-warnings';
import { checkObject, optionKeys, shown } from '../common/option-checks';
import { EngineRelabelProcessor } from '../engine-relabel-processor';
import type { StageReplicaMap } from '../stage-replica-map';
import { streamNameFor, type NamingScheme } from '../views';
import { keepsExemplars } from '../catalog/exemplar-families';
import { ExemplarScope } from './exemplar-scope';
import { creationClock, FamilySeries, type LabelValue } from './family-series';
import { nativeBucketConfigOf, type NativeHistogramSettings } from './native-histogram-settings';
import { NOOP_SERIES, type BoundSeries, type StoredSeries } from './series';

/** The OpenTelemetry SDK's default, kept: series per family before the overflow series. */
export const DEFAULT_CARDINALITY_LIMIT = 2000;

export interface SeriesStoreOptions {
  readonly modelName: string;
  /** Stream names readers see; default `vllm` (the exposed names). */
  readonly naming?: NamingScheme;
  /** Label sets per family before new ones fold into one overflow series; default 2000. */
  readonly cardinalityLimit?: number;
  /** Resolves vLLM's `engine` label in `bindAttributes`. */
  readonly stageReplicaMap?: StageReplicaMap;
  /** Wall clock in milliseconds since the epoch (series creation times); injectable for tests. */
  readonly now?: () => number;
  /** Histogram families that keep native (sparse exponential) buckets too (see `resolveNativeHistograms`); default none. */
  readonly nativeHistograms?: NativeHistogramSettings;
  /**
   * Keep exemplars (the latest observation's value, time and trace per bucket) on the latency
   * histograms and request counters: `true`, or `'when-traced'` once a tracer provider is
   * registered (`ExemplarMode`); default off. See docs/exemplars.md.
   */
  readonly exemplars?: boolean | 'when-traced';
}

const SERIES_STORE_OPTION_KEYS = optionKeys<SeriesStoreOptions>({
  modelName: true,
  naming: true,
  cardinalityLimit: true,
  stageReplicaMap: true,
  now: true,
  nativeHistograms: true,
  exemplars: true,
});

/**
 * Every series of the catalog's families, owned by the package: OpenTelemetry's bound
 * instruments. Attributes are processed and the cardinality checked once, when a series is
 * bound; recording then touches the series' own cell. Readers see the store through
 * `OmniMetricProducer`; the Prometheus exposition renders it directly.
 */
export class SeriesStore {
  /** Families in catalog order (the exposition's order). */
  readonly families: readonly FamilySeries[];
  readonly cardinalityLimit: number;
  /** Whether the latency histograms and request counters keep exemplars: always, or once a tracer provider is registered. */
  readonly exemplars: boolean | 'when-traced';
  /**
   * With exemplars on, the trace and time they are taken at: whoever records a request's values
   * outside its own context (the hooks, the pipeline observer) names its trace here.
   */
  readonly exemplarScope: ExemplarScope | undefined;
  private readonly byKey: ReadonlyMap<FamilyKey, FamilySeries>;
  private readonly relabel?: EngineRelabelProcessor;
  private readonly collectHooks = new Set<() => void>();
  private readonly failedHooks = new WarnOnce();

  constructor(
    readonly catalog: ResolvedCatalog,
    readonly options: SeriesStoreOptions,
  ) {
    checkObject(options, 'SeriesStore options', SERIES_STORE_OPTION_KEYS);
    const cardinalityLimit = options.cardinalityLimit ?? DEFAULT_CARDINALITY_LIMIT;
    this.cardinalityLimit = cardinalityLimit;
    this.exemplars = options.exemplars === true || options.exemplars === 'when-traced' ? options.exemplars : false;
    this.exemplarScope = this.exemplars === false ? undefined : new ExemplarScope(this.exemplars === true ? 'on' : this.exemplars);
    if (!Number.isInteger(cardinalityLimit) || cardinalityLimit < 1) {
      throw new RangeError(`cardinalityLimit must be a positive integer; got ${shown(cardinalityLimit)}`);
    }
    const naming = options.naming ?? 'vllm';
    const nativeHistograms = options.nativeHistograms;
    const context = {
      modelName: options.modelName,
      cardinalityLimit,
      creationTime: creationClock(options.now ?? wallClockMillis),
      nativeBuckets: nativeHistograms && ((family: ResolvedFamily) => nativeBucketConfigOf(nativeHistograms, family)),
      keepsExemplars: this.exemplarScope && keepsExemplars,
      exemplarScope: this.exemplarScope,
    };
    this.families = catalog.families.map((family) => new FamilySeries(family, streamNameFor(family, naming), context));
    this.byKey = new Map(this.families.map((family) => [family.family.key, family]));
    if (options.stageReplicaMap) {
      this.relabel = new EngineRelabelProcessor(options.stageReplicaMap);
      // A replica that leaves takes its series with it, from the next collection on.
      options.stageReplicaMap.onChange((change) => {
        if (change.kind === 'removed') this.removeReplicaSeries(String(change.stage), String(change.replica));
      });
    }
  }

  /** Whether this configuration registers the family (recorders skip work for families that are off). */
  has(key: FamilyKey): boolean {
    return this.byKey.has(key);
  }

  family(key: FamilyKey): FamilySeries | undefined {
    return this.byKey.get(key);
  }

  /** The series of `key` with these label values (in `family.labels` order); a no-op series when the family is off. */
  bind(key: FamilyKey, values: readonly LabelValue[], extraLabels?: Attributes): BoundSeries {
    return this.byKey.get(key)?.bind(values, extraLabels) ?? NOOP_SERIES;
  }

  /**
   * Runs `hook` right before every collection of the store (each scrape, each export), for
   * values that are read rather than recorded: the process's memory, its open files. Returns the
   * function that removes it.
   */
  addCollectHook(hook: () => void): () => void {
    this.collectHooks.add(hook);
    return () => {
      this.collectHooks.delete(hook);
    };
  }

  /**
   * What every reader of the store calls before it reads the series (and the moment a scope still
   * waiting for a tracer provider looks again). A hook that throws is reported once and the
   * collection goes on: it leaves its values as they were.
   */
  runCollectHooks(): void {
    this.exemplarScope?.collected();
    for (const hook of this.collectHooks) {
      try {
        hook();
      } catch (error) {
        const name = hook.name || 'anonymous';
        this.failedHooks.warn(name, `the collect hook ${name} threw; the values it refreshes are left as they were`, error);
      }
    }
  }

  /**
   * Removes every series of one replica: those labelled with its `stage` and `replica`, and the
   * transfer hops that start or end at it. Returns how many were removed.
   */
  removeReplicaSeries(stage: string, replica: string): number {
    const ofReplica = (series: StoredSeries): boolean =>
      (series.labelValue('stage') === stage && series.labelValue('replica') === replica) ||
      (series.labelValue('from_stage') === stage && series.labelValue('from_replica') === replica) ||
      (series.labelValue('to_stage') === stage && series.labelValue('to_replica') === replica);
    let removed = 0;
    for (const family of this.families) removed += family.removeWhere(ofReplica);
    return removed;
  }

  /**
   * The series for an attribute set recorded the vLLM way (`{model_name, engine: "3"}`): the
   * engine → (stage, replica) processor runs here, once, then the values are taken by the
   * family's label names. An info family's other attributes become its extra labels.
   */
  bindAttributes(key: FamilyKey, attributes: Attributes): BoundSeries {
    const family = this.byKey.get(key);
    if (family === undefined) return NOOP_SERIES;
    const processed = this.relabel && family.family.engineLabel ? this.relabel.process(attributes) : attributes;
    const labels = family.family.labels;
    const values = labels.map((name) => String(processed[name] ?? ''));
    let extra: Attributes | undefined;
    if (family.family.info) {
      extra = Object.fromEntries(Object.entries(processed).filter(([name]) => !labels.includes(name)));
    }
    return family.bind(values, extra);
  }
}

function wallClockMillis(): number {
  return performance.timeOrigin + performance.now();
}
