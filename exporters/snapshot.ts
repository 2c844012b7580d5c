import { packageDiag } from '../views/package-diag';
import { ValueType, type AttributeValue } from '@opentelemetry/api';
import { emptyResource } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType, type DataPoint, type Histogram, type MetricData, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { OMNI_METER_NAME } from '../views/views';
import { prometheusType } from './samples';

/**
 * A collection's cumulative metrics as plain JSON, small enough for the `cluster` IPC channel:
 * per stream its name, kind, description and unit, and per series its attributes and value.
 * Scopes are flattened (the Prometheus exposition merges them too). A cluster worker sends one
 * per collection; the engine pull reads each engine's exposition into one, so both are merged
 * and rendered by the same code.
 */
export interface ClusterSnapshot {
  readonly metrics: readonly SnapshotMetric[];
}

/** A snapshot without streams: nothing retired yet, or an engine not read yet. */
export const EMPTY_SNAPSHOT: ClusterSnapshot = Object.freeze({ metrics: Object.freeze([]) });

/** `updowncounter` is a non-monotonic sum: a level, merged like a gauge. */
export type SnapshotKind = 'counter' | 'updowncounter' | 'gauge' | 'histogram';

export interface SnapshotMetric {
  readonly name: string;
  readonly kind: SnapshotKind;
  readonly description: string;
  readonly unit: string;
  readonly points: readonly SnapshotPoint[];
}

export interface SnapshotHistogram {
  readonly boundaries: readonly number[];
  /** One count per bucket (not cumulative): `boundaries.length + 1` entries, the last for `+Inf`. */
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

export interface SnapshotPoint {
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** A number, or `null` where JSON could not carry a `NaN` / infinity. */
  readonly value: number | null | SnapshotHistogram;
  /** The point's start time, seconds since the epoch: a cumulative series' creation (`_created`). */
  readonly startTime?: number;
}

/** The snapshot of one collection. Exponential histograms (never created by the catalog) are skipped. */
export function takeSnapshot(resourceMetrics: ResourceMetrics): ClusterSnapshot {
  const metrics: SnapshotMetric[] = [];
  for (const scopeMetrics of resourceMetrics.scopeMetrics) {
    for (const metric of scopeMetrics.metrics) {
      const kind = snapshotKind(metric);
      if (kind === undefined) {
        packageDiag.warn(`omni-otel-metrics: ${metric.descriptor.name} is an exponential histogram; the cluster aggregate skips it`);
        continue;
      }
      const points = (metric.dataPoints as Array<DataPoint<number> | DataPoint<Histogram>>).map((point) => ({
        attributes: { ...(point.attributes as Record<string, AttributeValue>) },
        startTime: point.startTime[0] + point.startTime[1] / 1e9,
        value:
          typeof point.value === 'number'
            ? point.value
            : {
                boundaries: [...point.value.buckets.boundaries],
                counts: [...point.value.buckets.counts],
                sum: point.value.sum ?? 0,
                count: point.value.count,
              },
      }));
      metrics.push({ name: metric.descriptor.name, kind, description: metric.descriptor.description, unit: metric.descriptor.unit, points });
    }
  }
  return { metrics };
}

/** The Prometheus type, except that a non-monotonic sum stays an up-down counter so it round-trips. */
function snapshotKind(metric: MetricData): SnapshotKind | undefined {
  return metric.dataPointType === DataPointType.SUM && !metric.isMonotonic ? 'updowncounter' : prometheusType(metric);
}

/** A snapshot as the `ResourceMetrics` the Prometheus serializer takes (one scope, empty resource). */
export function snapshotToResourceMetrics(snapshot: ClusterSnapshot, now: number = Date.now()): ResourceMetrics {
  const time: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1_000_000];
  const metrics = snapshot.metrics.map((metric): MetricData => {
    const base = {
      descriptor: { name: metric.name, description: metric.description, unit: metric.unit, valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
    };
    const point = <T>(p: SnapshotPoint, value: T): DataPoint<T> => ({
      // A start time OTLP cannot carry (NaN, negative, past int64 nanoseconds) would fail the whole export: the point's own time instead.
      startTime: p.startTime === undefined || !(p.startTime >= 0 && p.startTime < MAX_START_SECONDS) ? time : secondsToHrTime(p.startTime),
      endTime: time,
      attributes: p.attributes,
      value,
    });
    if (metric.kind === 'histogram') {
      return {
        ...base,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: metric.points.map((p) => {
          const h = p.value as SnapshotHistogram;
          return point<Histogram>(p, {
            buckets: { boundaries: [...h.boundaries], counts: [...h.counts] },
            sum: numberOrNaN(h.sum),
            count: h.count,
          });
        }),
      };
    }
    const dataPoints = metric.points.map((p) => point(p, numberOrNaN(p.value as number | null)));
    return metric.kind === 'gauge'
      ? { ...base, dataPointType: DataPointType.GAUGE, dataPoints }
      : { ...base, dataPointType: DataPointType.SUM, isMonotonic: metric.kind === 'counter', dataPoints };
  });
  return { resource: emptyResource(), scopeMetrics: [{ scope: { name: OMNI_METER_NAME }, metrics }] };
}

/** 2262-04-11: nanoseconds since the epoch past this leave int64. */
const MAX_START_SECONDS = 9_223_372_036;

/** Seconds since the epoch as `[seconds, nanoseconds]`, splitting the way the seconds were joined. */
function secondsToHrTime(seconds: number): [number, number] {
  const whole = Math.floor(seconds);
  return [whole, Math.round((seconds - whole) * 1e9)];
}

/** JSON turns `NaN` and infinities into `null`; they come back as `NaN`. */
export function numberOrNaN(value: number | null | undefined): number {
  return typeof value === 'number' ? value : NaN;
}
