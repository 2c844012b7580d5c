import { ValueType, type AttributeValue } from '@opentelemetry/api';
import { emptyResource } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType, type DataPoint, type Histogram, type MetricData, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { OMNI_METER_NAME } from '../views/views';

/**
 * Exposition families as plain JSON, small enough for the `cluster` IPC channel: per family its
 * name, kind, description and unit, and per series its attributes, value, creation time and, when
 * it keeps them, native buckets and exemplars. A cluster worker sends one per collection; the engine
 * pull reads each engine's exposition into one; both are merged and written as any other source.
 */
export interface ClusterSnapshot {
  readonly metrics: readonly SnapshotMetric[];
}

/** A snapshot without streams: nothing retired yet, or an engine not read yet. */
export const EMPTY_SNAPSHOT: ClusterSnapshot = Object.freeze({ metrics: Object.freeze([]) });

/** `updowncounter` is a non-monotonic sum: a level, merged like a gauge. */
export type SnapshotKind = 'counter' | 'updowncounter' | 'gauge' | 'histogram';

export interface SnapshotMetric {
  /** The exposed name (counters end in `_total`). */
  readonly name: string;
  readonly kind: SnapshotKind;
  readonly description: string;
  readonly unit: string;
  /** The name as its source gave it, when that is not a legacy Prometheus name (see `FamilyMeta.sourceStem`). */
  readonly sourceStem?: string;
  readonly points: readonly SnapshotPoint[];
}

/** An exemplar: the observation, when (seconds since the epoch), and its trace (W3C lowercase hex ids). */
export interface SnapshotExemplar {
  readonly value: number;
  readonly timestampSeconds: number;
  readonly traceId: string;
  readonly spanId: string;
}

/** Consecutive native buckets: the index of the first, and one count per bucket. */
export interface SnapshotBucketRun {
  readonly offset: number;
  readonly counts: readonly number[];
}

/** Native (sparse exponential) buckets, as Prometheus numbers them; they count the same observations as the classic buckets. */
export interface SnapshotNative {
  readonly schema: number;
  readonly zeroThreshold: number;
  readonly zeroCount: number;
  readonly positive: SnapshotBucketRun;
  readonly negative: SnapshotBucketRun;
}

export interface SnapshotHistogram {
  readonly boundaries: readonly number[];
  /** One count per bucket (not cumulative): `boundaries.length + 1` entries, the last for `+Inf`. */
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
  readonly native?: SnapshotNative;
  /** Per classic bucket, its latest exemplar (`null` where none): `counts.length` entries. */
  readonly exemplars?: ReadonlyArray<SnapshotExemplar | null>;
}

export interface SnapshotPoint {
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** A number, or `null` where JSON could not carry a `NaN` / infinity. */
  readonly value: number | null | SnapshotHistogram;
  /** The point's start time, seconds since the epoch: a cumulative series' creation (`_created`). */
  readonly startTime?: number;
  /** A counter's latest exemplar. */
  readonly exemplar?: SnapshotExemplar;
}

/** A snapshot as OpenTelemetry's `ResourceMetrics` (one scope, empty resource), for push readers: classic buckets, no exemplars. */
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
