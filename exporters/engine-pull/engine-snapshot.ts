import type { AttributeValue } from '@opentelemetry/api';
import type { EngineRelabelProcessor } from '../../views/engine-relabel-processor';
import { LimitedWarning } from '../../views/common/diag-warnings';
import type { SnapshotHistogram, SnapshotMetric, SnapshotPoint } from '../snapshot';
import type { ParsedFamily, ParsedSample } from '../parsed-family';
import type { FamilyNames, PrintedKind } from './family-names';

/** Which samples of one parsed exposition belong to one configured replica, and how they are relabelled. */
export interface EngineSelection {
  /** The `engine` label value to take; samples without an `engine` label are taken for every replica of the URL. */
  readonly engine: string;
  /** How warnings name this engine (`engine 0 of http://10.0.0.7:8000/metrics`). */
  readonly source: string;
  /** The replica's flat engine index in the pipeline's stage/replica map (what the relabel processor resolves). */
  readonly engineIndex: number;
  /** The processor the views use: `{engine: "<flat index>"}` → `{stage, replica}`. */
  readonly relabel: Pick<EngineRelabelProcessor, 'process'>;
  /** Families kept: every `vllm:*` one, and those listed. */
  readonly keep: (familyName: string) => boolean;
  /** When a series without a usable `_created` sample was first seen (seconds): keeps its start time stable. */
  readonly firstSeen: (seriesKey: string) => number;
  /** The names already printed in this exposition (the package's own, earlier engines'): a clashing family is left out. */
  readonly names: FamilyNames;
  /** Series each family may still take in this pull (the store's cardinality limit, shared by every engine). */
  readonly budget: SeriesBudget;
  /** The puller's rate-limited warnings. */
  readonly warnings: PullWarnings;
}

/** One rate-limited warning per kind of problem, per puller: a flood costs a comparison, not a log line. */
export class PullWarnings {
  readonly unsupported = new LimitedWarning();
  readonly leftOut = new LimitedWarning();
  readonly overLimit = new LimitedWarning();
  readonly badCreated = new LimitedWarning();
}

type Labels = Readonly<Record<string, string>>;

/** Latest start time a point may carry: 2262-04-11, where OTLP's nanoseconds since the epoch leave int64. */
const MAX_START_SECONDS = 9_223_372_036;

/**
 * Pulled series per family, over every engine of one pull, bounded like the store's own series
 * (`cardinalityLimit` per family). Series past the bound are dropped, not folded into an overflow
 * series as the store does: the engine's figures are its own totals, and a fold would print a sum
 * of other series' totals that no engine reported. Engines take their share in configuration order.
 */
export class SeriesBudget {
  private readonly used = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** How many of `wanted` new series of `family` may be kept. */
  take(family: string, wanted: number): number {
    const used = this.used.get(family) ?? 0;
    const granted = Math.max(0, Math.min(wanted, this.limit - used));
    this.used.set(family, used + granted);
    return granted;
  }
}

/**
 * The families of one engine as cluster-snapshot metrics (the shape the serializer and the OTLP
 * exporters are given): `engine` replaced by `stage` + `replica`, each counter and histogram
 * series' `_created` sample carried as its start time, the `_created` gauge families themselves
 * consumed. A family that would make the exposition invalid, or carry a value no exporter can
 * take, is left out (that engine's family only) with a warning naming the engine and the family:
 * a name the package prints itself or that clashes with one already printed, a reserved label
 * (`__name__`), two series that become one once relabelled, a NaN, infinite or negative counter,
 * a histogram whose buckets are not well formed. Summaries have no place in the store's model and
 * are left out too. A `_created` that is not a usable start time is replaced by when the series was
 * first seen.
 */
export function engineSnapshot(families: readonly ParsedFamily[], selection: EngineSelection): SnapshotMetric[] {
  const created = createdTimes(families);
  const metrics: SnapshotMetric[] = [];
  for (const family of families) {
    if (created.consumed.has(family.name) || !selection.keep(family.name)) continue;
    const metric = familyMetric(family, selection, created.byFamily.get(createdStem(family)) ?? new Map<string, number>());
    if (metric !== undefined) metrics.push(metric);
  }
  return metrics;
}

