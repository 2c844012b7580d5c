import type { Attributes } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { FamilyKey, ResolvedCatalog, ResolvedFamily } from '../views/catalog/catalog';
import { creationClock, FamilySeries, type LabelValue } from '../views/store/family-series';
import { NOOP_SERIES, type BoundSeries } from '../views/store/series';
import { SeriesStore, type SeriesStoreOptions } from '../views/store/series-store';
import { OMNI_METER_NAME, PACKAGE_VERSION } from '../views/views';

/**
 * Where a contender's series live: given a family and a label set, the series `record` writes to.
 * The package's own recorders and hooks run unchanged on top; only this differs.
 */
export type SeriesFactory = (family: ResolvedFamily, attributes: Attributes) => BoundSeries;

/**
 * A `SeriesStore` whose series come from another library: recorders, stats code and hooks are
 * the package's, so a contender's cost differs from ours only by what a record costs.
 */
export class RebindingStore extends SeriesStore {
  private readonly rebound: ReadonlyMap<FamilyKey, RebindingFamily>;

  constructor(catalog: ResolvedCatalog, options: SeriesStoreOptions, factory: SeriesFactory) {
    super(catalog, options);
    this.rebound = new Map(catalog.families.map((family) => [family.key, new RebindingFamily(family, factory, options.modelName)]));
  }

  override family(key: FamilyKey): FamilySeries | undefined {
    return this.rebound.get(key);
  }

  override bind(key: FamilyKey, values: readonly LabelValue[], extraLabels?: Attributes): BoundSeries {
    return this.rebound.get(key)?.bind(values, extraLabels) ?? NOOP_SERIES;
  }
}

class RebindingFamily extends FamilySeries {
  private readonly cache = new Map<string, BoundSeries>();

  constructor(
    family: ResolvedFamily,
    private readonly factory: SeriesFactory,
    modelName: string,
  ) {
    super(family, family.name, { modelName, cardinalityLimit: Infinity, creationTime: creationClock(Date.now) });
  }

  override bind(values: readonly LabelValue[], extraLabels?: Attributes): BoundSeries {
    const key = JSON.stringify([values, extraLabels ?? null]);
    let series = this.cache.get(key);
    if (series === undefined) {
      const attributes: Attributes = { ...extraLabels };
      this.family.labels.forEach((name, i) => {
        attributes[name] = String(values[i]);
      });
      series = this.factory(this.family, Object.freeze(attributes));
      this.cache.set(key, series);
    }
    return series;
  }
}

/** prom-client, the way its users write: one metric per family, a cached child per label set. */
export function promClientSeries(registry: Registry): SeriesFactory {
  const metrics = new Map<string, Counter | Gauge | Histogram>();
  return (family, attributes) => {
    const labelNames = Object.keys(attributes).sort();
    let metric = metrics.get(family.name);
    if (metric === undefined) {
      const common = { name: family.name, help: family.help, labelNames, registers: [registry] };
      metric =
        family.type === 'counter'
          ? new Counter(common)
          : family.type === 'gauge'
            ? new Gauge(common)
            : new Histogram({ ...common, buckets: [...(family.buckets ?? [])] });
      metrics.set(family.name, metric);
    }
    const labels = Object.fromEntries(labelNames.map((name) => [name, String(attributes[name])]));
    if (metric instanceof Counter) {
      const child = metric.labels(labels);
      return { record: (value) => child.inc(value) };
    }
    if (metric instanceof Gauge) {
      const child = metric.labels(labels);
      return { record: (value) => child.set(value) };
    }
    const child = metric.labels(labels);
    return { record: (value) => child.observe(value) };
  };
}

/** A reader that only collects: it keeps the SDK's cumulative storage alive, as a Prometheus reader does. */
export class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * Plain OpenTelemetry SDK instruments with a frozen attribute object per series, on the package's
 * meter (so `createOmniViews` names them): the package's path before the store.
 */
export function otelSdkSeries(provider: MeterProvider): SeriesFactory {
  const meter = provider.getMeter(OMNI_METER_NAME, PACKAGE_VERSION);
  const instruments = new Map<string, (value: number, attributes: Attributes) => void>();
  const instrumentOf = (family: ResolvedFamily): ((value: number, attributes: Attributes) => void) => {
    let record = instruments.get(family.name);
    if (record === undefined) {
      const options = { description: family.help, advice: { explicitBucketBoundaries: [...(family.buckets ?? [])] } };
      if (family.type === 'counter') {
        const counter = meter.createCounter(family.instrumentName, options);
        record = (value, attributes) => counter.add(value, attributes);
      } else if (family.type === 'gauge') {
        const gauge = meter.createGauge(family.instrumentName, options);
        record = (value, attributes) => gauge.record(value, attributes);
      } else {
        const histogram = meter.createHistogram(family.instrumentName, options);
        record = (value, attributes) => histogram.record(value, attributes);
      }
      instruments.set(family.name, record);
    }
    return record;
  };
  return (family, attributes) => {
    const record = instrumentOf(family);
    return { record: (value) => record(value, attributes) };
  };
}

/** Records nothing: the floor of what the hooks and the stats code cost by themselves. */
export const noopSeries: SeriesFactory = () => NOOP_SERIES;
