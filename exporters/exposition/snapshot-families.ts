import type { Attributes, AttributeValue } from '@opentelemetry/api';
import { readLabels, renderLabelText } from '../../views/store/label-text';
import type { Exemplar } from '../../views/store/exemplar-slots';
import {
  numberOrNaN,
  type ClusterSnapshot,
  type SnapshotExemplar,
  type SnapshotHistogram,
  type SnapshotMetric,
  type SnapshotNative,
  type SnapshotPoint,
} from '../snapshot';
import type {
  ExemplarSource,
  ExpositionFamily,
  ExpositionSeries,
  ExpositionType,
  FamilyMeta,
  HistogramSeriesData,
  NativeBucketsData,
  NumberSeries,
} from './model';
import { sourceLabelsOf, StartTime } from './series-views';

/**
 * Exposition families as a snapshot and back: what crosses the `cluster` IPC channel (a worker's
 * families, native buckets and exemplars included) and what a pull of engines keeps. A round trip
 * prints the same bytes in every format.
 */

/** The families with series, as plain JSON. */
export function familiesSnapshot(families: Iterable<ExpositionFamily>): ClusterSnapshot {
  const metrics: SnapshotMetric[] = [];
  for (const { meta, series } of families) {
    if (series.length === 0) continue;
    const histogram = meta.type === 'histogram';
    metrics.push({
      name: meta.name,
      kind: meta.type,
      description: meta.help,
      unit: meta.unit ?? '',
      ...(meta.sourceStem === undefined ? {} : { sourceStem: meta.sourceStem }),
      points: series.map((one) => (histogram ? histogramPoint(one as HistogramSeriesData) : numberPoint(one as NumberSeries))),
    });
  }
  return { metrics };
}

function identityOf(series: ExpositionSeries): Pick<SnapshotPoint, 'attributes' | 'startTime'> {
  const attributes = (series.sourceLabels as Readonly<Record<string, AttributeValue>> | undefined) ?? Object.fromEntries(readLabels(series.plain));
  const created = series.created?.hrTime;
  return created === undefined ? { attributes } : { attributes, startTime: created[0] + created[1] / 1e9 };
}

function numberPoint(series: NumberSeries): SnapshotPoint {
  const exemplar = series.exemplars?.at(0);
  return { ...identityOf(series), value: series.value, ...(exemplar === undefined ? {} : { exemplar: exemplarOf(exemplar) }) };
}

function histogramPoint(series: HistogramSeriesData): SnapshotPoint {
  const slots = series.bounds.length + 1;
  const counts = Array.from({ length: slots }, (_, i) => series.bucketCount(i));
  const value: SnapshotHistogram = {
    boundaries: Array.from(series.bounds),
    counts,
    sum: series.sum,
    count: series.count,
    ...(series.native === undefined ? {} : { native: nativeOf(series.native) }),
    ...exemplarsOf(series.exemplars, slots),
  };
  return { ...identityOf(series), value };
}

function nativeOf(native: NativeBucketsData): SnapshotNative {
  const run = ({ offset, counts }: { offset: number; counts: readonly number[] }): SnapshotNative['positive'] => ({ offset, counts: [...counts] });
  return {
    schema: native.schema,
    zeroThreshold: native.zeroThreshold,
    zeroCount: native.zeroCount,
    positive: run(native.positive),
    negative: run(native.negative),
  };
}

function exemplarsOf(source: ExemplarSource | undefined, slots: number): Pick<SnapshotHistogram, 'exemplars'> {
  if (source === undefined) return {};
  const exemplars = Array.from({ length: slots }, (_, i) => {
    const exemplar = source.at(i);
    return exemplar === undefined ? null : exemplarOf(exemplar);
  });
  return exemplars.some((exemplar) => exemplar !== null) ? { exemplars } : {};
}

function exemplarOf({ value, timestampSeconds, traceId, spanId }: Exemplar): SnapshotExemplar {
  return { value, timestampSeconds, traceId, spanId };
}

/**
 * A snapshot's metrics as exposition families, in its order. The metrics must be well formed (a
 * worker's checked by the primary, an engine's built by the pull); one family's histograms that
 * share bounds share one bounds array, so writers format them once.
 */
export function snapshotFamilies(snapshot: ClusterSnapshot): ExpositionFamily[] {
  return snapshot.metrics.map(snapshotFamily);
}

export function snapshotFamily(metric: SnapshotMetric): ExpositionFamily {
  const type: ExpositionType = metric.kind === 'updowncounter' ? 'gauge' : metric.kind;
  const meta: FamilyMeta = {
    name: metric.name,
    type,
    help: metric.description,
    unit: metric.unit,
    ...(metric.sourceStem === undefined ? {} : { sourceStem: metric.sourceStem }),
  };
  const bounds = new Map<string, readonly number[]>();
  const sharedBounds = (boundaries: readonly number[]): readonly number[] => {
    const key = boundaries.join(',');
    let shared = bounds.get(key);
    if (shared === undefined) bounds.set(key, (shared = boundaries));
    return shared;
  };
  const series = metric.points.map((point): ExpositionSeries => {
    const attributes = point.attributes as Attributes;
    const labels = renderLabelText(attributes);
    const created = point.startTime === undefined ? undefined : StartTime.ofSeconds(point.startTime);
    const sourceLabels = sourceLabelsOf(attributes);
    if (type !== 'histogram') {
      const exemplars = point.exemplar === undefined ? undefined : new SlotExemplars([point.exemplar]);
      return { plain: labels.plain, created, value: numberOrNaN(point.value as number | null), sourceLabels, exemplars };
    }
    const histogram = point.value as SnapshotHistogram;
    return new SnapshotHistogramSeries(labels.plain, labels.leOffset, created, sourceLabels, sharedBounds(histogram.boundaries), histogram);
  });
  return { meta, series };
}

/** Exemplars kept as a list of slots. */
class SlotExemplars implements ExemplarSource {
  constructor(private readonly slots: ReadonlyArray<SnapshotExemplar | null>) {}

  at(slot: number): Exemplar | undefined {
    return this.slots[slot] ?? undefined;
  }
}

class SnapshotHistogramSeries implements HistogramSeriesData {
  readonly count: number;
  readonly sum: number;
  readonly native: NativeBucketsData | undefined;
  readonly exemplars: ExemplarSource | undefined;
  private readonly counts: readonly number[];

  constructor(
    readonly plain: string,
    readonly leOffset: number,
    readonly created: StartTime | undefined,
    readonly sourceLabels: Attributes | undefined,
    readonly bounds: readonly number[],
    histogram: SnapshotHistogram,
  ) {
    this.counts = histogram.counts;
    this.count = histogram.count;
    this.sum = numberOrNaN(histogram.sum);
    this.native = histogram.native;
    this.exemplars = histogram.exemplars === undefined ? undefined : new SlotExemplars(histogram.exemplars);
  }

  bucketCount(i: number): number {
    return this.counts[i] ?? 0;
  }
}
