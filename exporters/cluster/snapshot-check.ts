import type { AttributeValue } from '@opentelemetry/api';
import type { ResolvedCatalog } from '../../views/catalog/catalog';
import { LimitedWarning } from '../../views/common/diag-warnings';
import { MAX_NATIVE_SCHEMA, MIN_NATIVE_SCHEMA } from '../../views/store/native-buckets';
import { isPrintableTrace } from '../../views/store/exemplar-trace-ids';
import type {
  ClusterSnapshot,
  SnapshotBucketRun,
  SnapshotExemplar,
  SnapshotHistogram,
  SnapshotKind,
  SnapshotMetric,
  SnapshotNative,
  SnapshotPoint,
} from '../snapshot';

/** What a stream is fixed to once and for all: its kind and, for a histogram, its bucket bounds. */
interface StreamLayout {
  readonly kinds: readonly SnapshotKind[];
  bounds?: readonly number[];
}

/** Streams outside the catalog whose layout is pinned by their first snapshot; beyond this many, new ones are left out. */
export const MAX_PINNED_STREAMS = 4096;

const SNAPSHOT_KINDS: readonly SnapshotKind[] = ['counter', 'updowncounter', 'gauge', 'histogram'];

/** A snapshot that crossed the IPC channel, reduced to its well-formed points, and what was left out. */
export interface CheckedSnapshot {
  readonly snapshot: ClusterSnapshot;
  /** One line per stream that lost points (or was left out whole), with the first reason; empty when nothing was dropped. */
  readonly dropped: readonly string[];
}

/**
 * Checks, point by point, the snapshots workers send before the primary stores them, so a worker
 * can never make the merge, a scrape or its own exit throw. A catalog family's kind and histogram
 * bounds are the primary's catalog's; a stream outside the catalog is fixed by the first snapshot
 * that carries it. A point that does not fit (attributes that are not a map of strings, numbers or
 * booleans; a counter that is not a finite non-negative number; a histogram with other bounds,
 * counts that do not add up, a non-finite sum) is dropped with a rate-limited warning, and the rest
 * of the snapshot is kept. Since every stored histogram of a stream has the same bounds, the
 * retired totals and the live workers always merge, and no aggregated count goes backwards.
 */
export class SnapshotChecker {
  private readonly layouts = new Map<string, StreamLayout>();
  private pinned = 0;
  private readonly warning = new LimitedWarning();

  constructor(catalog: ResolvedCatalog) {
    for (const family of catalog.families) {
      const kinds: readonly SnapshotKind[] = family.type === 'gauge' ? ['gauge', 'updowncounter'] : [family.type];
      const layout: StreamLayout = { kinds, bounds: family.type === 'histogram' ? [...(family.buckets ?? [])] : undefined };
      // The `vllm` naming exposes the stream under the family's name, the `otel` naming under its otel name.
      this.layouts.set(family.name, layout);
      this.layouts.set(family.otelName, layout);
    }
  }

  /** The well-formed part of a worker's snapshot; warns (rate-limited) naming the worker and the streams when anything was dropped. */
  check(snapshot: unknown, worker: string): CheckedSnapshot {
    const dropped: string[] = [];
    const metrics: SnapshotMetric[] = [];
    const entries = isRecord(snapshot) && Array.isArray(snapshot.metrics) ? (snapshot.metrics as unknown[]) : undefined;
    if (entries === undefined) dropped.push('the snapshot: not an object with a metrics list');
    for (const entry of entries ?? []) {
      const metric = this.checkMetric(entry, dropped);
      if (metric !== undefined) metrics.push(metric);
    }
    if (dropped.length > 0) {
      this.warning.warn(
        `cluster worker ${worker} sent points the primary cannot merge; they are left out, the rest is served: ${dropped.slice(0, 5).join('; ')}`,
      );
    }
    return { snapshot: { metrics }, dropped };
  }

