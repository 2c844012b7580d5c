import assert from 'node:assert/strict';
import fc from 'fast-check';
import { NativeSum } from '../../exporters/cluster/native-merge';
import type { SnapshotNative } from '../../exporters/snapshot';
import { NativeBuckets } from '../../views/store/native-buckets';

function nativeOf(observations: readonly number[], schema: number, maxBuckets: number, zeroThreshold = 2 ** -128): SnapshotNative {
  const buckets = new NativeBuckets({ schema, maxBuckets, zeroThreshold });
  for (const value of observations) buckets.observe(value);
  return { schema: buckets.schema, zeroThreshold: buckets.zeroThreshold, zeroCount: buckets.zeroCount, positive: buckets.positive, negative: buckets.negative };
}

function total(native: SnapshotNative): number {
  return [...native.positive.counts, ...native.negative.counts].reduce((a, b) => a + b, native.zeroCount);
}

const observation = fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constantFrom(0, 1, 2, 0.5, -1, 1e-300));

describe('node:cluster primary: native buckets summed over workers', () => {
  it('property: without schema reductions, the sum of two workers is the native histogram of all their observations', () => {
    fc.assert(
      fc.property(fc.array(observation, { maxLength: 60 }), fc.array(observation, { maxLength: 60 }), fc.integer({ min: -4, max: 8 }), (a, b, schema) => {
        const sum = new NativeSum(nativeOf(a, schema, 100_000));
        sum.add(nativeOf(b, schema, 100_000));
        assert.deepEqual(sum.snapshot(), nativeOf([...a, ...b], schema, 100_000));
      }),
      { numRuns: 300 },
    );
  });

  it('property: parts at other schemas and zero thresholds: the lowest schema, the widest zero bucket, every observation counted once', () => {
    const part = fc.record({
      observations: fc.array(observation, { maxLength: 80 }),
      schema: fc.integer({ min: -4, max: 8 }),
      maxBuckets: fc.integer({ min: 1, max: 40 }),
      zeroThreshold: fc.constantFrom(2 ** -128, 0.001, 0.5),
    });
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), (parts) => {
        const natives = parts.map((p) => nativeOf(p.observations, p.schema, p.maxBuckets, p.zeroThreshold));
        const sum = new NativeSum(natives[0] as SnapshotNative);
        for (const native of natives.slice(1)) sum.add(native);
        const result = sum.snapshot();
        assert.equal(
          total(result),
          natives.map(total).reduce((x, y) => x + y, 0),
        );
        assert.equal(result.schema, Math.min(...natives.map((native) => native.schema)));
        const thresholds = new Set(natives.map((native) => native.zeroThreshold));
        if (thresholds.size === 1) assert.equal(result.zeroThreshold, natives[0]?.zeroThreshold, 'zero buckets that agree are kept');
        else assert.ok(result.zeroThreshold >= Math.max(...thresholds));
      }),
      { numRuns: 300 },
    );
  });

  it('a wider zero bucket takes the buckets that start below it, up to the end of the one it falls in', () => {
    const sum = new NativeSum({
      schema: 0,
      zeroThreshold: 2 ** -128,
      zeroCount: 1,
      positive: { offset: -1, counts: [2, 3, 4] },
      negative: { offset: 0, counts: [5] },
    });
    // 0.75 falls in bucket 0, (0.5, 1]: the zero bucket reaches 1 and takes buckets -1 (0.25, 0.5] and 0 of both signs.
    sum.add({ schema: 0, zeroThreshold: 0.75, zeroCount: 10, positive: { offset: 2, counts: [1] }, negative: { offset: 0, counts: [] } });
    assert.deepEqual(sum.snapshot(), {
      schema: 0,
      zeroThreshold: 1,
      zeroCount: 1 + 2 + 3 + 5 + 10,
      positive: { offset: 1, counts: [4, 1] },
      negative: { offset: 0, counts: [] },
    });
  });

  it('a part at a lower schema: the other is taken down to it (two buckets become one per step)', () => {
    const sum = new NativeSum({
      schema: 1,
      zeroThreshold: 0,
      zeroCount: 0,
      positive: { offset: 1, counts: [1, 2, 3, 4] },
      negative: { offset: 0, counts: [] },
    });
    sum.add({ schema: 0, zeroThreshold: 0, zeroCount: 2, positive: { offset: 1, counts: [10] }, negative: { offset: -1, counts: [5] } });
    // Schema 1 buckets 1..4 are schema 0 buckets 1, 1, 2, 2.
    assert.deepEqual(sum.snapshot(), {
      schema: 0,
      zeroThreshold: 0,
      zeroCount: 2,
      positive: { offset: 1, counts: [13, 7] },
      negative: { offset: -1, counts: [5] },
    });
  });
});
