import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fractionBounds } from '../../../views/store/native-bucket-bounds';
import { NativeBuckets, nativeBucketIndex, RUN_WIDTH_FACTOR, type NativeBucketConfig } from '../../../views/store/native-buckets';

const config = (overrides: Partial<NativeBucketConfig> = {}): NativeBucketConfig => ({ schema: 3, maxBuckets: 160, zeroThreshold: 2 ** -128, ...overrides });

/** The next double above a positive one. */
function nextUp(value: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  return view.getFloat64(0);
}

describe('native buckets: bucket index', () => {
  it('every boundary of client_golang’s tables is the inclusive upper bound of its bucket, at every schema from 1 to 8', () => {
    for (let schema = 1; schema <= 8; schema++) {
      const bounds = fractionBounds(schema);
      assert.equal(bounds.length, 2 ** schema);
      for (const exponent of [-20, -1, 0, 1, 2, 30]) {
        bounds.forEach((fraction, j) => {
          const boundary = fraction * 2 ** exponent;
          const index = j + (exponent - 1) * bounds.length;
          assert.equal(nativeBucketIndex(boundary, schema), index, `${boundary} at schema ${schema}`);
          assert.equal(nativeBucketIndex(nextUp(boundary), schema), index + 1, `just above ${boundary} at schema ${schema}`);
        });
      }
    }
  });

  it('schema 3 boundaries are client_golang’s doubles, e.g. 2^(1/8)', () => {
    assert.deepEqual(
      Array.from(fractionBounds(3)),
      [0.5, 0.5452538663326288, 0.5946035575013605, 0.6484197773255048, 0.7071067811865475, 0.7711054127039704, 0.8408964152537144, 0.9170040432046711],
    );
    assert.equal(nativeBucketIndex(2 ** (1 / 8), 3), 1);
    assert.equal(nativeBucketIndex(nextUp(2 ** (1 / 8)), 3), 2);
    // Where Math.pow rounds differently from client_golang's table (schema 8, boundary 6), the table decides.
    const goBoundary = 0.5081891574554764 * 2;
    assert.equal(2 ** (6 / 256), nextUp(goBoundary));
    assert.equal(nativeBucketIndex(goBoundary, 8), 6);
    assert.equal(nativeBucketIndex(2 ** (6 / 256), 8), 7);
  });

  it('schemas 0 to -4: powers of 2^(2^-schema) are upper bounds', () => {
    for (let schema = 0; schema >= -4; schema--) {
      const step = 2 ** -schema;
      for (const k of [-3, -1, 0, 1, 5]) {
        assert.equal(nativeBucketIndex(2 ** (k * step), schema), k, `2^${k * step} at schema ${schema}`);
        assert.equal(nativeBucketIndex(nextUp(2 ** (k * step)), schema), k + 1);
      }
    }
  });

  it('subnormal magnitudes are indexed exactly (a zero threshold of 0 lets them in)', () => {
    assert.equal(nativeBucketIndex(Number.MIN_VALUE, 0), -1074);
    assert.equal(nativeBucketIndex(2 ** -1030, 0), -1030);
    assert.equal(nativeBucketIndex(3 * 2 ** -1070, 0), -1068);
  });

  it('for any positive double, the bucket’s bounds contain it', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-300, max: 1e300, noNaN: true }), fc.integer({ min: -4, max: 8 }), (value, schema) => {
        const index = nativeBucketIndex(value, schema);
        const log = Math.log2(value) * 2 ** schema;
        // (index - 1, index] in units of log2 / 2^-schema, up to the rounding of Math.log2.
        assert.ok(log <= index + 1e-9 && log > index - 1 - 1e-9, `${value} at schema ${schema}: index ${index}, log ${log}`);
      }),
    );
  });
});

describe('native buckets: limits', () => {
  it('halving the resolution gives the buckets the lower schema would have had from the start', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1e-4, max: 1e4, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 4, max: 40 }),
        (values, maxBuckets) => {
          const limited = new NativeBuckets(config({ maxBuckets }));
          for (const value of values) limited.observe(value);
          const direct = new NativeBuckets(config({ schema: limited.schema, maxBuckets: 100_000 }));
          for (const value of values) direct.observe(value);
          assert.deepEqual(limited.positive, direct.positive);
          assert.ok(limited.positive.counts.filter((count) => count > 0).length <= maxBuckets || limited.schema === -4);
        },
      ),
    );
  });

  it('observations spread thinly over many orders of magnitude lower the schema until one run spans at most 4 × maxBuckets', () => {
    const buckets = new NativeBuckets(config());
    for (const value of [1e-30, 1, 1e30]) buckets.observe(value);
    // log2(1e60) ≈ 199: 1594 buckets at schema 3, 797 at 2, 399 at 1.
    assert.equal(buckets.schema, 1);
    assert.ok(buckets.positive.counts.length <= RUN_WIDTH_FACTOR * 160);
    assert.ok(buckets.countSlots <= RUN_WIDTH_FACTOR * 160, `${buckets.countSlots} slots`);
    assert.deepEqual(
      buckets.positive.counts.filter((count) => count > 0),
      [1, 1, 1],
    );
  });

  it('zero and values within the threshold go to the zero bucket; min and max follow every observation', () => {
    const buckets = new NativeBuckets(config({ zeroThreshold: 0.001 }));
    for (const value of [0, -0.0005, 0.001, 0.5, -2]) buckets.observe(value);
    assert.equal(buckets.zeroCount, 3);
    assert.deepEqual([buckets.min, buckets.max], [-2, 0.5]);
    assert.deepEqual(buckets.positive, { offset: -8, counts: [1] });
    assert.deepEqual(buckets.negative, { offset: 8, counts: [1] });
  });
});
