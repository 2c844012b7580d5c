import type { Attributes, HrTime } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { formatGoFloat } from '../go-float';
import type { LimitedWarning } from '../limited-warning';
import type { LabelText } from './label-text';

/** One series of one family, bound once: `record` adds to a counter, sets a gauge, observes a histogram. */
export interface BoundSeries {
  record(value: number): void;
}

/** Shared do-nothing series for families this configuration does not register. */
export const NOOP_SERIES: BoundSeries = Object.freeze({ record(): void {} });

/** What a series needs of its family on the rare paths (a rejected value). */
export interface SeriesOwner {
  readonly name: string;
  readonly invalidValues: LimitedWarning;
}

/** The identity every kind of series shares: labels as attributes and as text, and when it was created. */
export abstract class StoredSeries implements BoundSeries {
  /** The creation time as OpenTelemetry carries it: a cumulative point's start time. */
  readonly createdTime: HrTime;
  /** Seconds since the epoch, as the `_created` sample prints it. */
  readonly createdText: string;

  constructor(
    readonly owner: SeriesOwner,
    /** Frozen; the same object on every collection, so consumers may cache by identity. */
    readonly attributes: Attributes,
    readonly labels: LabelText,
    /** Milliseconds since the epoch (fractional). */
    createdMillis: number,
  ) {
    this.createdTime = millisToHrTime(createdMillis);
    this.createdText = formatGoFloat(this.createdTime[0] + this.createdTime[1] / 1e9);
  }

  abstract record(value: number): void;

  protected reject(value: number, why: string): void {
    this.owner.invalidValues.warn(`${this.owner.name}${this.labels.plain}: ${String(value)} dropped (${why})`);
  }
}

/** A monotonic total: increments must be finite and not negative (prometheus_client raises on negative). */
export class CounterSeries extends StoredSeries {
  value = 0;

  record(increment: number): void {
    if (increment > 0 && increment < Infinity) this.value += increment;
    else if (increment !== 0) this.reject(increment, 'a counter takes finite increments >= 0');
  }
}

/** The last value set; setting the value it already holds is a single comparison. */
export class GaugeSeries extends StoredSeries {
  value = 0;

  record(value: number): void {
    if (value === this.value) return;
    if (value - value === 0) this.value = value;
    else this.reject(value, 'a gauge takes finite values');
  }
}

/**
 * Bucket counts (one per bound, upper bounds inclusive, then `+Inf`; not cumulative), count and
 * sum. Negative and zero values are kept, as prometheus_client keeps them; NaN and ±∞ are not.
 */
export class HistogramSeries extends StoredSeries {
  readonly counts: Float64Array;
  count = 0;
  sum = 0;

  constructor(
    owner: SeriesOwner,
    attributes: Attributes,
    labels: LabelText,
    createdMillis: number,
    /** Shared by every series of the family. */
    readonly bounds: Float64Array,
  ) {
    super(owner, attributes, labels, createdMillis);
    this.counts = new Float64Array(bounds.length + 1);
  }

  record(value: number): void {
    if (value - value !== 0) {
      this.reject(value, 'a histogram takes finite values');
      return;
    }
    const bounds = this.bounds;
    let low = 0;
    let high = bounds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (value <= bounds[middle]) high = middle;
      else low = middle + 1;
    }
    this.counts[low]++;
    this.count++;
    this.sum += value;
  }
}
