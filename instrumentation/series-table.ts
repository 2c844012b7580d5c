import type { FamilyKey } from '../views/catalog/catalog';
import type { FamilySeries, LabelValue } from '../views/store/family-series';
import { NOOP_SERIES, type BoundSeries } from '../views/store/series';
import type { SeriesStore } from '../views/store/series-store';

type Node = Map<LabelValue, Node | BoundSeries>;

/**
 * The series of one family whose leading label values are fixed (usually `model_name`) and whose
 * trailing ones vary per call (stage, replica, reason…). Lookups walk nested maps keyed by the raw
 * values, so a cached lookup builds no string and allocates nothing; a miss binds the series in
 * the store. The cache stops growing at the family's cardinality limit (label values come from
 * the host); past it the store hands out the family's overflow series.
 */
export class SeriesTable {
  private readonly root: Node = new Map();
  private readonly family: FamilySeries | undefined;
  private readonly variableCount: number;
  private readonly maxCached: number;
  private size = 0;
  /** The family's generation the cache was filled in: series removed since then are not handed out. */
  private generation = 0;

  constructor(
    store: SeriesStore,
    key: FamilyKey,
    private readonly fixedValues: readonly LabelValue[],
  ) {
    this.family = store.family(key);
    this.maxCached = store.cardinalityLimit;
    const labelCount = this.family?.family.labels.length ?? fixedValues.length + 1;
    this.variableCount = labelCount - fixedValues.length;
    if (this.variableCount < 1 || this.variableCount > 4) throw new RangeError(`${key}: a series table takes 1 to 4 variable labels`);
  }

  /** The series for these values of the variable labels. */
  get(a: LabelValue, b?: LabelValue, c?: LabelValue, d?: LabelValue): BoundSeries {
    if (this.family === undefined) return NOOP_SERIES;
    if (this.family.generation !== this.generation) this.forgetCached(this.family.generation);
    const depth = this.variableCount;
    let node = this.root;
    for (let level = 0; level < depth - 1; level++) {
      const next = node.get((level === 0 ? a : level === 1 ? b : c) as LabelValue) as Node | undefined;
      if (next === undefined) return this.create(this.family, [a, b, c, d]);
      node = next;
    }
    const last = depth === 1 ? a : depth === 2 ? b : depth === 3 ? c : d;
    return (node.get(last as LabelValue) as BoundSeries | undefined) ?? this.create(this.family, [a, b, c, d]);
  }

  private forgetCached(generation: number): void {
    this.root.clear();
    this.size = 0;
    this.generation = generation;
  }

  private create(family: FamilySeries, args: Array<LabelValue | undefined>): BoundSeries {
    const values = args.slice(0, this.variableCount) as LabelValue[];
    const series = family.bind([...this.fixedValues, ...values]);
    if (this.size >= this.maxCached) return series;
    let node = this.root;
    for (const value of values.slice(0, -1)) {
      let next = node.get(value) as Node | undefined;
      if (next === undefined) {
        next = new Map();
        node.set(value, next);
      }
      node = next;
    }
    node.set(values[values.length - 1] as LabelValue, series);
    this.size++;
    return series;
  }
}
