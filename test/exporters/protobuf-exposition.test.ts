import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { registerOmniMetrics } from '../../register';
import { protobufExposition, sparseBuckets } from '../../exporters/exposition/protobuf-writer';
import { storeFamilies } from '../../exporters/exposition/store-families';
import { storeProtobuf } from '../support/exposition';
import { prefersProtobuf, PROTOBUF_CONTENT_TYPE } from '../../exporters/protobuf-negotiation';
import type { NativeBucketConfig } from '../../views/store/native-buckets';
import { fixedClockStore, withWarnings } from '../views/store/store-fixture';
import { decodeMetricFamilies, type DecodedFamily, type DecodedHistogram } from '../support/prometheus-protobuf';

const TTFT = 'vllm:time_to_first_token_seconds';
const DEFAULT_ZERO_THRESHOLD = 2.938735877055719e-39;

/** One TTFT series with native buckets at `config`, fed `observations`, as the protobuf exposition carries it. */
function nativeHistogramOf(observations: readonly number[], config: Partial<NativeBucketConfig> = {}): DecodedHistogram {
  const store = fixedClockStore(
    { logStats: true },
    { nativeHistograms: { config: { schema: 3, maxBuckets: 160, zeroThreshold: DEFAULT_ZERO_THRESHOLD, ...config }, families: new Set([TTFT]) } },
  );
  const series = store.bind('upstream.timeToFirstTokenSeconds', ['m', '0', '0']);
  for (const value of observations) series.record(value);
  const family = decodeMetricFamilies(storeProtobuf(store)).find((one) => one.name === TTFT);
  assert.ok(family?.metric[0]?.histogram);
  return family.metric[0].histogram;
}

/** The native part of a decoded histogram, in client_golang's test notation. */
function nativePart(histogram: DecodedHistogram): Record<string, unknown> {
  const spans = (list: DecodedHistogram['positiveSpan']): Array<[number, number]> => list.map((span) => [span.offset ?? 0, span.length ?? 0]);
  return {
    sampleCount: histogram.sampleCount,
    sampleSum: histogram.sampleSum,
    schema: histogram.schema,
    zeroThreshold: histogram.zeroThreshold,
    zeroCount: histogram.zeroCount ?? 0,
    positiveSpan: spans(histogram.positiveSpan),
    positiveDelta: histogram.positiveDelta,
    negativeSpan: spans(histogram.negativeSpan),
    negativeDelta: histogram.negativeDelta,
  };
}

/** What Prometheus reads from spans and deltas: bucket index → count. */
function bucketsOf(spans: DecodedHistogram['positiveSpan'], deltas: readonly number[]): Map<number, number> {
  const buckets = new Map<number, number>();
  let index = 0;
  let count = 0;
  let d = 0;
  for (const span of spans) {
    index += span.offset ?? 0;
    for (let i = 0; i < (span.length ?? 0); i++) {
      count += deltas[d++] as number;
      if (count !== 0) buckets.set(index, count);
      index++;
    }
  }
  assert.equal(d, deltas.length, 'every delta belongs to a span');
  return buckets;
}

