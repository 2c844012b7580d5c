import assert from 'node:assert/strict';
import fc from 'fast-check';
import { INTER_TOKEN_LATENCY_BUCKETS } from '../../../views/catalog/buckets';
import type { CounterSeries, GaugeSeries, HistogramSeries } from '../../../views/store/series';
import { fixedClockStore, withWarnings } from './store-fixture';

const L = ['m', '0', '0'];

describe('series store: values', () => {
  it('a counter adds finite increments; 0 changes nothing; negative, NaN and ±∞ are dropped with one warning', () => {
    const store = fixedClockStore();
    const counter = store.bind('upstream.promptTokens', L) as CounterSeries;
    const { warnings } = withWarnings(() => {
      counter.record(3);
      counter.record(0);
      counter.record(0.5);
      for (const bad of [-1, Number.NaN, Infinity, -Infinity]) counter.record(bad);
    });
    assert.equal(counter.value, 3.5);
    assert.equal(warnings.length, 1, 'one warning for the four bad values (rate limited)');
    assert.match(
      warnings[0] as string,
      /^omni-otel-metrics: vllm:prompt_tokens_total\{model_name="m",replica="0",stage="0"\}: -1 dropped \(a counter takes finite increments >= 0\)$/,
    );
  });

  it('a gauge keeps the last finite value; NaN and ±∞ leave it as it was', () => {
    const store = fixedClockStore();
    const gauge = store.bind('upstream.kvCacheUsagePerc', L) as GaugeSeries;
    withWarnings(() => {
      gauge.record(0.75);
      gauge.record(Number.NaN);
      gauge.record(-3);
      gauge.record(Infinity);
    });
    assert.equal(gauge.value, -3);
  });

  it('a histogram keeps negative and zero observations (as prometheus_client), counts a value on a bound in that bucket, drops NaN and ±∞', () => {
    const store = fixedClockStore();
    const histogram = store.bind('upstream.interTokenLatencySeconds', L) as HistogramSeries;
    const { warnings } = withWarnings(() => {
      for (const value of [-0.5, 0, 0.01, 0.025, 100, Number.NaN, Infinity]) histogram.record(value);
    });
    const counts = histogram.bucketCounts();
    assert.equal(counts.length, INTER_TOKEN_LATENCY_BUCKETS.length + 1);
    assert.equal(counts[0], 3, '-0.5, 0 and 0.01 are all ≤ 0.01');
    assert.equal(counts[1], 1, '0.025 is in the bucket whose bound it equals');
    assert.equal(counts.at(-1), 1, '100 is above the last bound: +Inf');
    assert.equal(histogram.count, 5);
    assert.equal(histogram.sum, -0.5 + 0 + 0.01 + 0.025 + 100);
    assert.equal(warnings.length, 1);
  });

  it('property: any finite values give exactly the bucket counts, count and sum of the definition', () => {
    const bounds = [...INTER_TOKEN_LATENCY_BUCKETS];
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }), { maxLength: 200 }), (values) => {
        const store = fixedClockStore();
        const histogram = store.bind('upstream.interTokenLatencySeconds', L) as HistogramSeries;
        for (const value of values) histogram.record(value);
        const expected = [...bounds, Infinity].map((bound, i) => values.filter((v) => v <= bound && (i === 0 || v > (bounds[i - 1] as number))).length);
        assert.deepEqual(histogram.bucketCounts(), expected);
        assert.equal(histogram.count, values.length);
        assert.equal(
          histogram.sum,
          values.reduce((sum, v) => sum + v, 0),
        );
      }),
    );
  });

  it('series of one family share cell pages without touching each other', () => {
    const store = fixedClockStore();
    const histograms = Array.from({ length: 40 }, (_, i) => store.bind('upstream.timeToFirstTokenSeconds', ['m', '0', String(i)]) as HistogramSeries);
    histograms.forEach((histogram, i) => {
      for (let k = 0; k <= i; k++) histogram.record(0.002);
    });
    histograms.forEach((histogram, i) => {
      assert.equal(histogram.count, i + 1);
      assert.equal(histogram.bucketCount(1), i + 1);
      assert.equal(
        histogram.sum,
        Array.from({ length: i + 1 }, () => 0.002).reduce((a, b) => a + b, 0),
      );
    });
  });
});
