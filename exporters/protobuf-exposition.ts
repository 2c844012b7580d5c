import type { ParsedFamily, ParsedType } from './parsed-family';
import type { FamilySeries } from '../views/store/family-series';
import { labelPairs, readLabels } from '../views/store/label-text';
import type { Exemplar } from '../views/store/exemplar-slots';
import { exemplarsOf } from '../views/store/exemplar-series';
import type { NativeBucketRun } from '../views/store/native-buckets';
import { hasNativeBuckets } from '../views/store/native-histogram-series';
import type { CounterSeries, GaugeSeries, HistogramSeries, StoredSeries } from '../views/store/series';
import type { SeriesStore } from '../views/store/series-store';
import { ProtobufWriter } from './protobuf-writer';
import type { CollectedFamily, CollectedSeries } from './collected-families';

/**
 * Bytes gathered before a piece is handed on (between families: a family's message is handed on
 * whole, its length first), and written between two points where the rendering may yield (inside
 * a family too: one of thousands of native histograms is megabytes, tens of milliseconds of work).
 */
const PIECE_BYTES = 16_384;
/** An empty piece: hands nothing on, lets the rendering yield (see `ExpositionPieces`). */
const YIELD_POINT = Buffer.alloc(0);

// Field numbers of io.prometheus.client (client_model's metrics.proto).
const FAMILY = { name: 1, help: 2, type: 3, metric: 4 } as const;
const METRIC = { label: 1, gauge: 2, counter: 3, summary: 4, untyped: 5, histogram: 7 } as const;
const LABEL = { name: 1, value: 2 } as const;
const HISTOGRAM = {
  sampleCount: 1,
  sampleSum: 2,
  bucket: 3,
  schema: 5,
  zeroThreshold: 6,
  zeroCount: 7,
  negativeSpan: 9,
  negativeDelta: 10,
  positiveSpan: 12,
  positiveDelta: 13,
} as const;
const BUCKET = { cumulativeCount: 1, upperBound: 2, exemplar: 3 } as const;
const COUNTER = { value: 1, exemplar: 2 } as const;
// An exemplar's labels are field 1, as a metric's: `writeLabel` writes both.
const EXEMPLAR = { value: 2, timestamp: 3 } as const;
const TIMESTAMP = { seconds: 1, nanos: 2 } as const;
const SPAN = { offset: 1, length: 2 } as const;
const SUMMARY = { sampleCount: 1, sampleSum: 2, quantile: 3 } as const;
const QUANTILE = { quantile: 1, value: 2 } as const;
const METRIC_TYPE: Readonly<Record<ParsedType, number>> = { counter: 0, gauge: 1, summary: 2, untyped: 3, histogram: 4 };

/** Native buckets as the protobuf carries them: spans of consecutive buckets and the counts' deltas. */
export interface SparseBuckets {
  /** Per span: the gap from the previous span's end (the first span: its starting index), and its length. */
  readonly spans: ReadonlyArray<readonly [offset: number, length: number]>;
  /** Each bucket's count minus the previous bucket's (the first: minus 0). */
  readonly deltas: readonly number[];
}

/**
 * Spans and deltas of the buckets that hold anything, laid out as client_golang lays them out: a
 * gap of one or two empty buckets is carried as zero counts inside the span (cheaper than a new
 * span), a longer gap starts a new span.
 */
export function sparseBuckets(run: NativeBucketRun): SparseBuckets {
  const spans: Array<[number, number]> = [];
  const deltas: number[] = [];
  let previous = 0;
  let next = 0;
  const append = (count: number): void => {
    (spans[spans.length - 1] as [number, number])[1]++;
    deltas.push(count - previous);
    previous = count;
  };
  for (let i = 0; i < run.counts.length; i++) {
    const count = run.counts[i] as number;
    if (count === 0) continue;
    const index = run.offset + i;
    const gap = index - next;
    if (spans.length === 0 || gap > 2) spans.push([gap, 0]);
    else for (let j = 0; j < gap; j++) append(0);
    append(count);
    next = index + 1;
  }
  return { spans, deltas };
}

/**
 * The store's families as protobuf messages, in catalog order, each with the series it holds
 * (a family without series is left out, as client_golang leaves it out). Histogram families that
 * keep native buckets carry them beside their classic buckets, so a Prometheus that scrapes
 * classic histograms too keeps every `_bucket` series it had. Produced a family at a time, for a
 * rendering in slices, with points to yield at between series every `PIECE_BYTES`. `only` picks the
 * families (those no pulled engine's series join).
 */
export function* storeProtobuf(store: SeriesStore, only: (family: FamilySeries) => boolean = () => true): Generator<Buffer, void, undefined> {
  store.runCollectHooks();
  const families = store.families.filter(only).map((family) => [family, family.seriesSnapshot()] as const);
  const writer = new ProtobufWriter();
  for (const [family, series] of families) {
    if (series.length === 0) continue;
    yield* writeStoreFamily(writer, family, series);
    if (writer.size >= PIECE_BYTES) yield writer.take();
  }
  if (writer.size > 0) yield writer.take();
}

