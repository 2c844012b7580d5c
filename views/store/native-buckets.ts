import { fractionBounds } from './native-bucket-bounds';
import { bucketIndex } from './series';

/** How the native (sparse exponential) buckets of a histogram family are laid out. */
export interface NativeBucketConfig {
  /** Resolution: each power of two is split into 2^schema buckets, from -4 to 8. */
  readonly schema: number;
  /** Buckets a series may span (positive and negative together) before its schema is lowered. */
  readonly maxBuckets: number;
  /** Observations whose magnitude is at most this go to the zero bucket. */
  readonly zeroThreshold: number;
}

export const MIN_NATIVE_SCHEMA = -4;
export const MAX_NATIVE_SCHEMA = 8;
/** Prometheus client_golang's schema for its usual `NativeHistogramBucketFactor: 1.1` (each bucket at most 1.1× the previous): 2^(2^-3) ≈ 1.09. */
export const DEFAULT_NATIVE_SCHEMA = 3;
/** The OpenTelemetry SDK's default `maxSize` of an exponential histogram. */
export const DEFAULT_NATIVE_MAX_BUCKETS = 160;
/** client_golang's `DefNativeHistogramZeroThreshold`: 2^-128, a bucket boundary at every schema. */
export const DEFAULT_NATIVE_ZERO_THRESHOLD = 2 ** -128;

/** How much wider than `maxBuckets` one sign's run of buckets (populated or not) may grow. */
export const RUN_WIDTH_FACTOR = 4;

/** Consecutive buckets as exported: the index of the first, and one count per bucket (zeros where nothing fell). */
export interface NativeBucketRun {
  readonly offset: number;
  readonly counts: readonly number[];
}

const EMPTY_RUN: NativeBucketRun = Object.freeze({ offset: 0, counts: Object.freeze([]) as readonly number[] });

// `frexp` without allocation: the exponent and mantissa read from the double's bits.
const scratch = new Float64Array(1);
const words = new Uint32Array(scratch.buffer);
const HIGH = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/**
 * The index of the bucket a positive finite magnitude falls in at `schema`, as Prometheus numbers
 * them: bucket `i` holds (base^(i-1), base^i] with base 2^(2^-schema), so 1 is the upper bound of
 * bucket 0. The arithmetic is client_golang's `observe` (frexp, then a search of the fraction
 * bounds, or a shift for schemas 0 and below), so both clients and the server agree on every
 * boundary.
 */
export function nativeBucketIndex(magnitude: number, schema: number, bounds: Float64Array = boundsOf(schema)): number {
  scratch[0] = magnitude;
  let biased = (words[HIGH] >>> 20) & 0x7ff;
  let exponent: number;
  if (biased === 0) {
    // Subnormal: scaled into the normal range first, which leaves the fraction as it is.
    scratch[0] = magnitude * 2 ** 64;
    biased = (words[HIGH] >>> 20) & 0x7ff;
    exponent = biased - 1022 - 64;
  } else exponent = biased - 1022;
  words[HIGH] = (words[HIGH] & 0x800fffff) | (1022 << 20);
  const fraction = scratch[0];
  if (schema > 0) return bucketIndex(bounds, fraction) + (exponent - 1) * bounds.length;
  const key = fraction === 0.5 ? exponent - 1 : exponent;
  const shift = -schema;
  return (key + (1 << shift) - 1) >> shift;
}

const NO_BOUNDS = new Float64Array(0);

/** The fraction bounds `nativeBucketIndex` searches at `schema` (none at schema 0 and below, which shift instead). */
function boundsOf(schema: number): Float64Array {
  return schema > 0 ? fractionBounds(schema) : NO_BOUNDS;
}

/** The index at `schema - 1` of the bucket that holds bucket `index` at `schema`: two buckets become one. */
export function widerBucketIndex(index: number): number {
  return (index + 1) >> 1;
}

/**
 * The counts of one sign's buckets: a dense run from the lowest to the highest bucket that holds
 * anything, in an array that grows (doubling) as the run widens. Its owner keeps both the
 * populated buckets and the run's width bounded (lowering the schema first), so memory is too.
 */
class BucketRun {
  /** Bucket index of `counts[0]`. */
  private start = 0;
  /**
   * A plain array, not a typed one: V8 keeps small integers in it unboxed at 4 bytes each (8 once
   * a count passes 2^30), and the array itself is far smaller than a typed array's objects.
   */
  private counts: number[] = [];
  /** Lowest and highest populated indexes; `low > high` while empty. */
  low = 1;
  high = 0;
  /** Buckets that hold anything. */
  populated = 0;

