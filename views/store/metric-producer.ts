import { hrTime } from '@opentelemetry/core';
import { ValueType, type HrTime } from '@opentelemetry/api';
import { emptyResource } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  InstrumentType,
  type AggregationTemporalitySelector,
  type CollectionResult,
  type DataPoint,
  type ExponentialHistogram,
  type Histogram,
  type MetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import type { FamilyType } from '../catalog/family-definition';
import { OMNI_METER_NAME, PACKAGE_VERSION, type NamingScheme } from '../views';
import type { FamilySeries } from './family-series';
import type { CounterSeries, GaugeSeries, HistogramSeries, StoredSeries } from './series';
import type { SeriesStore } from './series-store';
import { checkObject, OmniOptionError, shown } from '../common/option-checks';
import { ExponentialPoints } from './exponential-points';
import type { NativeHistogramSeries } from './native-histogram-series';

/** What an `OmniMetricProducer` (and `handle.createMetricProducer()`) takes: the reader's temporality and whether it carries exponential points. */
export interface MetricProducerOptions {
  /**
   * The store to read; registration attaches it when the producer was created first.
   * @internal
   */
  readonly store?: SeriesStore;
  /**
   * The temporality of the reader this producer serves, as its exporter selects it
   * (`exporter.selectAggregationTemporality`); default cumulative.
   */
  readonly aggregationTemporalitySelector?: AggregationTemporalitySelector;
  /**
   * Families that keep native buckets are produced as exponential histograms (true), or as their
   * classic buckets (false), which every reader carries. Default: true when an
   * `aggregationTemporalitySelector` is given (a push exporter's: OTLP and the console exporter
   * carry exponential points), false otherwise (a pull reader such as the SDK's
   * `PrometheusExporter`, whose text has no exponential histogram, or the `LogMetricExporter`).
   */
  readonly exponentialHistograms?: boolean;
}

/** What a delta reader last received of one series. */
interface Baseline {
  value: number;
  count: number;
  sum: number;
  counts?: number[];
}

const INSTRUMENT_TYPES: Readonly<Record<FamilyType, InstrumentType>> = {
  counter: InstrumentType.COUNTER,
  gauge: InstrumentType.GAUGE,
  histogram: InstrumentType.HISTOGRAM,
};

/**
 * The series store as an OpenTelemetry `MetricProducer`: give one to each reader in its
 * `metricProducers` (one per reader: a delta reader's producer remembers what it last sent).
 * Cumulative points start at the series' creation; delta points cover the time since the
 * previous collection and leave out series that did not change (a gauge: whose value did not
 * change), as the SDK leaves out series nobody recorded.
 */
export class OmniMetricProducer implements MetricProducer {
  private store: SeriesStore | undefined;
  private readonly selectTemporality: AggregationTemporalitySelector;
  private readonly baselines = new WeakMap<StoredSeries, Baseline>();
  private lastCollection: HrTime | undefined;
  private readonly exponential: ExponentialPoints | undefined;

  constructor(options: MetricProducerOptions = {}) {
    checkObject(options, 'OmniMetricProducer options', ['store', 'aggregationTemporalitySelector', 'exponentialHistograms']);
    if (options.exponentialHistograms !== undefined && typeof options.exponentialHistograms !== 'boolean') {
      throw new OmniOptionError('exponentialHistograms', `exponentialHistograms must be a boolean; got ${shown(options.exponentialHistograms)}`);
    }
    if (options.aggregationTemporalitySelector !== undefined && typeof options.aggregationTemporalitySelector !== 'function') {
      throw new OmniOptionError(
        'aggregationTemporalitySelector',
        `aggregationTemporalitySelector must be a function (an exporter's selectAggregationTemporality); got ${shown(options.aggregationTemporalitySelector)}`,
      );
    }
    // A reader that asks for no temporality is a pull reader: one that may not know exponential points gets classic buckets.
    const exponential = options.exponentialHistograms ?? options.aggregationTemporalitySelector !== undefined;
    this.exponential = exponential ? new ExponentialPoints() : undefined;
    this.store = options.store;
    this.selectTemporality = options.aggregationTemporalitySelector ?? (() => AggregationTemporality.CUMULATIVE);
  }

  /**
   * Reads `store` from now on (`registerOmniMetrics` does this for the producers it is given).
   * @internal
   */
  attach(store: SeriesStore): void {
    this.store = store;
  }

  /** The store's families at the temporality the reader selects (delta: only what changed since the previous collection); none before a store is attached. */
  async collect(): Promise<CollectionResult> {
    const metrics: MetricData[] = [];
    const now = hrTime();
    if (this.store !== undefined) {
      this.store.runCollectHooks();
      const naming = this.store.options.naming ?? 'vllm';
      for (const family of this.store.families) {
        const metric = this.metricOf(family, naming, now);
        if (metric !== undefined) metrics.push(metric);
      }
    }
    this.lastCollection = now;
    return {
      resourceMetrics: { resource: emptyResource(), scopeMetrics: [{ scope: { name: OMNI_METER_NAME, version: PACKAGE_VERSION }, metrics }] },
      errors: [],
    };
  }

