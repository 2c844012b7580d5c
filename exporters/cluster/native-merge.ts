import type { SnapshotBucketRun, SnapshotNative } from '../snapshot';

/**
 * Native buckets of one series summed over workers. Workers of one configuration start at the same
 * schema and zero threshold, but each series lowers its schema (and, at the lowest, widens its zero
 * bucket) on its own as observations spread: the sum takes the lowest schema and the widest zero
 * bucket of its parts (reconciled as Prometheus adds two native histograms), so every observation
 * is counted once and the total always equals the classic buckets' count.
 */
export class NativeSum {
  private schema: number;
  private zeroThreshold: number;
  private zeroCount: number;
  private readonly positive = new Map<number, number>();
  private readonly negative = new Map<number, number>();

  constructor(first: SnapshotNative) {
    this.schema = first.schema;
    this.zeroThreshold = first.zeroThreshold;
    this.zeroCount = first.zeroCount;
    addRun(this.positive, first.positive, 0);
    addRun(this.negative, first.negative, 0);
  }

  add(native: SnapshotNative): void {
    if (native.schema < this.schema) {
      rescale(this.positive, this.schema - native.schema);
      rescale(this.negative, this.schema - native.schema);
      this.schema = native.schema;
    }
    const steps = native.schema - this.schema;
    const positive = new Map<number, number>();
    const negative = new Map<number, number>();
    addRun(positive, native.positive, steps);
    addRun(negative, native.negative, steps);
    // As Prometheus reconciles two zero buckets: the narrower widens to the wider, each time to a bucket boundary, until both agree.
    let zeroCount = native.zeroCount;
    let zeroThreshold = native.zeroThreshold;
    while (zeroThreshold !== this.zeroThreshold) {
      if (this.zeroThreshold > zeroThreshold) [zeroCount, zeroThreshold] = widenZeroBucket(positive, negative, this.schema, zeroCount, this.zeroThreshold);
      if (zeroThreshold > this.zeroThreshold)
        [this.zeroCount, this.zeroThreshold] = widenZeroBucket(this.positive, this.negative, this.schema, this.zeroCount, zeroThreshold);
    }
    for (const [index, count] of positive) this.positive.set(index, (this.positive.get(index) ?? 0) + count);
    for (const [index, count] of negative) this.negative.set(index, (this.negative.get(index) ?? 0) + count);
    this.zeroCount += zeroCount;
  }

  snapshot(): SnapshotNative {
    return {
      schema: this.schema,
      zeroThreshold: this.zeroThreshold,
      zeroCount: this.zeroCount,
      positive: runOf(this.positive),
      negative: runOf(this.negative),
    };
  }
}

/** Takes the buckets `steps` schemas lower. */
function rescale(buckets: Map<number, number>, steps: number): void {
  const rescaled = new Map<number, number>();
  for (const [index, count] of buckets) {
    const wider = widerIndex(index, steps);
    rescaled.set(wider, (rescaled.get(wider) ?? 0) + count);
  }
  buckets.clear();
  for (const [index, count] of rescaled) buckets.set(index, count);
}

/**
 * The zero bucket widened to `threshold`: every bucket that starts below it moves into it, and a
 * bucket that `threshold` falls inside takes the threshold up to its end (a threshold inside a
 * bucket would count that bucket's observations twice). Returns the new zero count and threshold.
 */
function widenZeroBucket(
  positive: Map<number, number>,
  negative: Map<number, number>,
  schema: number,
  zeroCount: number,
  threshold: number,
): [zeroCount: number, threshold: number] {
  let count = zeroCount;
  let widened = threshold;
  const indexes = [...new Set([...positive.keys(), ...negative.keys()])].sort((a, b) => a - b);
  for (const index of indexes) {
    if (upperBound(index - 1, schema) >= widened) break;
    count += (positive.get(index) ?? 0) + (negative.get(index) ?? 0);
    positive.delete(index);
    negative.delete(index);
    widened = Math.max(widened, upperBound(index, schema));
  }
  return [count, widened];
}

/** Adds a run's counts, its indexes taken `steps` schemas lower. */
function addRun(buckets: Map<number, number>, run: SnapshotBucketRun, steps: number): void {
  run.counts.forEach((count, i) => {
    if (count === 0) return;
    const index = widerIndex(run.offset + i, steps);
    buckets.set(index, (buckets.get(index) ?? 0) + count);
  });
}

/** The index at `schema - steps` of the bucket that holds bucket `index`: 2^steps buckets become one. */
function widerIndex(index: number, steps: number): number {
  return steps === 0 ? index : ((index - 1) >> steps) + 1;
}

/** Bucket `index`'s upper bound at `schema`: base^index, base = 2^(2^-schema). */
function upperBound(index: number, schema: number): number {
  return 2 ** (index * 2 ** -schema);
}

function runOf(buckets: ReadonlyMap<number, number>): SnapshotBucketRun {
  if (buckets.size === 0) return { offset: 0, counts: [] };
  const indexes = [...buckets.keys()].sort((a, b) => a - b);
  const offset = indexes[0] as number;
  const counts = new Array<number>((indexes.at(-1) as number) - offset + 1).fill(0);
  for (const [index, count] of buckets) counts[index - offset] = count;
  return { offset, counts };
}
