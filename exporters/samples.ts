import { DataPointType, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import type { FamilyType } from '../views/catalog/family-definition';
import { prometheusMetricName } from '../views/catalog/names';
import { formatGoFloat } from '../views/common/go-float';

/**
 * How one collected stream becomes Prometheus samples: its type and name for the exposition model
 * (`collectedFamilies`), and its samples one by one for the log lines, so their names, `le` values
 * and order never drift apart.
 */

/** The Prometheus family type of a stream; `undefined` for exponential histograms (no text form). */
export function prometheusType(metric: MetricData): FamilyType | undefined {
  switch (metric.dataPointType) {
    case DataPointType.SUM:
      return metric.isMonotonic ? 'counter' : 'gauge';
    case DataPointType.GAUGE:
      return 'gauge';
    case DataPointType.HISTOGRAM:
      return 'histogram';
    default:
      return undefined;
  }
}

/** Names that are not valid Prometheus names are repaired the usual way; counters end in `_total`. */
export function prometheusFamilyName(streamName: string, type: FamilyType): string {
  const name = prometheusMetricName(streamName);
  return type === 'counter' && !name.endsWith('_total') ? `${name}_total` : name;
}

/** Which sample of a family a line is: the plain value, or one of a histogram's three kinds. */
export type SampleSuffix = '' | '_bucket' | '_count' | '_sum';

/**
 * Receives one sample. `le` is the bucket bound as Prometheus prints it (`0.3`, `1.0`, `+Inf`),
 * set on `_bucket` samples only.
 */
export type SampleVisitor = (sampleName: string, value: number, le: string | undefined, suffix: SampleSuffix) => void;

/**
 * The samples of one series in exposition order: a counter or gauge is one sample under the family
 * name; a histogram is its cumulative `_bucket` samples in increasing `le` ending at `+Inf`
 * (equal to `_count`), then `_count`, then `_sum`. Calls `visit` per sample (no allocation).
 */
export function expandSamples(familyName: string, value: number | Histogram, visit: SampleVisitor): void {
  if (typeof value === 'number') {
    visit(familyName, value, undefined, '');
    return;
  }
  const { boundaries, counts } = value.buckets;
  const bucket = `${familyName}_bucket`;
  let cumulative = 0;
  for (let i = 0; i < boundaries.length; i++) {
    cumulative += counts[i] ?? 0;
    visit(bucket, cumulative, formatGoFloat(boundaries[i] ?? NaN), '_bucket');
  }
  visit(bucket, value.count, '+Inf', '_bucket');
  visit(`${familyName}_count`, value.count, undefined, '_count');
  visit(`${familyName}_sum`, value.sum ?? 0, undefined, '_sum');
}