  private metricOf(family: FamilySeries, naming: NamingScheme, now: HrTime): MetricData | undefined {
    if (family.series.length === 0) return undefined;
    const type = family.family.type;
    const temporality = this.selectTemporality(INSTRUMENT_TYPES[type]);
    const delta = temporality === AggregationTemporality.DELTA;
    const descriptor = {
      name: family.streamName,
      description: family.family.help,
      // The `vllm` scheme sets no unit: a collector's Prometheus translation would append one (`_s_seconds`).
      unit: naming === 'otel' ? family.family.unit : '',
      valueType: ValueType.DOUBLE,
    };
    const base = { descriptor, aggregationTemporality: temporality };
    if (type === 'histogram' && family.native !== undefined && this.exponential !== undefined && this.exponentialFor(family)) {
      const exponential = this.exponential;
      const dataPoints: Array<DataPoint<ExponentialHistogram>> = [];
      for (const series of family.series as NativeHistogramSeries[]) {
        const point = delta ? exponential.delta(series, this.lastCollection, now) : exponential.cumulative(series, now);
        if (point !== undefined) dataPoints.push(point);
      }
      return dataPoints.length === 0 ? undefined : { ...base, dataPointType: DataPointType.EXPONENTIAL_HISTOGRAM, dataPoints };
    }
    if (type === 'histogram') {
      const boundaries = Array.from(family.bounds);
      const dataPoints: Array<DataPoint<Histogram>> = [];
      for (const series of family.series as HistogramSeries[]) {
        const point = delta ? this.histogramDelta(series, boundaries, now) : histogramPoint(series, boundaries, series.createdTime, now);
        if (point !== undefined) dataPoints.push(point);
      }
      return dataPoints.length === 0 ? undefined : { ...base, dataPointType: DataPointType.HISTOGRAM, dataPoints };
    }
    const dataPoints: Array<DataPoint<number>> = [];
    for (const series of family.series as Array<CounterSeries | GaugeSeries>) {
      const point = delta ? this.numberDelta(series, type === 'counter', now) : numberPoint(series, series.value, series.createdTime, now);
      if (point !== undefined) dataPoints.push(point);
    }
    if (dataPoints.length === 0) return undefined;
    return type === 'counter'
      ? { ...base, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints }
      : { ...base, dataPointType: DataPointType.GAUGE, dataPoints };
  }

  /**
   * Whether a family with native buckets is produced as exponential points, when this producer makes them at all.
   * @internal
   */
  protected exponentialFor(_family: FamilySeries): boolean {
    return true;
  }

  /** A counter's increase, or a gauge's new value, since the previous collection; nothing when it did not change. */
  private numberDelta(series: CounterSeries | GaugeSeries, monotonic: boolean, now: HrTime): DataPoint<number> | undefined {
    const { baseline, start } = this.baselineOf(series);
    if (series.value === baseline.value) return undefined;
    const point = numberPoint(series, monotonic ? series.value - baseline.value : series.value, start, now);
    baseline.value = series.value;
    return point;
  }

  private histogramDelta(series: HistogramSeries, boundaries: number[], now: HrTime): DataPoint<Histogram> | undefined {
    const { baseline, start } = this.baselineOf(series);
    if (series.count === baseline.count) return undefined;
    const current = series.bucketCounts();
    const previous = (baseline.counts ??= new Array<number>(current.length).fill(0));
    const counts = current.map((count, i) => count - (previous[i] ?? 0));
    const point: DataPoint<Histogram> = {
      attributes: series.attributes,
      startTime: start,
      endTime: now,
      value: { buckets: { boundaries, counts }, count: series.count - baseline.count, sum: series.sum - baseline.sum, min: undefined, max: undefined },
    };
    baseline.counts = current;
    baseline.count = series.count;
    baseline.sum = series.sum;
    return point;
  }

  /** A delta series' baseline, and where its next point starts: its creation, or the previous collection. */
  private baselineOf(series: StoredSeries): { baseline: Baseline; start: HrTime } {
    const existing = this.baselines.get(series);
    if (existing !== undefined && this.lastCollection !== undefined) return { baseline: existing, start: this.lastCollection };
    const baseline: Baseline = existing ?? { value: 0, count: 0, sum: 0 };
    this.baselines.set(series, baseline);
    return { baseline, start: series.createdTime };
  }
}

function numberPoint(series: StoredSeries, value: number, startTime: HrTime, endTime: HrTime): DataPoint<number> {
  return { attributes: series.attributes, startTime, endTime, value };
}

function histogramPoint(series: HistogramSeries, boundaries: number[], startTime: HrTime, endTime: HrTime): DataPoint<Histogram> {
  return {
    attributes: series.attributes,
    startTime,
    endTime,
    value: { buckets: { boundaries, counts: series.bucketCounts() }, count: series.count, sum: series.sum, min: undefined, max: undefined },
  };
}