  private checkMetric(entry: unknown, dropped: string[]): SnapshotMetric | undefined {
    if (!isRecord(entry) || typeof entry.name !== 'string' || entry.name === '') {
      dropped.push('a stream without a name');
      return undefined;
    }
    const name = entry.name;
    const kind = entry.kind as SnapshotKind;
    if (!SNAPSHOT_KINDS.includes(kind)) {
      dropped.push(`${name}: unknown kind ${JSON.stringify(entry.kind)}`);
      return undefined;
    }
    const layout = this.layoutFor(name, kind, entry.points);
    if (layout === undefined) {
      dropped.push(`${name}: not more than ${MAX_PINNED_STREAMS} streams outside the catalog`);
      return undefined;
    }
    if (!layout.kinds.includes(kind)) {
      dropped.push(`${name}: a ${kind} here, a ${layout.kinds.join(' or ')} for the primary`);
      return undefined;
    }
    if (!Array.isArray(entry.points)) {
      dropped.push(`${name}: no points list`);
      return undefined;
    }
    const points: SnapshotPoint[] = [];
    let firstProblem: string | undefined;
    for (const raw of entry.points as unknown[]) {
      const point = checkPoint(raw, kind, layout);
      if (typeof point === 'string') firstProblem ??= point;
      else points.push(point);
    }
    if (firstProblem !== undefined) dropped.push(`${name}: ${(entry.points as unknown[]).length - points.length} point(s) dropped (${firstProblem})`);
    return {
      name,
      kind,
      description: typeof entry.description === 'string' ? entry.description : '',
      unit: typeof entry.unit === 'string' ? entry.unit : '',
      ...(typeof entry.sourceStem === 'string' && entry.sourceStem !== '' ? { sourceStem: entry.sourceStem } : {}),
      points,
    };
  }

  /** The stream's layout: the catalog's, or pinned now from this first snapshot (its first well-formed histogram's bounds). */
  private layoutFor(name: string, kind: SnapshotKind, points: unknown): StreamLayout | undefined {
    let layout = this.layouts.get(name);
    if (layout === undefined) {
      if (this.pinned >= MAX_PINNED_STREAMS) return undefined;
      layout = { kinds: kind === 'gauge' || kind === 'updowncounter' ? ['gauge', 'updowncounter'] : [kind] };
      this.layouts.set(name, layout);
      this.pinned++;
    }
    if (layout.bounds === undefined && kind === 'histogram' && layout.kinds.includes('histogram') && Array.isArray(points)) {
      layout.bounds = (points as unknown[]).map(boundsOf).find((bounds) => bounds !== undefined);
    }
    return layout;
  }
}

/** The point, copied, or why it was dropped. */
function checkPoint(raw: unknown, kind: SnapshotKind, layout: StreamLayout): SnapshotPoint | string {
  if (!isRecord(raw)) return 'a point that is not an object';
  const attributes = checkAttributes(raw.attributes);
  if (attributes === undefined) return 'attributes that are not a map of strings, numbers or booleans';
  if (raw.startTime !== undefined && !isFiniteNumber(raw.startTime)) return 'a start time that is not a number';
  const startTime = raw.startTime as number | undefined;
  const value = raw.value;
  const point = (checked: SnapshotPoint['value']): SnapshotPoint =>
    startTime === undefined ? { attributes, value: checked } : { attributes, value: checked, startTime };
  switch (kind) {
    case 'counter': {
      if (!(isFiniteNumber(value) && value >= 0)) return 'a counter value that is not a finite number >= 0';
      if (raw.exemplar === undefined) return point(value);
      const exemplar = checkExemplar(raw.exemplar);
      return exemplar === undefined ? 'an exemplar that is not a value, a time and a W3C trace' : { ...point(value), exemplar };
    }
    case 'gauge':
    case 'updowncounter':
      // JSON carries NaN and infinities as null.
      return isFiniteNumber(value) || value === null ? point(value) : 'a value that is not a number';
    case 'histogram': {
      const histogram = checkHistogram(value, layout.bounds);
      return typeof histogram === 'string' ? histogram : point(histogram);
    }
  }
}

function checkAttributes(value: unknown): Record<string, AttributeValue> | undefined {
  if (!isRecord(value)) return undefined;
  const attributes: Record<string, AttributeValue> = {};
  for (const [key, attribute] of Object.entries(value)) {
    // JSON.parse makes `__proto__` an own key; assigning it would not add an attribute.
    if (key === '__proto__') return undefined;
    if (typeof attribute !== 'string' && typeof attribute !== 'boolean' && !isFiniteNumber(attribute)) return undefined;
    attributes[key] = attribute;
  }
  return attributes;
}

