import type { FamilyType } from '../../views/family-definition';
import { snapshotToResourceMetrics, type SnapshotMetric } from '../snapshot';
import { seriesLines, type SeriesLines } from '../prometheus-serializer';
import { prometheusFamilyName, prometheusType } from '../samples';
import { replicaKey } from '../../views/stage-replica-map';
import { createdHeader, familyHeader, PIECE_CHARACTERS } from '../exposition-text';
import type { JoinedSeries } from '../store-exposition';

/** One family's pulled series, as lines of every engine that printed it, in configuration order. */
export interface PulledFamilyLines {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
  lines: SeriesLines;
}

/**
 * One pull's families rendered once, as the lines `/metrics` prints: every scrape until the next
 * pull concatenates them, in the store's family blocks for the families the store has too and in
 * blocks of their own after them for the others. The engines are relabelled and checked before
 * (see `engineSnapshot`); this only formats, engine by engine, so the work is spread over the
 * pull's slices.
 */
export class PulledExposition {
  readonly families = new Map<string, PulledFamilyLines>();

  /** Appends one engine's families (or the scrape-up gauge), joined by name with the families already added. */
  add(metrics: readonly SnapshotMetric[], nowMillis: number): void {
    const [scope] = snapshotToResourceMetrics({ metrics }, nowMillis).scopeMetrics;
    for (const metric of scope?.metrics ?? []) {
      const type = prometheusType(metric);
      if (type === undefined) continue;
      const name = prometheusFamilyName(metric.descriptor.name, type);
      const lines = seriesLines(metric, name, type);
      const family = this.families.get(name);
      if (family === undefined) this.families.set(name, { name, type, help: metric.descriptor.description, lines });
      else if (family.type === type) family.lines = joinLines(family.lines, lines);
    }
  }
}

/**
 * The store's side of a pull: which of its series the pulled ones stand for (a pulled replica's,
 * in families that carry vLLM's `engine` label), and the pulled lines of each of its families.
 */
export function joinedWithStore(exposition: PulledExposition, pulledReplicas: ReadonlySet<string>): JoinedSeries {
  return {
    replaced: (series) => pulledReplicas.has(replicaKey(series.labelValue('stage') ?? '', series.labelValue('replica') ?? '')),
    lines: (name, type) => {
      const family = exposition.families.get(name);
      return family?.type === type ? family.lines : undefined;
    },
  };
}

/** The pulled families the store does not have, each a block of its own (header, lines, and in 0.0.4 text its `_created` block). */
export function* pulledOnlyFamilies(
  exposition: PulledExposition,
  storeFamilies: ReadonlySet<string>,
  openMetrics: boolean,
  createdSeries: boolean,
): Generator<string, void, undefined> {
  let out = '';
  for (const { name, type, help, lines } of exposition.families.values()) {
    if (storeFamilies.has(name)) continue;
    out += familyHeader(name, type, help, openMetrics);
    if (openMetrics) out += createdSeries ? lines.openMetrics : lines.openMetricsWithoutCreated;
    else {
      out += lines.text;
      if (createdSeries && lines.textCreated !== '') out += createdHeader(name, type, help) + lines.textCreated;
    }
    if (out.length >= PIECE_CHARACTERS) {
      yield out;
      out = '';
    }
  }
  if (out !== '') yield out;
}

function joinLines(a: SeriesLines, b: SeriesLines): SeriesLines {
  return {
    text: a.text + b.text,
    textCreated: a.textCreated + b.textCreated,
    openMetrics: a.openMetrics + b.openMetrics,
    openMetricsWithoutCreated: a.openMetricsWithoutCreated + b.openMetricsWithoutCreated,
  };
}
