import type { Attributes } from '@opentelemetry/api';
import { takeExemplar, type ExemplarSlots } from './exemplar-slots';
import { NativeBuckets, type NativeBucketConfig } from './native-buckets';
import { HistogramSeries, type CreationTime, type SeriesOwner } from './series';

/**
 * A histogram series that also keeps native (sparse exponential) buckets: its classic buckets,
 * count and sum are those of any histogram series, so the text exposition prints it unchanged;
 * the protobuf exposition and OpenTelemetry's exponential points read `native` as well. Only the
 * families configured for native histograms bind these: the others keep the plain series and its
 * record path. When its family keeps exemplars, each classic bucket keeps its latest one, which
 * every format carries: on the buckets, and in the protobuf as the native histogram's own.
 */
export class NativeHistogramSeries extends HistogramSeries {
  readonly native: NativeBuckets;
  /** Made at the first observation within a trace, when the family keeps exemplars. */
  exemplars: ExemplarSlots | undefined = undefined;

  constructor(
    owner: SeriesOwner,
    plain: string,
    leOffset: number,
    created: CreationTime,
    attributes: Attributes | undefined,
    cells: Float64Array,
    offset: number,
    config: NativeBucketConfig,
  ) {
    super(owner, plain, leOffset, created, attributes, cells, offset);
    this.native = new NativeBuckets(config);
  }

  override record(value: number): void {
    // The classic series rejects what it cannot count (NaN, ±∞, a sum that would overflow): the native buckets follow it.
    const bucket = this.observe(value);
    if (bucket < 0) return;
    this.native.observe(value);
    takeExemplar(this, bucket, value);
  }
}

/** Whether a histogram series keeps native buckets. */
export function hasNativeBuckets(series: HistogramSeries): series is NativeHistogramSeries {
  return series instanceof NativeHistogramSeries;
}