/**
 * The SDK's families (the application's instruments, declared families, `target_info`) as
 * protobuf messages, encoded from the collected points themselves; a family without series is
 * left out. The bytes are those of the same families printed as text and read back.
 */
export function collectedFamiliesProtobuf(families: readonly CollectedFamily[]): Buffer {
  const writer = new ProtobufWriter();
  for (const family of families) if (family.series.length > 0) writeCollectedFamily(writer, family);
  return writer.take();
}

/** Families read from the text exposition (the application's own instruments, `target_info`) as protobuf messages. */
export function parsedFamiliesProtobuf(families: readonly ParsedFamily[]): Buffer {
  const writer = new ProtobufWriter();
  for (const family of families) if (family.samples.length > 0) writeParsedFamily(writer, family);
  return writer.take();
}

/** Writes a family's message, yielding `YIELD_POINT` between its series every `PIECE_BYTES` written. */
function* writeStoreFamily(writer: ProtobufWriter, family: FamilySeries, series: readonly StoredSeries[]): Generator<Buffer, void, undefined> {
  const { name, help, type } = family.family;
  writer.begin();
  writer.string(FAMILY.name, name);
  writer.string(FAMILY.help, help);
  writer.uint(FAMILY.type, METRIC_TYPE[type]);
  const bounds = family.bounds;
  let written = writer.size;
  for (const one of series) {
    writer.begin(FAMILY.metric);
    for (const [label, value] of readLabels(one.plain)) writeLabel(writer, label, value);
    if (type === 'histogram') writeHistogram(writer, one as HistogramSeries, bounds);
    else {
      writer.begin(type === 'counter' ? METRIC.counter : METRIC.gauge);
      writer.double(COUNTER.value, (one as CounterSeries | GaugeSeries).value);
      writeExemplar(writer, COUNTER.exemplar, exemplarsOf(one)?.at(0));
      writer.end();
    }
    writer.end();
    if (writer.size - written >= PIECE_BYTES) {
      written = writer.size;
      yield YIELD_POINT;
    }
  }
  writer.end();
}

function writeLabel(writer: ProtobufWriter, name: string, value: string): void {
  writer.begin(METRIC.label);
  writer.string(LABEL.name, name);
  writer.string(LABEL.value, value);
  writer.end();
}

function writeHistogram(writer: ProtobufWriter, series: HistogramSeries, bounds: Float64Array): void {
  writer.begin(METRIC.histogram);
  writer.uint(HISTOGRAM.sampleCount, series.count);
  writer.double(HISTOGRAM.sampleSum, series.sum);
  const exemplars = exemplarsOf(series);
  let cumulative = 0;
  for (let i = 0; i <= bounds.length; i++) {
    cumulative += series.bucketCount(i);
    writeBucket(writer, cumulative, i < bounds.length ? (bounds[i] as number) : Infinity, exemplars?.at(i));
  }
  if (hasNativeBuckets(series)) {
    const native = series.native;
    writer.sint(HISTOGRAM.schema, native.schema);
    writer.double(HISTOGRAM.zeroThreshold, native.zeroThreshold);
    writer.uint(HISTOGRAM.zeroCount, native.zeroCount);
    const negative = sparseBuckets(native.negative);
    const positive = sparseBuckets(native.positive);
    writeSpans(writer, HISTOGRAM.negativeSpan, HISTOGRAM.negativeDelta, negative);
    // As client_golang: a native histogram with nothing in it still carries one empty span, which tells it from a classic one.
    const empty = native.zeroCount === 0 && positive.spans.length === 0 && negative.spans.length === 0;
    writeSpans(writer, HISTOGRAM.positiveSpan, HISTOGRAM.positiveDelta, empty ? { spans: [[0, 0]], deltas: [] } : positive);
  }
  writer.end();
}

function writeBucket(writer: ProtobufWriter, cumulativeCount: number, upperBound: number, exemplar?: Exemplar): void {
  writer.begin(HISTOGRAM.bucket);
  writer.uint(BUCKET.cumulativeCount, cumulativeCount);
  writer.double(BUCKET.upperBound, upperBound);
  writeExemplar(writer, BUCKET.exemplar, exemplar);
  writer.end();
}

/**
 * A bucket's or counter's exemplar, as client_model carries it: the trace and span ids as labels
 * (the OpenMetrics exposition's names and order), the value, and the time as a
 * `google.protobuf.Timestamp`. Prometheus with native histograms on scrapes this format only, so
 * without it the exemplars of its targets would be lost.
 */
function writeExemplar(writer: ProtobufWriter, field: number, exemplar: Exemplar | undefined): void {
  if (exemplar === undefined) return;
  writer.begin(field);
  writeLabel(writer, 'span_id', exemplar.spanId);
  writeLabel(writer, 'trace_id', exemplar.traceId);
  writer.double(EXEMPLAR.value, exemplar.value);
  const seconds = Math.floor(exemplar.timestampSeconds);
  writer.begin(EXEMPLAR.timestamp);
  writer.uint(TIMESTAMP.seconds, seconds);
  writer.uint(TIMESTAMP.nanos, Math.min(Math.round((exemplar.timestampSeconds - seconds) * 1e9), 999_999_999));
  writer.end();
  writer.end();
}

