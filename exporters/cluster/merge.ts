import type { AttributeValue } from '@opentelemetry/api';
import { WarnOnce } from '../../views/common/diag-warnings';
import {
  numberOrNaN,
  type ClusterSnapshot,
  type SnapshotExemplar,
  type SnapshotHistogram,
  type SnapshotKind,
  type SnapshotMetric,
  type SnapshotPoint,
} from '../snapshot';
import { NativeSum } from './native-merge';

/** How the same gauge series of several live workers becomes one value. */
export type GaugeMerge = 'sum' | 'max' | 'min';

/** Picks the merge of a gauge (or up-down counter) stream by its name and unit. */
export type GaugeMergePolicy = (metric: { readonly name: string; readonly unit: string; readonly kind: SnapshotKind }) => GaugeMerge;

interface MutableHistogram {
  boundaries: readonly number[];
  counts: number[];
  sum: number;
  count: number;
  /** The native buckets' sum; `null` once a part came without them (the sum would not count every observation). */
  native: NativeSum | null | undefined;
  /** Per classic bucket, the latest exemplar of any part. */
  exemplars: Array<SnapshotExemplar | null> | undefined;
}

interface Series {
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  value: number | MutableHistogram;
  /** The earliest start time any worker reported for the series (seconds since the epoch). */
  startTime?: number;
  /** A counter's latest exemplar of any part. */
  exemplar?: SnapshotExemplar;
}

interface Family {
  readonly name: string;
  readonly kind: SnapshotKind;
  readonly description: string;
  readonly unit: string;
  readonly sourceStem?: string;
  readonly merge?: GaugeMerge;
  readonly series: Map<string, Series>;
}

/**
 * Merges worker snapshots into the cluster's view:
 * - counters and histograms are summed per (name, label set) over the retired totals and every
 *   live worker, so a count never goes backwards when a worker exits;
 * - gauges and up-down counters are merged over live workers only (`policy`: summed where they
 *   count things, max for ratios, states and info families): an exited worker's running requests
 *   are not running any more.
 * Native buckets are summed with the classic ones, and each bucket (a counter) keeps the latest
 * exemplar of any worker. Each live worker contributes its latest cumulative snapshot once;
 * nothing here is kept between calls, so a worker's values are never added twice.
 */
export function mergeSnapshots(retired: ClusterSnapshot, live: readonly ClusterSnapshot[], policy: GaugeMergePolicy): ClusterSnapshot {
  const merged = new Merger(policy);
  merged.add(retired, false);
  for (const snapshot of live) merged.add(snapshot, true);
  return merged.result();
}

/** The retired totals once `exited` has left: its counters and histograms added, its gauges dropped. */
export function retireSnapshot(retired: ClusterSnapshot, exited: ClusterSnapshot): ClusterSnapshot {
  const merged = new Merger(() => 'sum');
  merged.add(retired, false);
  merged.add(exited, false);
  return merged.result();
}

const mergeWarnings = new WarnOnce();

class Merger {
  private readonly families = new Map<string, Family>();

  constructor(private readonly policy: GaugeMergePolicy) {}

  add(snapshot: ClusterSnapshot, live: boolean): void {
    for (const metric of snapshot.metrics) {
      const cumulative = metric.kind === 'counter' || metric.kind === 'histogram';
      if (!cumulative && !live) continue;
      const family = this.family(metric);
      if (family === undefined) continue;
      for (const point of metric.points) this.addPoint(family, point);
    }
  }

  result(): ClusterSnapshot {
    const metrics: SnapshotMetric[] = [];
    for (const family of this.families.values()) {
      const points: SnapshotPoint[] = [];
      for (const series of family.series.values()) {
        const value = series.value;
        points.push({
          attributes: series.attributes,
          value: typeof value === 'number' ? value : histogramValue(value),
          startTime: series.startTime,
          ...(series.exemplar === undefined ? {} : { exemplar: series.exemplar }),
        });
      }
      const sourceStem = family.sourceStem === undefined ? {} : { sourceStem: family.sourceStem };
      metrics.push({ name: family.name, kind: family.kind, description: family.description, unit: family.unit, ...sourceStem, points });
    }
    return { metrics };
  }

  private family(metric: SnapshotMetric): Family | undefined {
    const existing = this.families.get(metric.name);
    if (existing !== undefined) {
      if (existing.kind === metric.kind) return existing;
      this.warn(metric.name, `${metric.name} is a ${metric.kind} in one worker and a ${existing.kind} in another; the ${metric.kind} is dropped`);
      return undefined;
    }
    const levels = metric.kind === 'gauge' || metric.kind === 'updowncounter';
    const family: Family = {
      name: metric.name,
      kind: metric.kind,
      description: metric.description,
      unit: metric.unit,
      sourceStem: metric.sourceStem,
      merge: levels ? this.policy(metric) : undefined,
      series: new Map(),
    };
    this.families.set(metric.name, family);
    return family;
  }