  constructor(
    /** The widest the run may be (its owner lowers the schema before): the counts never take more. */
    private readonly maxWidth: number,
  ) {}

  get empty(): boolean {
    return this.low > this.high;
  }

  /** Adds one to bucket `index` when it already holds something: neither the run nor the populated count changes. */
  incrementHeld(index: number): boolean {
    if (index < this.low || index > this.high) return false;
    const at = index - this.start;
    if (this.counts[at] === 0) return false;
    this.counts[at]++;
    return true;
  }

  /** How many buckets the run spans if `index` is added. */
  widthWith(index: number): number {
    if (this.empty) return 1;
    return Math.max(this.high, index) - Math.min(this.low, index) + 1;
  }

  /** How many buckets hold anything if `index` is added. */
  populatedWith(index: number): number {
    if (this.empty || index < this.low || index > this.high) return this.populated + 1;
    return this.counts[index - this.start] === 0 ? this.populated + 1 : this.populated;
  }

  add(index: number, count: number): void {
    if (this.empty) {
      if (this.counts.length === 0) this.counts = zeros(Math.min(8, this.maxWidth));
      this.start = index;
      this.low = this.high = index;
    } else {
      if (index < this.start || index >= this.start + this.counts.length)
        this.relayout(Math.min(this.low, index), Math.max(this.high, index), index < this.low);
      if (index < this.low) this.low = index;
      if (index > this.high) this.high = index;
    }
    if (this.counts[index - this.start] === 0) this.populated++;
    this.counts[index - this.start] += count;
  }

  /**
   * Empties the buckets up to `index` (inclusive) and returns what they held: the zero bucket
   * takes them when it widens. The next populated bucket becomes the lowest.
   */
  removeUpTo(index: number): number {
    if (this.empty || index < this.low) return 0;
    const last = Math.min(index, this.high);
    let removed = 0;
    for (let i = this.low; i <= last; i++) {
      const count = this.counts[i - this.start] as number;
      if (count === 0) continue;
      removed += count;
      this.populated--;
      this.counts[i - this.start] = 0;
    }
    let low = last + 1;
    while (low <= this.high && this.counts[low - this.start] === 0) low++;
    if (low > this.high) {
      this.low = 1;
      this.high = 0;
    } else this.low = low;
    return removed;
  }

  /** Halves the resolution: buckets `2j - 1` and `2j` become bucket `j`. */
  widen(): void {
    if (this.empty) return;
    const low = widerBucketIndex(this.low);
    const high = widerBucketIndex(this.high);
    const merged = zeros(this.counts.length);
    for (let i = this.low; i <= this.high; i++) merged[widerBucketIndex(i) - low] += this.counts[i - this.start] as number;
    let populated = 0;
    for (let i = 0; i <= high - low; i++) if (merged[i] !== 0) populated++;
    this.counts = merged;
    this.start = low;
    this.low = low;
    this.high = high;
    this.populated = populated;
  }

  run(): NativeBucketRun {
    if (this.empty) return EMPTY_RUN;
    return { offset: this.low, counts: this.counts.slice(this.low - this.start, this.high - this.start + 1) };
  }

  /** Slots held for counts (the run's capacity). */
  get capacity(): number {
    return this.counts.length;
  }

  /** Moves the counts into an array wide enough for [low, high], with room to grow on the side that grew. */
  private relayout(low: number, high: number, downward: boolean): void {
    const needed = high - low + 1;
    let capacity = Math.max(8, this.counts.length);
    while (capacity < needed) capacity *= 2;
    capacity = Math.max(needed, Math.min(capacity, this.maxWidth));
    const start = downward ? high - capacity + 1 : low;
    const counts = zeros(capacity);
    for (let i = this.low; i <= this.high; i++) counts[i - start] = this.counts[i - this.start] as number;
    this.counts = counts;
    this.start = start;
  }
}

/**
 * The native buckets of one histogram series: a zero bucket and sparse exponential buckets per
 * sign, at a schema that starts at the family's and is lowered (two buckets merged into one, as
 * client_golang does when its bucket limit is reached) whenever an observation would make the
 * buckets span more than `maxBuckets`. At schema -4, the lowest, a bucket spans 16 powers of two
 * and observations over the whole range of doubles still span 131: there the zero bucket widens
 * instead (client_golang's other strategy), to the upper bound of the lowest bucket, which it
 * takes, until the limits hold. The series' count and sum are its classic histogram's.
 */
