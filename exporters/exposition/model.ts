import type { Attributes, HrTime } from '@opentelemetry/api';
import type { Exemplar } from '../../views/store/exemplar-slots';
import type { NativeBucketRun } from '../../views/store/native-buckets';

/**
 * The one model every exposition is written from, as client_golang's `MetricFamily` is for its
 * encoders: every source (the series store, the SDK's collected streams, pulled engines, the
 * cluster primary's merge) produces these families, and one writer per format (the 0.0.4 text,
 * OpenMetrics, protobuf) prints them. A feature carried here reaches every format and every
 * deployment at once.
 *
 * The store's own series satisfy the series interfaces as they are (their label text, cells,
 * exemplar slots and native buckets are read in place), so a scrape builds nothing per series.
 */

export type ExpositionType = 'counter' | 'gauge' | 'histogram';

/** What a family prints the same on every scrape. Kept stable per family, so writers can cache what they derive from it. */
export interface FamilyMeta {
  /** The exposed name, under which the 0.0.4 text prints its TYPE line: counters end in `_total`. */
  readonly name: string;
  readonly type: ExpositionType;
  readonly help: string;
  /** The unit, as the source names it (the cluster primary merges gauges by it). */
  readonly unit?: string;
  /** A counter or histogram printed without `_created`, as vLLM's client prints some. */
  readonly omitCreated?: boolean;
  /** OpenMetrics prints it as an info family (`target_info`); other formats as a gauge. */
  readonly openMetricsInfo?: boolean;
  /**
   * The name as the source gave it, without a counter's `_total`, when it is not a legacy
   * Prometheus name (`http.server.duration`): the `dots` and `values` escaping schemes print it
   * escaped their way; every other scheme prints `name`, repaired with underscores.
   */
  readonly sourceStem?: string;
}

/** When a series was created: its `_created` sample and protobuf `created_timestamp`. */
export interface CreatedTime {
  readonly hrTime: HrTime;
  /** Seconds since the epoch, as `_created` prints them. */
  readonly exposition: string;
}

/** The exemplars a series keeps: one per histogram bucket (`+Inf` last), or a counter's one in slot 0. */
export interface ExemplarSource {
  at(slot: number): Exemplar | undefined;
}

/** What every series has. */
export interface SeriesIdentity {
  /** Label text as every non-bucket sample prints it (`{a="1",b="2"}`, names sorted, values escaped), or `''`. */
  readonly plain: string;
  /** When it was created; undefined for a placeholder series (declared, nothing recorded), which prints no `_created`. */
  readonly created: CreatedTime | undefined;
  /** The labels as given, present only when a label name is not a legacy Prometheus name (see `FamilyMeta.sourceStem`). */
  readonly sourceLabels?: Attributes;
}

/** A counter's or a gauge's series. */
export interface NumberSeries extends SeriesIdentity {
  readonly value: number;
  /** A counter's exemplar (slot 0). */
  readonly exemplars?: ExemplarSource;
}

/** Native (sparse exponential) buckets, as Prometheus numbers them. */
export interface NativeBucketsData {
  readonly schema: number;
  readonly zeroThreshold: number;
  readonly zeroCount: number;
  readonly positive: NativeBucketRun;
  readonly negative: NativeBucketRun;
}

/** A histogram's series: classic buckets always; native buckets and exemplars when it keeps them. */
export interface HistogramSeriesData extends SeriesIdentity {
  /** Where a bucket's `le` pair goes in `plain` (see `LabelText`). */
  readonly leOffset: number;
  /** The classic buckets' upper bounds, `+Inf` implied after the last. */
  readonly bounds: ArrayLike<number>;
  /** Bucket `i`'s own count (not cumulative); `bounds.length` is `+Inf`'s. */
  bucketCount(i: number): number;
  readonly count: number;
  readonly sum: number;
  readonly exemplars?: ExemplarSource;
  readonly native?: NativeBucketsData;
}

export type ExpositionSeries = NumberSeries | HistogramSeriesData;

/** One family and its series, in the order they print. */
export interface ExpositionFamily {
  readonly meta: FamilyMeta;
  readonly series: readonly ExpositionSeries[];
}

export function isHistogramFamily(meta: FamilyMeta): boolean {
  return meta.type === 'histogram';
}