function writeSpans(writer: ProtobufWriter, spanField: number, deltaField: number, buckets: SparseBuckets): void {
  for (const [offset, length] of buckets.spans) {
    writer.begin(spanField);
    writer.sint(SPAN.offset, offset);
    writer.uint(SPAN.length, length);
    writer.end();
  }
  for (const delta of buckets.deltas) writer.sint(deltaField, delta);
}

function writeCollectedFamily(writer: ProtobufWriter, family: CollectedFamily): void {
  writer.begin();
  writer.string(FAMILY.name, family.name);
  if (family.help !== '') writer.string(FAMILY.help, family.help);
  writer.uint(FAMILY.type, METRIC_TYPE[family.type]);
  for (const series of family.series) writeCollectedSeries(writer, family.type === 'counter' ? METRIC.counter : METRIC.gauge, series);
  writer.end();
}

/** One point: a counter's or gauge's value in `valueField`, or a histogram's count, sum and cumulative buckets ending at `+Inf`. */
function writeCollectedSeries(writer: ProtobufWriter, valueField: number, { labels, point }: CollectedSeries): void {
  writer.begin(FAMILY.metric);
  for (const [name, value] of labelPairs(labels)) writeLabel(writer, name, value);
  const value = point.value;
  if (typeof value === 'number') {
    writer.begin(valueField);
    writer.double(COUNTER.value, value);
  } else {
    writer.begin(METRIC.histogram);
    writer.uint(HISTOGRAM.sampleCount, value.count);
    writer.double(HISTOGRAM.sampleSum, value.sum ?? 0);
    const { boundaries, counts } = value.buckets;
    let cumulative = 0;
    for (let i = 0; i < boundaries.length; i++) {
      cumulative += counts[i] ?? 0;
      writeBucket(writer, cumulative, boundaries[i] ?? NaN);
    }
    // As the text's `+Inf` bucket: the count itself.
    writeBucket(writer, value.count, Infinity);
  }
  writer.end();
  writer.end();
}

/** A family of the text exposition: its samples grouped into metrics by their labels (a histogram's `le`, a summary's `quantile` aside). */
function writeParsedFamily(writer: ProtobufWriter, family: ParsedFamily): void {
  writer.begin();
  writer.string(FAMILY.name, family.name);
  if (family.help !== '') writer.string(FAMILY.help, family.help);
  writer.uint(FAMILY.type, METRIC_TYPE[family.type]);
  const grouped = family.type === 'histogram' || family.type === 'summary';
  if (!grouped) {
    for (const sample of family.samples) {
      writer.begin(FAMILY.metric);
      for (const label of Object.keys(sample.labels).sort()) writeLabel(writer, label, sample.labels[label] as string);
      writer.begin(family.type === 'counter' ? METRIC.counter : family.type === 'gauge' ? METRIC.gauge : METRIC.untyped);
      writer.double(1, sample.value);
      writer.end();
      writer.end();
    }
  } else {
    const special = family.type === 'histogram' ? 'le' : 'quantile';
    const metrics = new Map<string, { labels: Array<[string, string]>; count: number; sum: number; points: Array<[number, number]> }>();
    for (const sample of family.samples) {
      const labels = Object.keys(sample.labels)
        .filter((label) => label !== special)
        .sort()
        .map((label): [string, string] => [label, sample.labels[label] as string]);
      const key = JSON.stringify(labels);
      let metric = metrics.get(key);
      if (metric === undefined) metrics.set(key, (metric = { labels, count: 0, sum: 0, points: [] }));
      if (sample.name === `${family.name}_count`) metric.count = sample.value;
      else if (sample.name === `${family.name}_sum`) metric.sum = sample.value;
      else if (sample.labels[special] !== undefined) metric.points.push([boundOf(sample.labels[special]), sample.value]);
    }
    for (const metric of metrics.values()) {
      writer.begin(FAMILY.metric);
      for (const [label, value] of metric.labels) writeLabel(writer, label, value);
      if (family.type === 'histogram') {
        writer.begin(METRIC.histogram);
        writer.uint(HISTOGRAM.sampleCount, metric.count);
        writer.double(HISTOGRAM.sampleSum, metric.sum);
        for (const [bound, cumulative] of metric.points) writeBucket(writer, cumulative, bound);
      } else {
        writer.begin(METRIC.summary);
        writer.uint(SUMMARY.sampleCount, metric.count);
        writer.double(SUMMARY.sampleSum, metric.sum);
        for (const [quantile, value] of metric.points) {
          writer.begin(SUMMARY.quantile);
          writer.double(QUANTILE.quantile, quantile);
          writer.double(QUANTILE.value, value);
          writer.end();
        }
      }
      writer.end();
      writer.end();
    }
  }
  writer.end();
}

/** An `le` or `quantile` label value as a number (`+Inf` as the text format spells infinity). */
function boundOf(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}
