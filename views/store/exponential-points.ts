import type { HrTime } from '@opentelemetry/api';
import type { DataPoint, ExponentialHistogram } from '@opentelemetry/sdk-metrics';
import { widerBucketIndex, type NativeBucketRun } from './native-buckets';
import type { NativeHistogramSeries } from './native-histogram-series';

/** What a delta reader last received of one series' native buckets. */
interface NativeBaseline {
  schema: number;
  count: number;
  sum: number;
  zeroCount: number;
  positive: NativeBucketRun;
  negative: NativeBucketRun;
}

const NO_BUCKETS: NativeBucketRun = { offset: 0, counts: [] };
const EMPTY_BASELINE: NativeBaseline = { schema: 0, count: 0, sum: 0, zeroCount: 0, positive: NO_BUCKETS, negative: NO_BUCKETS };

/**
 * OpenTelemetry's exponential histogram points of the series that keep native buckets. The
 * layouts are the same up to a shift: OpenTelemetry's bucket `i` holds (base^i, base^(i+1)],
 * Prometheus's (base^(i-1), base^i], and the scale is the schema. Delta points subtract what the
 * previous collection sent, brought down to the series' current schema first when its schema was
 * lowered in between (merged buckets keep their totals, so the difference stays exact). Buckets the
 * zero bucket took when it widened (at schema -4) were sent already: the delta's zero count leaves
 * them out, so what a reader adds up still counts each observation once.
 */
export class ExponentialPoints {
  private readonly baselines = new WeakMap<NativeHistogramSeries, NativeBaseline>();

  cumulative(series: NativeHistogramSeries, endTime: HrTime): DataPoint<ExponentialHistogram> {
    const native = series.native;
    return {
      attributes: series.attributes,
      startTime: series.createdTime,
      endTime,
      value: {
        count: series.count,
        sum: series.sum,
        scale: native.schema,
        zeroCount: native.zeroCount,
        positive: otelBuckets(native.positive),
        negative: otelBuckets(native.negative),
        ...(series.count > 0 ? { min: native.min, max: native.max } : {}),
      },
    };
  }

  /**
   * The change since the previous collection (at `lastCollection`; a series first seen starts at
   * its creation), or nothing when the series took no observation in between.
   */
  delta(series: NativeHistogramSeries, lastCollection: HrTime | undefined, endTime: HrTime): DataPoint<ExponentialHistogram> | undefined {
    const native = series.native;
    const previous = this.baselines.get(series);
    const startTime = previous === undefined || lastCollection === undefined ? series.createdTime : lastCollection;
    if ((previous?.count ?? 0) === series.count) {
      if (previous === undefined) this.baselines.set(series, { ...EMPTY_BASELINE, schema: native.schema });
      return undefined;
    }
    const current: NativeBaseline = {
      schema: native.schema,
      count: series.count,
      sum: series.sum,
      zeroCount: native.zeroCount,
      positive: native.positive,
      negative: native.negative,
    };
    this.baselines.set(series, current);
    const steps = previous === undefined ? 0 : previous.schema - current.schema;
    const positive = subtract(current.positive, previous?.positive, steps);
    const negative = subtract(current.negative, previous?.negative, steps);
    return {
      attributes: series.attributes,
      startTime,
      endTime,
      value: {
        count: current.count - (previous?.count ?? 0),
        sum: current.sum - (previous?.sum ?? 0),
        scale: current.schema,
        zeroCount: current.zeroCount - (previous?.zeroCount ?? 0) - positive.intoZero - negative.intoZero,
        positive: otelBuckets(positive.run),
        negative: otelBuckets(negative.run),
      },
    };
  }
}

function otelBuckets(run: NativeBucketRun): { offset: number; bucketCounts: number[] } {
  return { offset: run.counts.length === 0 ? 0 : run.offset - 1, bucketCounts: run.counts.slice() };
}

/**
 * `current` minus `previous`, whose buckets are first merged `steps` times (its schema was `steps`
 * higher), and what previous buckets below every current one held: the zero bucket took those.
 */
function subtract(current: NativeBucketRun, previous: NativeBucketRun | undefined, steps: number): { run: NativeBucketRun; intoZero: number } {
  if (previous === undefined || previous.counts.length === 0) return { run: current, intoZero: 0 };
  const counts = current.counts.slice();
  let intoZero = 0;
  previous.counts.forEach((count, i) => {
    let index = previous.offset + i;
    for (let step = 0; step < steps; step++) index = widerBucketIndex(index);
    // Buckets only ever leave a run into the zero bucket: one below the current run's lowest went there.
    if (counts.length === 0 || index < current.offset) intoZero += count;
    else counts[index - current.offset] -= count;
  });
  return { run: { offset: current.offset, counts }, intoZero };
}
