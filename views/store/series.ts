import type { Attributes, HrTime } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { formatGoFloat } from '../common/go-float';
import type { LimitedWarning } from '../common/diag-warnings';
import { readLabelValue } from './label-text';
import type { ExemplarScope } from './exemplar-scope';

/** One series of one family, bound once: `record` adds to a counter, sets a gauge, observes a histogram. */
export interface BoundSeries {
  record(value: number): void;
}

/** The bucket a finite value falls in: the first bound it does not exceed (upper bounds inclusive), `bounds.length` for `+Inf`. */
export function bucketIndex(bounds: Float64Array, value: number): number {
  let low = 0;
  let high = bounds.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (value <= (bounds[middle] as number)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Shared do-nothing series for families this configuration does not register. */
export const NOOP_SERIES: BoundSeries = Object.freeze({ record(): void {} });

/** What a series needs of its family: its bucket bounds, and its name on the rare paths (a rejected value). */
export interface SeriesOwner {
  readonly name: string;
  readonly invalidValues: LimitedWarning;
  /** Histograms' bucket bounds (empty for other types). */
  readonly bounds: Float64Array;
  /** The trace and time the series' exemplars are taken at, when its family keeps them. */
  readonly exemplarScope?: ExemplarScope | undefined;
  /** The attributes of a series with this label text (frozen). */
  attributesOf(plain: string): Attributes;
}

/**
 * When series were created. Series bound within a millisecond of each other (the many bound at
 * registration, a replica's series when it joins) share one of these, so a series carries one
 * pointer for its creation time and the `_created` text is formatted once per group, when first
 * printed.
 */
export class CreationTime {
  private text: string | undefined;
  /** The creation time as OpenTelemetry carries it: a cumulative point's start time. */
  readonly hrTime: HrTime;

  constructor(
    /** Milliseconds since the epoch (fractional). */
    readonly millis: number,
  ) {
    this.hrTime = millisToHrTime(millis);
  }

  /** Seconds since the epoch, as the `_created` sample prints it. */
  get exposition(): string {
    if (this.text === undefined) this.text = formatGoFloat(this.hrTime[0] + this.hrTime[1] / 1e9);
    return this.text;
  }
}

/**
 * The identity every kind of series shares: its labels as the exposition prints them, and when it
 * was created. The label text is the only copy of the labels the series keeps (it is also the
 * family's lookup key); the attributes OpenTelemetry readers need are read back from it the first
 * time one asks, so a store that is only scraped never holds them.
 */
export abstract class StoredSeries implements BoundSeries {
  private attributesRead: Attributes | undefined;

  constructor(
    readonly owner: SeriesOwner,
    /** `{a="1",b="2"}`, or `''` for a series without labels: the labels of every non-bucket sample. */
    readonly plain: string,
    readonly created: CreationTime,
    /** Set for series whose attributes are not just their label text read back (an info family's, the overflow series). */
    attributes?: Attributes,
  ) {
    this.attributesRead = attributes;
  }

  /** The labels as OpenTelemetry attributes (in the family's label order); frozen, the same object on every call, so consumers may cache by identity. */
  get attributes(): Attributes {
    if (this.attributesRead === undefined) this.attributesRead = this.owner.attributesOf(this.plain);
    return this.attributesRead;
  }

  /** The creation time as OpenTelemetry carries it: a cumulative point's start time. */
  get createdTime(): HrTime {
    return this.created.hrTime;
  }

  /** One label's value, read from the label text without building the attributes. */
  labelValue(name: string): string | undefined {
    return readLabelValue(this.plain, name);
  }

  abstract record(value: number): void;

  protected reject(value: unknown, why: string): void {
    const shown = typeof value === 'number' ? String(value) : `a ${typeof value}`;
    this.owner.invalidValues.warn(`${this.owner.name}${this.plain}: ${shown} dropped (${why})`);
  }
}

/**
 * A monotonic total: increments must be finite and not negative (prometheus_client raises on
 * negative), and must leave the total finite.
 */
export class CounterSeries extends StoredSeries {
  value = 0;

  record(increment: number): void {
    // The usual case in a few bytes of bytecode, so that V8 inlines it into any record path.
    // `typeof` first: a Symbol or BigInt from an untyped caller must not reach the arithmetic.
    if (typeof increment === 'number' && increment > 0 && this.value + increment < Infinity) this.value += increment;
    else if (increment !== 0) this.refuse(increment);
  }

  /** Not a finite increment ≥ 0, or one the total cannot take: refused with a warning. */
  private refuse(increment: unknown): void {
    if (typeof increment === 'number' && increment > 0) this.reject(increment, 'the total would no longer be finite');
    else this.reject(increment, 'a counter takes finite increments >= 0');
  }
}

/** The last value set; setting the value it already holds is a single comparison. */
export class GaugeSeries extends StoredSeries {
  value = 0;

  record(value: number): void {
    // The usual case in a few bytes of bytecode, so that V8 inlines it into any record path.
    if (value !== this.value) this.set(value);
  }

  private set(value: number): void {
    if (typeof value === 'number' && value - value === 0) this.value = value;
    else this.reject(value, 'a gauge takes finite values');
  }
}

/**
 * Bucket counts (one per bound, upper bounds inclusive, then `+Inf`; not cumulative), count and
 * sum: `bounds.length + 3` cells of a typed array the family shares among several series (see
 * `FamilySeries`). Negative and zero values are kept, as prometheus_client keeps them; NaN and
 * ±∞ are not.
 */
export class HistogramSeries extends StoredSeries {
  /** Where this series' count is in `cells`; its sum is the next cell. */
  private readonly countAt: number;

  constructor(
    owner: SeriesOwner,
    plain: string,
    /** Where a bucket's `le` pair goes in `plain` (see `LabelText`). */
    readonly leOffset: number,
    created: CreationTime,
    attributes: Attributes | undefined,
    private readonly cells: Float64Array,
    /** Index of this series' first cell in `cells`. */
    private readonly offset: number,
  ) {
    super(owner, plain, created, attributes);
    this.countAt = offset + owner.bounds.length + 1;
  }

  record(value: number): void {
    this.observe(value);
  }

  /** Records `value`; the bucket it went to, or -1 when it was rejected (so a subclass need not search again). */
  protected observe(value: number): number {
    // `typeof` first: a Symbol or BigInt from an untyped caller must not reach the arithmetic.
    if (typeof value !== 'number') return this.refuse(value);
    const cells = this.cells;
    const countAt = this.countAt;
    const sum = cells[countAt + 1] + value;
    // Not finite, or a sum that would no longer be.
    if (sum - sum !== 0) return this.refuse(value);
    const bucket = bucketIndex(this.owner.bounds, value);
    cells[this.offset + bucket]++;
    cells[countAt]++;
    cells[countAt + 1] = sum;
    return bucket;
  }

  /** Not a finite value, or one the sum cannot take: refused with a warning. */
  private refuse(value: unknown): -1 {
    if (typeof value !== 'number' || value - value !== 0) this.reject(value, 'a histogram takes finite values');
    else this.reject(value, 'the sum would no longer be finite');
    return -1;
  }

  /** The classic buckets' upper bounds, shared with the family's other series. */
  get bounds(): Float64Array {
    return this.owner.bounds;
  }

  get count(): number {
    return this.cells[this.countAt];
  }

  get sum(): number {
    return this.cells[this.countAt + 1];
  }

  /** The count of bucket `i` (not cumulative); `bounds.length` is `+Inf`'s. */
  bucketCount(i: number): number {
    return this.cells[this.offset + i];
  }

  /** A copy of the bucket counts, `+Inf` last (not cumulative). */
  bucketCounts(): number[] {
    return Array.from(this.cells.subarray(this.offset, this.offset + this.owner.bounds.length + 1));
  }
}
