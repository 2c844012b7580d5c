import type { Attributes } from '@opentelemetry/api';
import type { FamilyKey } from '../views/catalog';
import { NOOP_SERIES, type FamilyInstruments, type BoundSeries } from './family-instruments';

export type LabelValue = string | number;

/**
 * Beyond this many cached series a table stops caching (and binds per call): label values come
 * from the host, and a cache must never grow without bound. The SDK applies its own per-stream
 * cardinality limit on top.
 */
const MAX_CACHED_SERIES = 2000;

type Node = Map<LabelValue, Node | BoundSeries>;

/**
 * The series of one family, keyed by the values of its variable labels (e.g. stage, replica).
 * Lookups walk nested maps keyed by the raw values, so a cached lookup builds no string and
 * allocates nothing; the attribute object is built once, when the series is first used.
 */
export class SeriesTable {
  private readonly root: Node = new Map();
  private readonly enabled: boolean;
  private size = 0;

  constructor(
    private readonly instruments: FamilyInstruments,
    private readonly key: FamilyKey,
    private readonly constantAttributes: Attributes,
    private readonly labelNames: readonly string[],
  ) {
    this.enabled = instruments.has(key);
    if (labelNames.length < 1 || labelNames.length > 4) throw new RangeError('a series table takes 1 to 4 variable labels');
  }

  /** The series for these label values (as many as the table's variable labels). */
  get(a: LabelValue, b?: LabelValue, c?: LabelValue, d?: LabelValue): BoundSeries {
    if (!this.enabled) return NOOP_SERIES;
    const depth = this.labelNames.length;
    let node = this.root;
    for (let level = 0; level < depth - 1; level++) {
      const value = level === 0 ? a : level === 1 ? b : c;
      const next = node.get(value as LabelValue) as Node | undefined;
      if (next === undefined) return this.create(a, b, c, d);
      node = next;
    }
    const last = depth === 1 ? a : depth === 2 ? b : depth === 3 ? c : d;
    return (node.get(last as LabelValue) as BoundSeries | undefined) ?? this.create(a, b, c, d);
  }

  private create(a: LabelValue, b?: LabelValue, c?: LabelValue, d?: LabelValue): BoundSeries {
    const values = [a, b, c, d].slice(0, this.labelNames.length) as LabelValue[];
    const attributes: Attributes = { ...this.constantAttributes };
    this.labelNames.forEach((name, i) => {
      attributes[name] = String(values[i]);
    });
    const series = this.instruments.bind(this.key, attributes);
    if (this.size >= MAX_CACHED_SERIES) return series;
    let node = this.root;
    for (let level = 0; level < values.length - 1; level++) {
      const value = values[level] as LabelValue;
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