function familyMetric(family: ParsedFamily, selection: EngineSelection, created: Map<string, number>): SnapshotMetric | undefined {
  if (family.type === 'summary') {
    selection.warnings.unsupported.warn(`${family.name} of ${selection.source} is a summary; engine pull passes counters, gauges and histograms only`);
    return undefined;
  }
  const built = family.type === 'histogram' ? histogramMetric(family, selection, created) : numberMetric(family, selection, created);
  if (typeof built === 'string') {
    selection.warnings.leftOut.warn(`${family.name} of ${selection.source} is left out: ${built}`);
    return undefined;
  }
  if (built.points.length === 0 && family.samples.length > 0) return undefined;
  const refused = selection.names.claim(built.name, built.kind as PrintedKind);
  if (refused !== undefined) {
    selection.warnings.leftOut.warn(`${built.name} of ${selection.source} is left out: ${refused}`);
    return undefined;
  }
  const granted = selection.budget.take(built.name, built.points.length);
  if (granted < built.points.length || (family.droppedSamples ?? 0) > 0) {
    selection.warnings.overLimit.warn(
      `${built.name} of ${selection.source} has more series than cardinalityLimit (${selection.budget.limit} per family); the series past it are dropped`,
    );
  }
  return granted < built.points.length ? { ...built, points: built.points.slice(0, granted) } : built;
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

function numberMetric(family: ParsedFamily, selection: EngineSelection, created: Map<string, number>): SnapshotMetric | string {
  const kind = family.type === 'counter' ? 'counter' : 'gauge';
  // prometheus_client's 0.0.4 text names counters with `_total` on the TYPE line; other clients may not.
  const name = kind === 'counter' && !family.name.endsWith('_total') ? `${family.name}_total` : family.name;
  const points: SnapshotPoint[] = [];
  const seen = new Set<string>();
  for (const sample of family.samples) {
    const attributes = relabelled(sample.labels, selection);
    if (attributes === undefined) continue;
    if (typeof attributes === 'string') return attributes;
    const relabelledKey = attributesKey(attributes);
    if (seen.has(relabelledKey)) return 'two of its series are one once engine is replaced by stage and replica';
    seen.add(relabelledKey);
    if (kind === 'counter' && !(Number.isFinite(sample.value) && sample.value >= 0)) return `a counter of ${String(sample.value)}`;
    const key = labelKey(sample.labels);
    points.push({ attributes, value: sample.value, startTime: kind === 'counter' ? startTime(name, key, created, selection) : undefined });
  }
  return { name, kind, description: family.help, unit: '', points };
}

interface HistogramParts {
  readonly labels: Labels;
  readonly buckets: Array<[number, number]>;
  count?: number;
  sum?: number;
}

function histogramMetric(family: ParsedFamily, selection: EngineSelection, created: Map<string, number>): SnapshotMetric | string {
  const series = new Map<string, HistogramParts>();
  for (const sample of family.samples) {
    const { le, ...labels } = sample.labels;
    const key = labelKey(labels);
    let parts = series.get(key);
    if (parts === undefined) {
      parts = { labels, buckets: [] };
      series.set(key, parts);
    }
    const problem = addHistogramSample(family.name, parts, sample, le);
    if (problem !== undefined) return problem;
  }
  const points: SnapshotPoint[] = [];
  const seen = new Set<string>();
  for (const [key, parts] of series) {
    const attributes = relabelled(parts.labels, selection);
    if (attributes === undefined) continue;
    if (typeof attributes === 'string') return attributes;
    const relabelledKey = attributesKey(attributes);
    if (seen.has(relabelledKey)) return 'two of its series are one once engine is replaced by stage and replica';
    seen.add(relabelledKey);
    const value = histogramValue(parts);
    if (typeof value === 'string') return value;
    points.push({ attributes, value, startTime: startTime(family.name, key, created, selection) });
  }
  return { name: family.name, kind: 'histogram', description: family.help, unit: '', points };
}

function addHistogramSample(name: string, parts: HistogramParts, sample: ParsedSample, le: string | undefined): string | undefined {
  const suffix = sample.name.slice(name.length);
  if (suffix === '_bucket' && le !== undefined) {
    // The parser accepted `le` as a Go float; Number reads the same spellings (`+Inf`, `1e3`) but not Go's `inf` / `nan` ones.
    const bound = /^[+-]?inf(inity)?$/i.test(le) ? (le.startsWith('-') ? -Infinity : Infinity) : Number(le);
    parts.buckets.push([bound, sample.value]);
  } else if (le !== undefined) return `an le label on ${sample.name}`;
  else if (suffix === '_count') parts.count = sample.value;
  else if (suffix === '_sum') parts.sum = sample.value;
  return undefined;
}

/**
 * Cumulative `le` buckets → bounds and per-bucket counts, or why the series cannot be printed:
 * bounds must be distinct numbers from zero up (`le="1"` and `le="1.0"` are one bound) ending at
 * `+Inf`, cumulative counts whole numbers that never go down, `_count` (when printed) that of
 * `+Inf`, `_sum` finite.
 */
function histogramValue(parts: HistogramParts): SnapshotHistogram | string {
  const buckets = [...parts.buckets].sort((a, b) => a[0] - b[0]);
  const last = buckets.at(-1);
  if (last === undefined || last[0] !== Infinity) return 'a series without its le="+Inf" bucket';
  const boundaries: number[] = [];
  const counts: number[] = [];
  let previous = 0;
  let previousBound = -Infinity;
  for (const [bound, cumulative] of buckets) {
    if (Number.isNaN(bound) || bound < 0) return `a bucket bound of ${String(bound)}`;
    if (bound === previousBound) return `two buckets with the bound ${String(bound)} in one series`;
    if (!Number.isInteger(cumulative) || cumulative < previous) return 'cumulative bucket counts that are not whole numbers going up';
    if (bound !== Infinity) boundaries.push(bound);
    counts.push(cumulative - previous);
    previous = cumulative;
    previousBound = bound;
  }
  if (parts.count !== undefined && parts.count !== last[1]) return `a _count of ${String(parts.count)} where the +Inf bucket counts ${String(last[1])}`;
  const sum = parts.sum ?? 0;
  if (!Number.isFinite(sum)) return `a _sum of ${String(sum)}`;
  return { boundaries, counts, sum, count: last[1] };
}

/** The series' `_created` when it is a time an exporter can carry, else when the series was first seen. */
function startTime(name: string, key: string, created: Map<string, number>, selection: EngineSelection): number {
  const printed = created.get(key);
  if (printed !== undefined && Number.isFinite(printed) && printed >= 0 && printed <= MAX_START_SECONDS) return printed;
  if (printed !== undefined)
    selection.warnings.badCreated.warn(`${name} of ${selection.source} has a _created of ${String(printed)}; its start time is when it was first seen`);
  return selection.firstSeen(`${name}${key}`);
}

/**
 * The sample's labels with `engine` resolved to the replica's `stage` + `replica`; undefined for
 * another engine's sample; why not for a label name Prometheus reserves.
 */
function relabelled(labels: Labels, selection: EngineSelection): Record<string, AttributeValue> | undefined | string {
  const { engine, ...rest } = labels;
  if (engine !== undefined && engine !== selection.engine) return undefined;
  for (const label in rest) if (label.startsWith('__')) return `the label name ${label} is reserved`;
  return selection.relabel.process({ ...rest, engine: String(selection.engineIndex) }) as Record<string, AttributeValue>;
}

/** A label set as a key independent of label order. */
export function labelKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function attributesKey(attributes: Readonly<Record<string, AttributeValue>>): string {
  return JSON.stringify(
    Object.entries(attributes)
      .map(([key, value]) => [key, String(value)])
      .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
  );
}