  private addPoint(family: Family, point: SnapshotPoint): void {
    const key = seriesKey(point.attributes);
    const series = family.series.get(key);
    if (series !== undefined && point.startTime !== undefined) series.startTime = Math.min(series.startTime ?? Infinity, point.startTime);
    if (family.kind === 'histogram') {
      const incoming = point.value as SnapshotHistogram;
      if (series === undefined) {
        family.series.set(key, {
          attributes: point.attributes,
          value: {
            boundaries: [...incoming.boundaries],
            counts: [...incoming.counts],
            sum: numberOrNaN(incoming.sum),
            count: incoming.count,
            native: incoming.native === undefined ? undefined : new NativeSum(incoming.native),
            exemplars: incoming.exemplars === undefined ? undefined : [...incoming.exemplars],
          },
          startTime: point.startTime,
        });
        return;
      }
      const total = series.value as MutableHistogram;
      if (!sameBoundaries(total.boundaries, incoming.boundaries)) {
        this.warn(family.name, `${family.name}: workers use different bucket bounds; the mismatching worker's series is dropped`);
        return;
      }
      for (let i = 0; i < total.counts.length; i++) total.counts[i] = (total.counts[i] ?? 0) + (incoming.counts[i] ?? 0);
      total.sum += numberOrNaN(incoming.sum);
      total.count += incoming.count;
      this.addNative(family.name, total, incoming);
      total.exemplars = latestExemplars(total.exemplars, incoming.exemplars);
      return;
    }
    const value = numberOrNaN(point.value as number | null);
    if (series === undefined) {
      family.series.set(key, {
        attributes: point.attributes,
        value,
        startTime: point.startTime,
        ...(point.exemplar === undefined ? {} : { exemplar: point.exemplar }),
      });
      return;
    }
    series.exemplar = later(series.exemplar, point.exemplar);
    const current = series.value as number;
    switch (family.merge) {
      case 'max':
        series.value = Math.max(current, value);
        break;
      case 'min':
        series.value = Math.min(current, value);
        break;
      default:
        series.value = current + value;
    }
  }

  /** Native buckets join when every part has them; a part without them (another configuration) leaves the series classic. */
  private addNative(name: string, total: MutableHistogram, incoming: SnapshotHistogram): void {
    if (total.native === null) return;
    if (total.native === undefined || incoming.native === undefined) {
      if (total.native !== undefined || incoming.native !== undefined) {
        this.warn(`${name} native`, `${name}: some workers keep native buckets and some do not; the aggregate serves its classic buckets only`);
      }
      total.native = total.native === undefined && incoming.native === undefined ? undefined : null;
      return;
    }
    total.native.add(incoming.native);
  }

  private warn(key: string, message: string): void {
    // Shared by every merge (one per scrape): a mismatch that lasts is said once, not on every scrape.
    mergeWarnings.warn(key, message);
  }
}

function histogramValue(value: MutableHistogram): SnapshotHistogram {
  const { boundaries, counts, sum, count, native, exemplars } = value;
  return {
    boundaries,
    counts,
    sum,
    count,
    ...(native === undefined || native === null ? {} : { native: native.snapshot() }),
    ...(exemplars === undefined ? {} : { exemplars }),
  };
}

/** Per bucket, the later of two exemplars. */
function latestExemplars(
  kept: Array<SnapshotExemplar | null> | undefined,
  incoming: ReadonlyArray<SnapshotExemplar | null> | undefined,
): Array<SnapshotExemplar | null> | undefined {
  if (incoming === undefined) return kept;
  if (kept === undefined) return [...incoming];
  return kept.map((exemplar, i) => later(exemplar ?? undefined, incoming[i] ?? undefined) ?? null);
}

function later(a: SnapshotExemplar | undefined, b: SnapshotExemplar | undefined): SnapshotExemplar | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return b.timestampSeconds > a.timestampSeconds ? b : a;
}

/** The label set as a key independent of attribute order. */
function seriesKey(attributes: Readonly<Record<string, AttributeValue>>): string {
  return JSON.stringify(
    Object.keys(attributes)
      .sort()
      .map((key) => [key, attributes[key]]),
  );
}

function sameBoundaries(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((bound, i) => bound === b[i]);
}