function checkHistogram(value: unknown, bounds: readonly number[] | undefined): SnapshotHistogram | string {
  if (!isRecord(value)) return 'a histogram value that is not an object';
  if (bounds === undefined || !sameNumbers(value.boundaries, bounds)) return `bucket bounds other than the primary's [${(bounds ?? []).join(', ')}]`;
  const counts = value.counts;
  if (!Array.isArray(counts) || counts.length !== bounds.length + 1 || !counts.every(isCount)) return 'bucket counts that are not one count per bucket';
  const total = (counts as number[]).reduce((a, b) => a + b, 0);
  if (value.count !== total) return 'a count that is not the sum of the bucket counts';
  if (!isFiniteNumber(value.sum)) return 'a sum that is not a finite number';
  const checked: SnapshotHistogram = { boundaries: bounds, counts: [...(counts as number[])], sum: value.sum, count: total };
  let native: SnapshotNative | undefined;
  if (value.native !== undefined) {
    native = checkNative(value.native, total);
    if (native === undefined) return 'native buckets that are not a schema, a zero bucket and runs counting the same observations';
  }
  let exemplars: Array<SnapshotExemplar | null> | undefined;
  if (value.exemplars !== undefined) {
    if (!Array.isArray(value.exemplars) || value.exemplars.length !== counts.length) return 'exemplars that are not one per bucket';
    exemplars = [];
    for (const raw of value.exemplars as unknown[]) {
      const exemplar = raw === null ? null : checkExemplar(raw);
      if (exemplar === undefined) return 'an exemplar that is not a value, a time and a W3C trace';
      exemplars.push(exemplar);
    }
  }
  return { ...checked, ...(native === undefined ? {} : { native }), ...(exemplars === undefined ? {} : { exemplars }) };
}

/** Native buckets the writers can print: a schema Prometheus knows, whole counts, and as many observations as the classic buckets. */
function checkNative(value: unknown, count: number): SnapshotNative | undefined {
  if (!isRecord(value)) return undefined;
  const { schema, zeroThreshold, zeroCount } = value;
  if (!Number.isInteger(schema) || (schema as number) < MIN_NATIVE_SCHEMA || (schema as number) > MAX_NATIVE_SCHEMA) return undefined;
  if (!isFiniteNumber(zeroThreshold) || zeroThreshold < 0 || !isCount(zeroCount)) return undefined;
  const positive = checkRun(value.positive);
  const negative = checkRun(value.negative);
  if (positive === undefined || negative === undefined) return undefined;
  const total = [...positive.counts, ...negative.counts].reduce((a, b) => a + b, zeroCount as number);
  if (total !== count) return undefined;
  return { schema: schema as number, zeroThreshold, zeroCount: zeroCount as number, positive, negative };
}

/** At most this many buckets in one run: a schema-8 run over the whole range of doubles is 2^8 × 2 × 1024 wide. */
const MAX_RUN_WIDTH = 2 ** 19;

function checkRun(value: unknown): SnapshotBucketRun | undefined {
  if (!isRecord(value) || !Number.isSafeInteger(value.offset) || !Array.isArray(value.counts)) return undefined;
  if (value.counts.length > MAX_RUN_WIDTH || !value.counts.every(isCount)) return undefined;
  return { offset: value.offset as number, counts: [...(value.counts as number[])] };
}

/** An exemplar as the package keeps them: finite value and time, and a trace it would print. */
function checkExemplar(value: unknown): SnapshotExemplar | undefined {
  if (!isRecord(value) || !isFiniteNumber(value.value) || !isFiniteNumber(value.timestampSeconds) || value.timestampSeconds < 0) return undefined;
  if (typeof value.traceId !== 'string' || typeof value.spanId !== 'string') return undefined;
  const trace = { traceId: value.traceId, spanId: value.spanId };
  return isPrintableTrace(trace) ? { value: value.value, timestampSeconds: value.timestampSeconds, ...trace } : undefined;
}

/** A histogram value's bounds, when they are finite and strictly increasing. */
function boundsOf(point: unknown): readonly number[] | undefined {
  const value = isRecord(point) ? point.value : undefined;
  const bounds = isRecord(value) ? value.boundaries : undefined;
  if (!Array.isArray(bounds) || !bounds.every(isFiniteNumber)) return undefined;
  return bounds.every((bound, i) => i === 0 || bound > (bounds[i - 1] as number)) ? [...(bounds as number[])] : undefined;
}

function sameNumbers(value: unknown, expected: readonly number[]): boolean {
  return Array.isArray(value) && value.length === expected.length && value.every((bound, i) => bound === expected[i]);
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
