import { readLabels } from '../../views/store/label-text';
import type { Exemplar } from '../../views/store/exemplar-slots';
import type { NativeBucketRun } from '../../views/store/native-buckets';
import type { HrTime } from '@opentelemetry/api';
import { hasCreatedSeries } from './exposition-text';
import type { ExpositionFamily, ExpositionType, HistogramSeriesData, NumberSeries, SeriesIdentity } from './model';
import { escapedLabelName, type NameEscaping } from './name-escaping';
import { ProtobufEncoder } from './protobuf-encoder';
import { exposedName } from './text-writer';

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
const METRIC = { label: 1, gauge: 2, counter: 3, histogram: 7 } as const;
const LABEL = { name: 1, value: 2 } as const;
const GAUGE = { value: 1 } as const;
const COUNTER = { value: 1, exemplar: 2, createdTimestamp: 3 } as const;
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
  createdTimestamp: 15,
  exemplars: 16,
} as const;
const BUCKET = { cumulativeCount: 1, upperBound: 2, exemplar: 3 } as const;
// An exemplar's labels are field 1, as a metric's: `writeLabel` writes both.
const EXEMPLAR = { value: 2, timestamp: 3 } as const;
const TIMESTAMP = { seconds: 1, nanos: 2 } as const;
const SPAN = { offset: 1, length: 2 } as const;
const METRIC_TYPE: Readonly<Record<ExpositionType, number>> = { counter: 0, gauge: 1, histogram: 4 };

export interface ProtobufWriteOptions {
  /** Carry `created_timestamp` on counters and histograms (where the text formats print `_created`). */
  readonly createdSeries: boolean;
  /** How names that are not legacy Prometheus names print; default `underscores`. */
  readonly escaping?: NameEscaping;
}

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
 * The families as length-delimited `io.prometheus.client.MetricFamily` messages, the protobuf
 * exposition Prometheus asks for when it scrapes native histograms. A family without series is
 * left out, as client_golang leaves it out. Histograms carry their classic buckets (with each
 * bucket's exemplar) and, when they keep them, their native buckets with the same exemplars in
 * `exemplars`, as client_golang writes a histogram that has both; counters carry their exemplar.
 * Counters and histograms carry `created_timestamp`, the time the text formats print as `_created`.
 *
 * Produced a family at a time, with points to yield at between series every `PIECE_BYTES`.
 */
export function* protobufExposition(families: Iterable<ExpositionFamily>, options: ProtobufWriteOptions): Generator<Buffer, void, undefined> {
  const escaping = options.escaping ?? 'underscores';
  const encoder = new ProtobufEncoder();
  for (const family of families) {
    if (family.series.length === 0) continue;
    yield* writeFamily(encoder, family, options.createdSeries, escaping);
    if (encoder.size >= PIECE_BYTES) yield encoder.take();
  }
  if (encoder.size > 0) yield encoder.take();
}

/** The whole exposition at once (for callers that need no slicing: tests, small expositions). */
export function writeProtobuf(families: Iterable<ExpositionFamily>, options: ProtobufWriteOptions): Buffer {
  return Buffer.concat(Array.from(protobufExposition(families, options)));
}

/** Writes a family's message, yielding `YIELD_POINT` between its series every `PIECE_BYTES` written. */
function* writeFamily(encoder: ProtobufEncoder, family: ExpositionFamily, createdSeries: boolean, escaping: NameEscaping): Generator<Buffer, void, undefined> {
  const { meta, series } = family;
  const created = createdSeries && hasCreatedSeries(meta.type) && meta.omitCreated !== true;
  encoder.begin();
  encoder.string(FAMILY.name, exposedName(meta, escaping));
  encoder.string(FAMILY.help, meta.help);
  encoder.uint(FAMILY.type, METRIC_TYPE[meta.type]);
  let written = encoder.size;
  for (const one of series) {
    encoder.begin(FAMILY.metric);
    writeLabels(encoder, one, escaping);
    if (meta.type === 'histogram') writeHistogram(encoder, one as HistogramSeriesData, created);
    else if (meta.type === 'counter') {
      encoder.begin(METRIC.counter);
      encoder.double(COUNTER.value, (one as NumberSeries).value);
      writeExemplar(encoder, COUNTER.exemplar, one.exemplars?.at(0));
      if (created && one.created !== undefined) writeTimestamp(encoder, COUNTER.createdTimestamp, one.created.hrTime);
      encoder.end();
    } else {
      encoder.begin(METRIC.gauge);
      encoder.double(GAUGE.value, (one as NumberSeries).value);
      encoder.end();
    }
    encoder.end();
    if (encoder.size - written >= PIECE_BYTES) {
      written = encoder.size;
      yield YIELD_POINT;
    }
  }
  encoder.end();
}

/** The labels, sorted by name as the text prints them (a label text is sorted already). */
function writeLabels(encoder: ProtobufEncoder, series: SeriesIdentity, escaping: NameEscaping): void {
  const source = series.sourceLabels;
  if (escaping === 'underscores' || source === undefined) {
    for (const [name, value] of readLabels(series.plain)) writeLabel(encoder, name, value);
    return;
  }
  const escaped = Object.keys(source).map((key): [string, string] => [escapedLabelName(key, escaping), String(source[key])]);
  escaped.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name, value] of escaped) writeLabel(encoder, name, value);
}

