import type { Attributes } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, type Histogram, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { DecodedRequest } from './otlp-proto';

/**
 * One shape for both sides of the comparison: what the receiver decoded from the wire, and what
 * the SDK itself collected (the ground truth). Points are sorted by attributes, metrics by scope
 * and name, so the two can be compared with `deepEqual`.
 */
export type AttributeValue = string | number | boolean | readonly string[];

export interface PointShape {
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** Nanoseconds since the epoch, as decimal strings. */
  readonly startTimeUnixNano: string;
  readonly timeUnixNano: string;
  readonly value?: number;
  readonly count?: number;
  readonly sum?: number;
  readonly bucketCounts?: readonly number[];
  readonly explicitBounds?: readonly number[];
  readonly min?: number;
  readonly max?: number;
}

export interface MetricShape {
  readonly scope: string;
  readonly name: string;
  readonly description: string;
  readonly unit: string;
  readonly kind: 'sum' | 'gauge' | 'histogram';
  readonly temporality?: 'delta' | 'cumulative';
  readonly monotonic?: boolean;
  readonly points: readonly PointShape[];
}

export interface ExportShape {
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly metrics: readonly MetricShape[];
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// ---------------------------------------------------------------- from the wire (protobufjs objects)

export function fromOtlp(request: DecodedRequest): ExportShape {
  const resourceMetrics = (request.resourceMetrics ?? []) as Obj[];
  if (resourceMetrics.length !== 1) throw new Error(`expected one ResourceMetrics per request, got ${resourceMetrics.length}`);
  const [rm] = resourceMetrics as [Obj];
  const metrics: MetricShape[] = [];
  for (const sm of (rm.scopeMetrics ?? []) as Obj[]) {
    for (const metric of (sm.metrics ?? []) as Obj[]) metrics.push(metricFromOtlp(String(sm.scope?.name ?? ''), metric));
  }
  return { resource: attributesFromOtlp(rm.resource?.attributes), metrics: sortMetrics(metrics) };
}

function metricFromOtlp(scope: string, metric: Obj): MetricShape {
  const base = { scope, name: String(metric.name), description: String(metric.description ?? ''), unit: String(metric.unit ?? '') };
  switch (metric.data) {
    case 'sum':
      return {
        ...base,
        kind: 'sum',
        temporality: temporalityFromOtlp(metric.sum.aggregationTemporality),
        monotonic: metric.sum.isMonotonic === true,
        points: sortPoints(((metric.sum.dataPoints ?? []) as Obj[]).map(numberPointFromOtlp)),
      };
    case 'gauge':
      return { ...base, kind: 'gauge', points: sortPoints(((metric.gauge.dataPoints ?? []) as Obj[]).map(numberPointFromOtlp)) };
    case 'histogram':
      return {
        ...base,
        kind: 'histogram',
        temporality: temporalityFromOtlp(metric.histogram.aggregationTemporality),
        points: sortPoints(((metric.histogram.dataPoints ?? []) as Obj[]).map(histogramPointFromOtlp)),
      };
    default:
      throw new Error(`${base.name}: unexpected data ${String(metric.data)}`);
  }
}

function temporalityFromOtlp(value: unknown): 'delta' | 'cumulative' {
  if (value === 'AGGREGATION_TEMPORALITY_DELTA') return 'delta';
  if (value === 'AGGREGATION_TEMPORALITY_CUMULATIVE') return 'cumulative';
  throw new Error(`unexpected aggregation temporality ${String(value)}`);
}

function numberPointFromOtlp(point: Obj): PointShape {
  const value = point.value === 'asInt' ? Number(point.asInt) : Number(point.asDouble ?? 0);
  return { ...timesAndAttributes(point), value };
}

function histogramPointFromOtlp(point: Obj): PointShape {
  return {
    ...timesAndAttributes(point),
    count: Number(point.count ?? 0),
    sum: point.sum === undefined ? undefined : Number(point.sum),
    bucketCounts: ((point.bucketCounts ?? []) as string[]).map(Number),
    explicitBounds: ((point.explicitBounds ?? []) as number[]).map(Number),
    ...(point.min === undefined ? {} : { min: Number(point.min) }),
    ...(point.max === undefined ? {} : { max: Number(point.max) }),
  };
}

function timesAndAttributes(point: Obj): Pick<PointShape, 'attributes' | 'startTimeUnixNano' | 'timeUnixNano'> {
  return {
    attributes: attributesFromOtlp(point.attributes),
    startTimeUnixNano: String(point.startTimeUnixNano ?? '0'),
    timeUnixNano: String(point.timeUnixNano ?? '0'),
  };
}

function attributesFromOtlp(keyValues: unknown): Record<string, AttributeValue> {
  const result: Record<string, AttributeValue> = {};
  for (const kv of (keyValues ?? []) as Obj[]) {
    const v = kv.value as Obj;
    switch (v.value) {
      case 'stringValue':
        result[kv.key] = String(v.stringValue);
        break;
      case 'intValue':
        result[kv.key] = Number(v.intValue);
        break;
      case 'doubleValue':
        result[kv.key] = Number(v.doubleValue);
        break;
      case 'boolValue':
        result[kv.key] = v.boolValue === true;
        break;
      case 'arrayValue': {
        // Resource attributes such as process.command_args: arrays of strings.
        const values = ((v.arrayValue as Obj | undefined)?.values ?? []) as Obj[];
        result[kv.key] = values.map((item) => {
          if (item.value !== 'stringValue') throw new Error(`attribute ${kv.key}: unsupported array item kind ${String(item.value)}`);
          return String(item.stringValue);
        });
        break;
      }
      default:
        throw new Error(`attribute ${kv.key}: unsupported value kind ${String(v.value)}`);
    }
  }
  return sortKeys(result);
}

// ---------------------------------------------------------------- from the SDK (ground truth)

export function fromSdk(resourceMetrics: ResourceMetrics): ExportShape {
  const metrics: MetricShape[] = [];
  for (const sm of resourceMetrics.scopeMetrics) {
    for (const metric of sm.metrics) {
      const base = { scope: sm.scope.name, name: metric.descriptor.name, description: metric.descriptor.description, unit: metric.descriptor.unit };
      const temporality = metric.aggregationTemporality === AggregationTemporality.DELTA ? 'delta' : 'cumulative';
      switch (metric.dataPointType) {
        case DataPointType.SUM:
          metrics.push({
            ...base,
            kind: 'sum',
            temporality,
            monotonic: metric.isMonotonic,
            points: sortPoints(metric.dataPoints.map((p) => ({ ...sdkTimes(p), value: p.value }))),
          });
          break;
        case DataPointType.GAUGE:
          metrics.push({ ...base, kind: 'gauge', points: sortPoints(metric.dataPoints.map((p) => ({ ...sdkTimes(p), value: p.value }))) });
          break;
        case DataPointType.HISTOGRAM:
          metrics.push({
            ...base,
            kind: 'histogram',
            temporality,
            points: sortPoints(metric.dataPoints.map((p) => ({ ...sdkTimes(p), ...sdkHistogram(p.value) }))),
          });
          break;
        default:
          throw new Error(`${base.name}: unexpected data point type`);
      }
    }
  }
  return { resource: sortKeys(resourceMetrics.resource.attributes as Record<string, AttributeValue>), metrics: sortMetrics(metrics) };
}

function sdkTimes(point: { attributes: Attributes; startTime: [number, number]; endTime: [number, number] }) {
  return {
    attributes: sortKeys(point.attributes as Record<string, AttributeValue>),
    startTimeUnixNano: hrTimeToNanos(point.startTime),
    timeUnixNano: hrTimeToNanos(point.endTime),
  };
}

function sdkHistogram(value: Histogram) {
  return {
    count: value.count,
    sum: value.sum,
    bucketCounts: value.buckets.counts,
    explicitBounds: value.buckets.boundaries,
    ...(value.min === undefined ? {} : { min: value.min }),
    ...(value.max === undefined ? {} : { max: value.max }),
  };
}

function hrTimeToNanos([seconds, nanos]: [number, number]): string {
  return (BigInt(seconds) * 1_000_000_000n + BigInt(nanos)).toString();
}

// ---------------------------------------------------------------- shared

/** Timestamps differ between two readers collecting the same data; everything else must not. */
export function withoutTimes(shape: ExportShape): ExportShape {
  return {
    resource: shape.resource,
    metrics: shape.metrics.map((metric) => ({
      ...metric,
      points: metric.points.map(({ startTimeUnixNano: _start, timeUnixNano: _time, ...rest }) => rest as PointShape),
    })),
  };
}

function sortKeys<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function sortPoints(points: PointShape[]): PointShape[] {
  return points.sort((a, b) => compare(JSON.stringify(a.attributes), JSON.stringify(b.attributes)));
}

function sortMetrics(metrics: MetricShape[]): MetricShape[] {
  return metrics.sort((a, b) => compare(`${a.scope}\u0000${a.name}`, `${b.scope}\u0000${b.name}`));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The points of one metric, by name. */
export function metricNamed(shape: ExportShape, name: string): MetricShape | undefined {
  return shape.metrics.find((metric) => metric.name === name);
}

/** The point of `metric` whose attributes equal `attributes` exactly. */
export function pointWith(metric: MetricShape | undefined, attributes: Readonly<Record<string, AttributeValue>>): PointShape | undefined {
  const wanted = JSON.stringify(sortKeys(attributes));
  return metric?.points.find((point) => JSON.stringify(point.attributes) === wanted);
}
