import type { Attributes, HrTime } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  InstrumentType,
  type AggregationTemporalitySelector,
  type CollectionResult,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { LimitedWarning } from '../../views/common/diag-warnings';
import type { FamilySeries } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import { snapshotToResourceMetrics } from '../snapshot';
import { replicaKey } from '../../views/stage-replica-map';
import type { PulledEngines } from './engine-puller';

const typeClash = new LimitedWarning();
/** Series remembered for delta readers before the memory starts over (bounded memory). */
const MAX_BASELINES = 100_000;

/**
 * The store's collection with the pulled engines folded in, as one scope:
 * - the store's series of a pulled replica in families that carry vLLM's `engine` label are
 *   left out: for such a replica the engine's own figures win;
 * - a pulled family the store also has joins the store's stream (same name, same descriptor),
 *   so every reader, the exposition included, sees one family;
 * - the others follow as streams of their own, named as the engine prints them.
 * Pulled points are cumulative; `toDelta` turns them into deltas for a delta reader.
 */
export function mergePulled(own: CollectionResult, pulled: PulledEngines, store: SeriesStore | undefined, toDelta?: DeltaConverter): CollectionResult {
  const [scope, ...otherScopes] = own.resourceMetrics.scopeMetrics;
  if (scope === undefined) return own;
  const byStream = new Map<string, FamilySeries>();
  const byExposed = new Map<string, FamilySeries>();
  for (const family of store?.families ?? []) {
    byStream.set(family.streamName, family);
    byExposed.set(family.family.name, family);
  }
  const metrics: MetricData[] = [];
  const byName = new Map<string, MetricData>();
  for (const metric of scope.metrics) {
    const kept = byStream.get(metric.descriptor.name)?.family.engineLabel ? withoutReplicas(metric, pulled.replicas) : metric;
    if (kept === undefined) continue;
    metrics.push(kept);
    byName.set(kept.descriptor.name, kept);
  }
  const naming = store?.options.naming ?? 'vllm';
  const [pulledScope] = snapshotToResourceMetrics(pulled.snapshot).scopeMetrics;
  for (const incoming of pulledScope?.metrics ?? []) {
    const family = byExposed.get(incoming.descriptor.name);
    const descriptor =
      family === undefined
        ? incoming.descriptor
        : { ...incoming.descriptor, name: family.streamName, description: family.family.help, unit: naming === 'otel' ? family.family.unit : '' };
    const metric = toDelta ? toDelta.convert({ ...incoming, descriptor } as MetricData) : ({ ...incoming, descriptor } as MetricData);
    if (metric === undefined) continue;
    const existing = byName.get(descriptor.name);
    if (existing === undefined) {
      metrics.push(metric);
      byName.set(descriptor.name, metric);
      continue;
    }
    if (existing.dataPointType !== metric.dataPointType || isMonotonic(existing) !== isMonotonic(metric)) {
      typeClash.warn(`${descriptor.name} pulled from an engine is not of the package's type for that family; the pulled series are left out`);
      continue;
    }
    const joined = { ...existing, dataPoints: [...existing.dataPoints, ...metric.dataPoints] } as MetricData;
    metrics[metrics.indexOf(existing)] = joined;
    byName.set(descriptor.name, joined);
  }
  return { ...own, resourceMetrics: { ...own.resourceMetrics, scopeMetrics: [{ ...scope, metrics }, ...otherScopes] } };
}

function isMonotonic(metric: MetricData): boolean | undefined {
  return metric.dataPointType === DataPointType.SUM ? metric.isMonotonic : undefined;
}

function withoutReplicas(metric: MetricData, replicas: ReadonlySet<string>): MetricData | undefined {
  if (replicas.size === 0) return metric;
  const points = (metric.dataPoints as Array<DataPoint<unknown>>).filter(
    ({ attributes }) => !replicas.has(replicaKey(String(attributes.stage), String(attributes.replica))),
  );
  if (points.length === metric.dataPoints.length) return metric;
  return points.length === 0 ? undefined : ({ ...metric, dataPoints: points } as MetricData);
}

interface Baseline {
  readonly value: number;
  readonly count: number;
  readonly sum: number;
  readonly counts: readonly number[];
}

/**
 * Cumulative pulled points as deltas for a delta reader: the change since the previous
 * collection, series that did not change left out (as the store's producer does). A series that
 * went backwards (the engine restarted) starts over. Remembers only the series of the last
 * collection.
 */
export class DeltaConverter {
  private baselines = new Map<string, Baseline>();
  private next = new Map<string, Baseline>();
  private lastCollection: HrTime | undefined;

  constructor(private readonly selector: AggregationTemporalitySelector) {}

  /** Call once per collection, before `convert`. */
  begin(): void {
    this.baselines = this.next;
    // An engine that is down for a while keeps its baselines, so its first delta when back is not its whole total.
    this.next = this.baselines.size < MAX_BASELINES ? new Map(this.baselines) : new Map();
  }

  /** Call once per collection, after `convert`. */
  end(now: HrTime): void {
    this.lastCollection = now;
  }

  convert(metric: MetricData): MetricData | undefined {
    const instrument =
      metric.dataPointType === DataPointType.HISTOGRAM
        ? InstrumentType.HISTOGRAM
        : metric.dataPointType === DataPointType.SUM
          ? InstrumentType.COUNTER
          : undefined;
    if (instrument === undefined || this.selector(instrument) !== AggregationTemporality.DELTA) return metric;
    const points: Array<DataPoint<number> | DataPoint<Histogram>> = [];
    for (const point of metric.dataPoints as Array<DataPoint<number> | DataPoint<Histogram>>) {
      const key = `${metric.descriptor.name}${seriesKey(point.attributes)}`;
      const current = baselineOf(point.value);
      const previous = this.baselines.get(key);
      this.next.set(key, current);
      const restarted =
        previous === undefined || current.count < previous.count || current.value < previous.value || current.counts.length !== previous.counts.length;
      const base = restarted ? undefined : previous;
      if (base !== undefined && current.count === base.count && current.value === base.value) continue;
      const startTime = base !== undefined && this.lastCollection !== undefined ? this.lastCollection : point.startTime;
      points.push(deltaPoint(point, base, startTime));
    }
    if (points.length === 0) return undefined;
    return { ...metric, aggregationTemporality: AggregationTemporality.DELTA, dataPoints: points } as MetricData;
  }
}

function baselineOf(value: number | Histogram): Baseline {
  return typeof value === 'number'
    ? { value, count: 0, sum: 0, counts: [] }
    : { value: 0, count: value.count, sum: value.sum ?? 0, counts: [...value.buckets.counts] };
}

function deltaPoint(point: DataPoint<number> | DataPoint<Histogram>, base: Baseline | undefined, startTime: HrTime): DataPoint<number> | DataPoint<Histogram> {
  if (typeof point.value === 'number') return { ...point, startTime, value: point.value - (base?.value ?? 0) };
  const histogram = point.value;
  return {
    ...point,
    startTime,
    value: {
      ...histogram,
      buckets: { boundaries: histogram.buckets.boundaries, counts: histogram.buckets.counts.map((count, i) => count - (base?.counts[i] ?? 0)) },
      count: histogram.count - (base?.count ?? 0),
      sum: (histogram.sum ?? 0) - (base?.sum ?? 0),
    },
  } as DataPoint<Histogram>;
}

function seriesKey(attributes: Attributes): string {
  return JSON.stringify(
    Object.keys(attributes)
      .sort()
      .map((key) => [key, attributes[key]]),
  );
}