describe('protobuf exposition: native histograms', () => {
  // The cases of client_golang's TestNativeHistogram (prometheus/histogram_test.go), observation for observation.
  it('factor 1.1 (schema 3): 0, 1, 2, 3 as client_golang encodes them', () => {
    assert.deepEqual(nativePart(nativeHistogramOf([0, 1, 2, 3])), {
      sampleCount: 4,
      sampleSum: 6,
      schema: 3,
      zeroThreshold: DEFAULT_ZERO_THRESHOLD,
      zeroCount: 1,
      positiveSpan: [
        [0, 1],
        [7, 1],
        [4, 1],
      ],
      positiveDelta: [1, 0, 0],
      negativeSpan: [],
      negativeDelta: [],
    });
  });

  it('factor 1.2 (schema 2): small gaps stay inside one span as zero counts', () => {
    const histogram = nativePart(nativeHistogramOf([0, 1, 1.2, 1.4, 1.8, 2], { schema: 2 }));
    assert.deepEqual(histogram.positiveSpan, [[0, 5]]);
    assert.deepEqual(histogram.positiveDelta, [1, -1, 2, -2, 2]);
    assert.equal(histogram.zeroCount, 1);
  });

  it('factor 4 (schema -1) and factor 17 (schema -2): buckets wider than a power of two', () => {
    const observations = [0.0156251, 0.0625, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 3.5, 5, 6, 7, 33.33];
    const minusOne = nativePart(nativeHistogramOf(observations, { schema: -1 }));
    assert.deepEqual([minusOne.positiveSpan, minusOne.positiveDelta], [[[-2, 6]], [2, 0, 0, 2, -1, -2]]);
    const minusTwo = nativePart(nativeHistogramOf(observations, { schema: -2 }));
    assert.deepEqual([minusTwo.positiveSpan, minusTwo.positiveDelta], [[[-1, 4]], [2, 2, 3, -6]]);
  });

  it('negative observations go to the negative buckets, by magnitude', () => {
    const both = nativePart(nativeHistogramOf([0, -1, -1.2, -1.4, -1.8, -2, 1, 1.2, 1.4, 1.8, 2], { schema: 2 }));
    assert.deepEqual([both.negativeSpan, both.negativeDelta], [[[0, 5]], [1, -1, 2, -2, 2]]);
    assert.deepEqual([both.positiveSpan, both.positiveDelta], [[[0, 5]], [1, -1, 2, -2, 2]]);
    assert.equal(both.sampleSum, 0);
  });

  it('past maxBuckets the resolution is halved, as client_golang halves it', () => {
    const positive = nativePart(nativeHistogramOf([0, 1, 1.1, 1.2, 1.4, 1.8, 2, 3], { schema: 2, maxBuckets: 4 }));
    assert.deepEqual([positive.schema, positive.positiveSpan, positive.positiveDelta], [1, [[0, 5]], [1, 2, -1, -2, 1]]);
    const negative = nativePart(nativeHistogramOf([0, -1, -1.1, -1.2, -1.4, -1.8, -2, -3], { schema: 2, maxBuckets: 4 }));
    assert.deepEqual([negative.schema, negative.negativeSpan, negative.negativeDelta], [1, [[0, 5]], [1, 2, -1, -2, 1]]);
  });

  it('a wider zero bucket takes everything within its threshold, of either sign', () => {
    const histogram = nativePart(nativeHistogramOf([0, -1, -1.2, -1.4, -1.8, -2, 1, 1.2, 1.4, 1.8, 2], { schema: 2, zeroThreshold: 1.4 }));
    assert.equal(histogram.zeroCount, 7);
    assert.deepEqual([histogram.positiveSpan, histogram.positiveDelta], [[[4, 1]], [2]]);
    assert.deepEqual([histogram.negativeSpan, histogram.negativeDelta], [[[4, 1]], [2]]);
  });

  it('an empty native histogram carries one empty span (as client_golang), which tells it from a classic one', () => {
    const histogram = nativePart(nativeHistogramOf([]));
    assert.deepEqual([histogram.sampleCount, histogram.positiveSpan, histogram.positiveDelta], [0, [[0, 0]], []]);
  });

  it('NaN and infinities are rejected by the classic series and left out of the native buckets alike', () => {
    const histogram = nativePart(withWarnings(() => nativeHistogramOf([1, Number.NaN, Infinity, -Infinity])).result);
    assert.deepEqual([histogram.sampleCount, histogram.positiveSpan, histogram.positiveDelta], [1, [[0, 1]], [1]]);
  });

  it('the classic buckets come with the native ones, cumulative, +Inf last', () => {
    const histogram = nativeHistogramOf([0.0005, 0.3, 0.3, 7]);
    const buckets = histogram.bucket.map((bucket) => [bucket.upperBound, bucket.cumulativeCount]);
    assert.deepEqual(buckets.slice(0, 2), [
      [0.001, 1],
      [0.005, 1],
    ]);
    assert.deepEqual(
      buckets.find(([bound]) => bound === 0.5),
      [0.5, 3],
    );
    assert.deepEqual(buckets.at(-1), [Infinity, 4]);
  });

  it('for any observations, the decoded buckets hold every observation once, each in the bucket whose bounds contain it', () => {
    const value = fc.oneof(fc.double({ min: 1e-6, max: 1e6, noNaN: true }), fc.constantFrom(0, 1, 2, 0.5, 2 ** 0.125));
    fc.assert(
      fc.property(fc.array(value, { maxLength: 200 }), fc.integer({ min: -4, max: 8 }), (observations, schema) => {
        const histogram = nativeHistogramOf(observations, { schema });
        const buckets = bucketsOf(histogram.positiveSpan, histogram.positiveDelta);
        const total = [...buckets.values()].reduce((a, b) => a + b, 0) + (histogram.zeroCount ?? 0);
        assert.equal(total, observations.length);
        const base = 2 ** (2 ** -(histogram.schema as number));
        for (const observation of observations.filter((one) => one > DEFAULT_ZERO_THRESHOLD)) {
          // Some bucket whose bounds contain it (up to rounding at the bound): (base^(i-1), base^i].
          const near = Math.round(Math.log(observation) / Math.log(base));
          const holding = [near - 1, near, near + 1].filter(
            (i) => buckets.has(i) && observation <= base ** i * (1 + 1e-12) && observation > base ** (i - 1) * (1 - 1e-12),
          );
          assert.ok(holding.length > 0, `${observation} at schema ${histogram.schema}`);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a family of many wide native histograms is produced in steps of about 16 KiB: points to yield between its series, the same bytes handed on whole', () => {
    const store = fixedClockStore(
      { logStats: true },
      { nativeHistograms: { config: { schema: 3, maxBuckets: 1000, zeroThreshold: DEFAULT_ZERO_THRESHOLD }, families: new Set([TTFT]) } },
    );
    for (let s = 0; s < 200; s++) {
      const series = store.bind('upstream.timeToFirstTokenSeconds', ['m', '0', String(s)]);
      for (let k = 0; k < 400; k++) series.record(2 ** ((k - 200) / 8) * 1.001);
    }
    const pieces = Array.from(protobufExposition(storeFamilies(store), { createdSeries: false }));
    const handedOn = pieces.filter((piece) => piece.length > 0);
    const family = decodeMetricFamilies(Buffer.concat(handedOn)).find((one) => one.name === TTFT);
    assert.equal(family?.metric.length, 200);
    assert.deepEqual(
      family.metric.map((metric) => metric.histogram?.positiveDelta.length),
      Array.from({ length: 200 }, () => 400),
    );
    assert.equal(handedOn.length, 1, 'the family message whole, its length first');
    assert.equal(handedOn[0]?.length, 240_975);
    // A point to yield once 16 KiB more are written (series of about 1.2 KiB): 14 of them, where the family was one step.
    assert.equal(pieces.length - handedOn.length, 14);
  });

  it('sparseBuckets starts a new span only past a gap of more than two buckets', () => {
    assert.deepEqual(sparseBuckets({ offset: -3, counts: [2, 0, 0, 5, 0, 0, 0, 1] }), {
      spans: [
        [-3, 4],
        [3, 1],
      ],
      deltas: [2, -2, 0, 5, -4],
    });
    assert.deepEqual(sparseBuckets({ offset: 0, counts: [] }), { spans: [], deltas: [] });
  });
});
describe('protobuf exposition: negotiation and serving', () => {
  /** Prometheus 2.42's scrape `Accept` with native histograms enabled. */
  const PROMETHEUS_NATIVE_ACCEPT =
    'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

  it('is preferred only when the scraper asks for the delimited MetricFamily stream over every text format', () => {
    assert.equal(prefersProtobuf(PROMETHEUS_NATIVE_ACCEPT), true);
    assert.equal(prefersProtobuf('application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2'), false);
    assert.equal(prefersProtobuf('application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text'), false);
    assert.equal(prefersProtobuf('application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.4,text/plain;q=0.5'), false);
    assert.equal(prefersProtobuf('application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0'), false);
    assert.equal(prefersProtobuf(undefined), false);
  });

  function get(port: number, accept: string, encoding?: string): Promise<{ type: string | undefined; encoding: string | undefined; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { Accept: accept };
      if (encoding !== undefined) headers['Accept-Encoding'] = encoding;
      http
        .get({ host: '127.0.0.1', port, path: '/metrics', headers, agent: false }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ type: response.headers['content-type'], encoding: response.headers['content-encoding'], body: Buffer.concat(chunks) }),
          );
          response.on('error', reject);
        })
        .on('error', reject);
    });
  }

  it('/metrics answers protobuf to a Prometheus that asks for it when native histograms are on, text otherwise', async () => {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      logStats: true,
      prometheus: { host: '127.0.0.1', port: 0, createdSeries: false },
      exporters: ['prometheus'],
      logIntervalSeconds: 0,
      selfCheck: false,
      processMetrics: false,
      nativeHistograms: true,
    });
    try {
      handle.pipeline.requestSucceeded(0.25, 'stop');
      (handle.meterProvider as MeterProvider).getMeter('my-app').createCounter('app_jobs', { description: 'Jobs.' }).add(2, { kind: 'tts' });
      const port = handle.prometheusServer?.port as number;
      const protobuf = await get(port, PROMETHEUS_NATIVE_ACCEPT);
      assert.equal(protobuf.type, PROTOBUF_CONTENT_TYPE);
      const families = decodeMetricFamilies(protobuf.body);
      const e2e = families.find((family) => family.name === 'vllm:omni_e2e_request_latency_s') as DecodedFamily;
      const histogram = e2e.metric[0]?.histogram as DecodedHistogram;
      // 0.25 = 2^-2: the upper bound of bucket -16 at schema 3.
      assert.deepEqual(nativePart(histogram).positiveSpan, [[-16, 1]]);
      assert.equal(histogram.schema, 3);
      const success = families.find((family) => family.name === 'vllm:omni_requests_success_total');
      assert.equal(success?.type, 'COUNTER');
      assert.deepEqual(success?.metric.find((metric) => metric.label.some((label) => label.value === 'stop'))?.counter, { value: 1 });
      const own = families.find((family) => family.name === 'app_jobs_total');
      assert.deepEqual(own, {
        name: 'app_jobs_total',
        help: 'Jobs.',
        type: 'COUNTER',
        metric: [{ label: [{ name: 'kind', value: 'tts' }], counter: { value: 2 } }],
      });
      const gzipped = await get(port, PROMETHEUS_NATIVE_ACCEPT, 'gzip');
      assert.equal(gzipped.encoding, 'gzip');
      const text = await get(port, 'text/plain;version=0.0.4');
      assert.equal(text.type, 'text/plain; version=0.0.4; charset=utf-8');
      assert.ok(text.body.toString().includes('vllm:omni_e2e_request_latency_s_bucket{le="0.25",model_name="m"} 1.0\n'));
      assert.deepEqual(await handle.prometheusReader?.protobufBytes(), protobuf.body);
    } finally {
      await handle.shutdown();
    }
  });

  it('without native histograms a protobuf Accept gets the text format, as before', async () => {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      logStats: true,
      prometheus: { host: '127.0.0.1', port: 0 },
      exporters: ['prometheus'],
      logIntervalSeconds: 0,
      selfCheck: false,
      processMetrics: false,
    });
    try {
      const response = await get(handle.prometheusServer?.port as number, PROMETHEUS_NATIVE_ACCEPT);
      assert.equal(response.type, 'application/openmetrics-text; version=1.0.0; charset=utf-8');
      assert.equal(handle.prometheusReader?.protobufBytes(), undefined);
    } finally {
      await handle.shutdown();
    }
  });
});