export class NativeBuckets {
  schema: number;
  zeroCount = 0;
  /** The smallest and largest observations (OpenTelemetry's exponential points carry them). */
  min = Infinity;
  max = -Infinity;
  private readonly positiveRun: BucketRun;
  private negativeRun: BucketRun | undefined;
  /** The configured threshold, raised (to a bucket boundary) only when the zero bucket widens at schema -4. */
  private zeroThresholdValue: number;
  /** The fraction bounds of the current schema. */
  private bounds: Float64Array;

  constructor(private readonly config: NativeBucketConfig) {
    this.schema = config.schema;
    this.bounds = boundsOf(config.schema);
    this.zeroThresholdValue = config.zeroThreshold;
    this.positiveRun = new BucketRun(RUN_WIDTH_FACTOR * config.maxBuckets);
  }

  get zeroThreshold(): number {
    return this.zeroThresholdValue;
  }

  /** Adds one finite observation (the series has checked it). */
  observe(value: number): void {
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    const magnitude = value < 0 ? -value : value;
    if (magnitude <= this.zeroThresholdValue) {
      this.zeroCount++;
      return;
    }
    const run = value > 0 ? this.positiveRun : (this.negativeRun ??= new BucketRun(RUN_WIDTH_FACTOR * this.config.maxBuckets));
    let index = nativeBucketIndex(magnitude, this.schema, this.bounds);
    // The common case, a bucket that already holds something, cannot go past a limit.
    if (run.incrementHeld(index)) return;
    while (this.schema > MIN_NATIVE_SCHEMA && this.overLimit(run, index)) {
      this.positiveRun.widen();
      this.negativeRun?.widen();
      this.schema--;
      this.bounds = boundsOf(this.schema);
      index = nativeBucketIndex(magnitude, this.schema, this.bounds);
    }
    if (this.schema === MIN_NATIVE_SCHEMA && this.overLimit(run, index) && this.widenZeroBucket(run, index)) this.zeroCount++;
    else run.add(index, 1);
  }

  /**
   * Raises the zero threshold to the upper bound of the lowest bucket (of either sign, or the one
   * `index` would open), moving what those buckets held into the zero bucket, until adding to
   * `index` stays within the limits. Returns whether bucket `index` itself went into the zero bucket.
   */
  private widenZeroBucket(run: BucketRun, index: number): boolean {
    while (this.overLimit(run, index)) {
      const negative = this.negativeRun;
      const lowest = Math.min(index, this.positiveRun.empty ? index : this.positiveRun.low, negative === undefined || negative.empty ? index : negative.low);
      // 2^(16 × lowest) at schema -4: a boundary at every schema (the largest finite double past the last bucket).
      this.zeroThresholdValue = Math.min(2 ** (lowest * 2 ** -this.schema), Number.MAX_VALUE);
      this.zeroCount += this.positiveRun.removeUpTo(lowest) + (negative?.removeUpTo(lowest) ?? 0);
      if (index <= lowest) return true;
    }
    return false;
  }

  /** Positive buckets, from the lowest populated to the highest. */
  get positive(): NativeBucketRun {
    return this.positiveRun.run();
  }

  /** Negative buckets (by magnitude), from the lowest populated to the highest. */
  get negative(): NativeBucketRun {
    return this.negativeRun?.run() ?? EMPTY_RUN;
  }

  /** Slots held for bucket counts, both signs. */
  get countSlots(): number {
    return this.positiveRun.capacity + (this.negativeRun?.capacity ?? 0);
  }

  /**
   * Whether adding to bucket `index` of `run` goes past the limit: more populated buckets than
   * `maxBuckets` (client_golang's rule), or a run wider than `RUN_WIDTH_FACTOR × maxBuckets`
   * (a bound on memory for observations spread thinly over many orders of magnitude).
   */
  private overLimit(run: BucketRun, index: number): boolean {
    const other = run === this.positiveRun ? this.negativeRun : this.positiveRun;
    if (run.populatedWith(index) + (other?.populated ?? 0) > this.config.maxBuckets) return true;
    return run.widthWith(index) > RUN_WIDTH_FACTOR * this.config.maxBuckets;
  }
}

function zeros(length: number): number[] {
  return new Array<number>(length).fill(0);
}