function writeLabel(encoder: ProtobufEncoder, name: string, value: string): void {
  encoder.begin(METRIC.label);
  encoder.string(LABEL.name, name);
  encoder.string(LABEL.value, value);
  encoder.end();
}

function writeHistogram(encoder: ProtobufEncoder, series: HistogramSeriesData, created: boolean): void {
  encoder.begin(METRIC.histogram);
  encoder.uint(HISTOGRAM.sampleCount, series.count);
  encoder.double(HISTOGRAM.sampleSum, series.sum);
  const bounds = series.bounds;
  const exemplars = series.exemplars;
  let cumulative = 0;
  for (let i = 0; i <= bounds.length; i++) {
    cumulative += series.bucketCount(i);
    writeBucket(encoder, cumulative, i < bounds.length ? (bounds[i] as number) : Infinity, exemplars?.at(i));
  }
  if (created && series.created !== undefined) writeTimestamp(encoder, HISTOGRAM.createdTimestamp, series.created.hrTime);
  const native = series.native;
  if (native !== undefined) {
    encoder.sint(HISTOGRAM.schema, native.schema);
    encoder.double(HISTOGRAM.zeroThreshold, native.zeroThreshold);
    encoder.uint(HISTOGRAM.zeroCount, native.zeroCount);
    const negative = sparseBuckets(native.negative);
    const positive = sparseBuckets(native.positive);
    writeSpans(encoder, HISTOGRAM.negativeSpan, HISTOGRAM.negativeDelta, negative);
    // As client_golang: a native histogram with nothing in it still carries one empty span, which tells it from a classic one.
    const empty = native.zeroCount === 0 && positive.spans.length === 0 && negative.spans.length === 0;
    writeSpans(encoder, HISTOGRAM.positiveSpan, HISTOGRAM.positiveDelta, empty ? { spans: [[0, 0]], deltas: [] } : positive);
    // The native histogram's own exemplars, which Prometheus reads for it: the buckets' exemplars, in value order as client_golang keeps them.
    if (exemplars !== undefined) for (let i = 0; i <= bounds.length; i++) writeExemplar(encoder, HISTOGRAM.exemplars, exemplars.at(i));
  }
  encoder.end();
}

function writeBucket(encoder: ProtobufEncoder, cumulativeCount: number, upperBound: number, exemplar: Exemplar | undefined): void {
  encoder.begin(HISTOGRAM.bucket);
  encoder.uint(BUCKET.cumulativeCount, cumulativeCount);
  encoder.double(BUCKET.upperBound, upperBound);
  writeExemplar(encoder, BUCKET.exemplar, exemplar);
  encoder.end();
}

/**
 * An exemplar as client_model carries it: the trace and span ids as labels (the OpenMetrics
 * exposition's names and order), the value, and the time as a `google.protobuf.Timestamp`
 * (Prometheus keeps a native histogram's exemplars only with one).
 */
function writeExemplar(encoder: ProtobufEncoder, field: number, exemplar: Exemplar | undefined): void {
  if (exemplar === undefined) return;
  encoder.begin(field);
  writeLabel(encoder, 'span_id', exemplar.spanId);
  writeLabel(encoder, 'trace_id', exemplar.traceId);
  encoder.double(EXEMPLAR.value, exemplar.value);
  const seconds = Math.floor(exemplar.timestampSeconds);
  writeTimestamp(encoder, EXEMPLAR.timestamp, [seconds, Math.min(Math.round((exemplar.timestampSeconds - seconds) * 1e9), 999_999_999)]);
  encoder.end();
}

/** A `google.protobuf.Timestamp`: seconds and nanoseconds (fields at their default, 0, are left out as proto3 leaves them). */
function writeTimestamp(encoder: ProtobufEncoder, field: number, [seconds, nanos]: HrTime): void {
  encoder.begin(field);
  if (seconds !== 0) encoder.uint(TIMESTAMP.seconds, seconds);
  if (nanos !== 0) encoder.uint(TIMESTAMP.nanos, nanos);
  encoder.end();
}

function writeSpans(encoder: ProtobufEncoder, spanField: number, deltaField: number, buckets: SparseBuckets): void {
  for (const [offset, length] of buckets.spans) {
    encoder.begin(spanField);
    encoder.sint(SPAN.offset, offset);
    encoder.uint(SPAN.length, length);
    encoder.end();
  }
  for (const delta of buckets.deltas) encoder.sint(deltaField, delta);
}
