import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fractionBounds } from '../../../views/store/native-bucket-bounds';
import { AggregationTemporality, type DataPoint, type ExponentialHistogram } from '@opentelemetry/sdk-metrics';
import { resolveCatalog } from '../../../views/catalog/catalog';
import { OmniMetricProducer } from '../../../views/store/metric-producer';
import { NativeBuckets, nativeBucketIndex, RUN_WIDTH_FACTOR, type NativeBucketConfig } from '../../../views/store/native-buckets';
import { resolveNativeHistograms } from '../../../views/store/native-histogram-settings';
import { fixedClockStore } from './store-fixture';

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

  it('maxBuckets 2 over the whole range of doubles: at schema -4 the zero bucket widens, so at most 2 buckets hold anything and none of the 21 observations is lost', () => {
    const buckets = new NativeBuckets(config({ maxBuckets: 2 }));
    const values = Array.from({ length: 21 }, (_, i) => 2 ** (-1070 + i * 104));
    for (const value of values) buckets.observe(value);
    assert.equal(buckets.schema, -4);
    // Bucket i holds (2^(16(i-1)), 2^(16 i)]: the last two observations, 2^906 and 2^1010, in buckets 57 and 64.
    assert.deepEqual(buckets.positive, { offset: 57, counts: [1, 0, 0, 0, 0, 0, 0, 1] });
    // The 19 before them went into the zero bucket, whose threshold is now the upper bound of 2^802's bucket (51).
    assert.deepEqual([buckets.zeroCount, buckets.zeroThreshold], [19, 2 ** 816]);
    assert.ok(buckets.countSlots <= RUN_WIDTH_FACTOR * 2, `${buckets.countSlots} slots`);
    // Later observations within the threshold count in the zero bucket at once.
    buckets.observe(-1);
    assert.deepEqual([buckets.zeroCount, buckets.negative], [20, { offset: 0, counts: [] }]);
  });

  it('property: at every schema and maxBuckets, the buckets stay within the limits and count every observation', () => {
    const anyDouble = fc.double({ noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(
        fc.array(anyDouble, { minLength: 1, maxLength: 200 }),
        fc.integer({ min: -4, max: 8 }),
        fc.integer({ min: 1, max: 40 }),
        (values, schema, maxBuckets) => {
          const buckets = new NativeBuckets(config({ schema, maxBuckets }));
          for (const value of values) buckets.observe(value);
          const held = (counts: readonly number[]) => counts.filter((count) => count > 0).length;
          const total = (counts: readonly number[]) => counts.reduce((sum, count) => sum + count, 0);
          assert.ok(held(buckets.positive.counts) + held(buckets.negative.counts) <= maxBuckets);
          assert.ok(buckets.positive.counts.length <= RUN_WIDTH_FACTOR * maxBuckets && buckets.negative.counts.length <= RUN_WIDTH_FACTOR * maxBuckets);
          assert.ok(buckets.countSlots <= 2 * RUN_WIDTH_FACTOR * maxBuckets, `${buckets.countSlots} slots`);
          assert.equal(buckets.zeroCount + total(buckets.positive.counts) + total(buckets.negative.counts), values.length);
          // What the zero bucket holds is what lies within its threshold, and nothing else.
          assert.equal(buckets.zeroCount, values.filter((value) => Math.abs(value) <= buckets.zeroThreshold).length);
        },
      ),
      { numRuns: 500 },
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

describe('native buckets: delta points across a widened zero bucket', () => {
  it('what a delta reader adds up equals the cumulative count: buckets the zero bucket took are not counted again', async () => {
    const catalog = resolveCatalog({ logStats: true });
    const nativeHistograms = resolveNativeHistograms({ families: ['vllm:time_to_first_token_seconds'], maxBuckets: 2 }, catalog);
    const store = fixedClockStore({ logStats: true }, { nativeHistograms });
    const series = store.bind('upstream.timeToFirstTokenSeconds', ['m', '0', '0']);
    const producer = new OmniMetricProducer({ store, aggregationTemporalitySelector: () => AggregationTemporality.DELTA });
    const collect = async (): Promise<ExponentialHistogram> => {
      const { resourceMetrics } = await producer.collect();
      const metric = resourceMetrics.scopeMetrics[0]?.metrics.find((m) => m.descriptor.name === 'vllm:time_to_first_token_seconds');
      return (metric?.dataPoints[0] as DataPoint<ExponentialHistogram>).value;
    };
    const added = (point: ExponentialHistogram) =>
      point.zeroCount + [...point.positive.bucketCounts, ...point.negative.bucketCounts].reduce((sum, count) => sum + count, 0);
    for (const value of [2 ** -100, 2 ** -40]) series.record(value);
    const first = await collect();
    // Schema 3 would span 1 121 buckets, 2 at most held: down to -3, where 2^-100 and 2^-40 are 7 buckets apart.
    assert.deepEqual([first.scale, first.zeroCount, first.positive], [-3, 0, { offset: -13, bucketCounts: [1, 0, 0, 0, 0, 0, 0, 1] }]);
    // 2^40 at schema -4 cannot share the run with 2^-100: the zero bucket takes the lowest buckets.
    series.record(2 ** 40);
    const second = await collect();
    // At -4, 2^-100's bucket went into the zero bucket: sent already, so not in the delta's zero count; 2^-40's is unchanged (0), 2^40's new.
    assert.deepEqual([second.scale, second.zeroCount, second.positive], [-4, 0, { offset: -3, bucketCounts: [0, 0, 0, 0, 0, 1] }]);
    assert.equal(added(first) + added(second), 3);
  });
});
