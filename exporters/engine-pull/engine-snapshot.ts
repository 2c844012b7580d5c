import type { AttributeValue } from '@opentelemetry/api';
import type { EngineRelabelProcessor } from '../../views/engine-relabel-processor';
import { LimitedWarning } from '../../views/diag-warnings';
import type { SnapshotMetric, SnapshotPoint } from '../cluster/snapshot';
import type { ParsedFamily, ParsedSample } from './exposition-parser';

/** Which samples of one parsed exposition belong to one configured replica, and how they are relabelled. */
export interface EngineSelection {
  /** The `engine` label value to take; samples without an `engine` label are taken for every replica of the URL. */
  readonly engine: string;
  /** The replica's flat engine index in the pipeline's stage/replica map (what the relabel processor resolves). */
  readonly engineIndex: number;
  /** The processor the views use: `{engine: "<flat index>"}` → `{stage, replica}`. */
  readonly relabel: Pick<EngineRelabelProcessor, 'process'>;
  /** Families kept: every `vllm:*` one, and those listed. */
  readonly keep: (familyName: string) => boolean;
  /** When a series without a `_created` sample was first seen (seconds): keeps its start time stable. */
  readonly firstSeen: (seriesKey: string) => number;
}

type Labels = Readonly<Record<string, string>>;

const unsupported = new LimitedWarning();
const malformed = new LimitedWarning();

/**
 * The families of one engine as cluster-snapshot metrics (the shape the cluster merge and the
 * serializer already take): `engine` replaced by `stage` + `replica`, each counter and histogram
 * series' `_created` sample carried as its start time, the `_created` gauge families themselves
 * consumed. Summaries have no place in the store's model and are left out (with a warning).
 */
export function engineSnapshot(families: readonly ParsedFamily[], selection: EngineSelection): SnapshotMetric[] {
  const created = createdTimes(families);
  const metrics: SnapshotMetric[] = [];
  for (const family of families) {
    if (created.consumed.has(family.name) || !selection.keep(family.name)) continue;
    if (family.type === 'summary') {
      unsupported.warn(`${family.name} is a summary; engine pull passes counters, gauges and histograms only`);
      continue;
    }
    const createdOf = created.byFamily.get(createdStem(family)) ?? new Map<string, number>();
    const metric = family.type === 'histogram' ? histogramMetric(family, selection, createdOf) : numberMetric(family, selection, createdOf);
    if (metric.points.length > 0 || family.samples.length === 0) metrics.push(metric);
  }
  return metrics;
}

/** The `_created` families: per parent stem, the created time of each label set. */
function createdTimes(families: readonly ParsedFamily[]): { consumed: Set<string>; byFamily: Map<string, Map<string, number>> } {
  const stems = new Set(families.filter((f) => f.type === 'counter' || f.type === 'histogram' || f.type === 'summary').map(createdStem));
  const consumed = new Set<string>();
  const byFamily = new Map<string, Map<string, number>>();
  for (const family of families) {
    if (family.type !== 'gauge' || !family.name.endsWith('_created')) continue;
    const stem = family.name.slice(0, -'_created'.length);
    if (!stems.has(stem)) continue;
    consumed.add(family.name);
    byFamily.set(stem, new Map(family.samples.map((sample) => [labelKey(sample.labels), sample.value])));
  }
  return { consumed, byFamily };
}

function createdStem(family: ParsedFamily): string {
  return family.type === 'counter' && family.name.endsWith('_total') ? family.name.slice(0, -'_total'.length) : family.name;
}

function numberMetric(family: ParsedFamily, selection: EngineSelection, created: Map<string, number>): SnapshotMetric {
  const kind = family.type === 'counter' ? 'counter' : 'gauge';
  // prometheus_client's 0.0.4 text names counters with `_total` on the TYPE line; other clients may not.
  const name = kind === 'counter' && !family.name.endsWith('_total') ? `${family.name}_total` : family.name;
  const points: SnapshotPoint[] = [];
  for (const sample of family.samples) {
    const attributes = relabelled(sample.labels, selection);
    if (attributes === undefined) continue;
    const key = labelKey(sample.labels);
    points.push({ attributes, value: sample.value, startTime: kind === 'counter' ? (created.get(key) ?? selection.firstSeen(`${name}${key}`)) : undefined });
  }
  return { name, kind, description: family.help, unit: '', points };
}

interface HistogramParts {
  readonly labels: Labels;
  readonly buckets: Array<[number, number]>;
  count?: number;
  sum?: number;
}

function histogramMetric(family: ParsedFamily, selection: EngineSelection, created: Map<string, number>): SnapshotMetric {
  const series = new Map<string, HistogramParts>();
  for (const sample of family.samples) {
    const { le, ...labels } = sample.labels;
    const key = labelKey(labels);
    let parts = series.get(key);
    if (parts === undefined) {
      parts = { labels, buckets: [] };
      series.set(key, parts);
    }
    addHistogramSample(family.name, parts, sample, le);
  }
  const points: SnapshotPoint[] = [];
  for (const [key, parts] of series) {
    const attributes = relabelled(parts.labels, selection);
    if (attributes === undefined) continue;
    const value = histogramValue(family.name, parts);
    if (value === undefined) continue;
    points.push({ attributes, value, startTime: created.get(key) ?? selection.firstSeen(`${family.name}${key}`) });
  }
  return { name: family.name, kind: 'histogram', description: family.help, unit: '', points };
}

function addHistogramSample(name: string, parts: HistogramParts, sample: ParsedSample, le: string | undefined): void {
  const suffix = sample.name.slice(name.length);
  if (suffix === '_bucket' && le !== undefined) parts.buckets.push([le === '+Inf' ? Infinity : Number(le), sample.value]);
  else if (suffix === '_count') parts.count = sample.value;
  else if (suffix === '_sum') parts.sum = sample.value;
}

/** Cumulative `le` buckets → bounds and per-bucket counts; a series whose buckets go down or miss `+Inf` is dropped. */
function histogramValue(name: string, parts: HistogramParts): SnapshotPoint['value'] | undefined {
  const buckets = [...parts.buckets].sort((a, b) => a[0] - b[0]);
  const last = buckets.at(-1);
  if (last === undefined || last[0] !== Infinity) {
    malformed.warn(`${name}: a series without its le="+Inf" bucket is left out`);
    return undefined;
  }
  const boundaries: number[] = [];
  const counts: number[] = [];
  let previous = 0;
  for (const [bound, cumulative] of buckets) {
    if (!(cumulative >= previous)) {
      malformed.warn(`${name}: a series whose cumulative bucket counts go down is left out`);
      return undefined;
    }
    if (bound !== Infinity) boundaries.push(bound);
    counts.push(cumulative - previous);
    previous = cumulative;
  }
  return { boundaries, counts, sum: parts.sum ?? 0, count: parts.count ?? last[1] };
}

/** The sample's labels with `engine` resolved to the replica's `stage` + `replica`; undefined for another engine's sample. */
function relabelled(labels: Labels, selection: EngineSelection): Record<string, AttributeValue> | undefined {
  const { engine, ...rest } = labels;
  if (engine !== undefined && engine !== selection.engine) return undefined;
  return selection.relabel.process({ ...rest, engine: String(selection.engineIndex) }) as Record<string, AttributeValue>;
}

/** A label set as a key independent of label order. */
export function labelKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
