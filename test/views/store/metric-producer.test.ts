import assert from 'node:assert/strict';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { AggregationTemporality, DataPointType, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { OmniMetricProducer } from '../../../views/store/metric-producer';
import { OMNI_METER_NAME, PACKAGE_VERSION } from '../../../views/views';
import { fixedClockStore } from './store-fixture';

const delta = () => AggregationTemporality.DELTA;

async function metrics(producer: OmniMetricProducer): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await producer.collect();
  assert.deepEqual(errors, []);
  assert.equal(resourceMetrics.scopeMetrics.length, 1);
  assert.deepEqual(resourceMetrics.scopeMetrics[0]?.scope, { name: OMNI_METER_NAME, version: PACKAGE_VERSION });
  return new Map(resourceMetrics.scopeMetrics[0]?.metrics.map((m) => [m.descriptor.name, m]));
}

function points(metric: MetricData | undefined): Array<DataPoint<number> | DataPoint<Histogram>> {
  return (metric?.dataPoints ?? []) as Array<DataPoint<number> | DataPoint<Histogram>>;
}

describe('OmniMetricProducer', () => {
  it('cumulative: every series with data, starting at its creation (the `_created` time), families without series left out', async () => {
    const store = fixedClockStore();
    store.bind('upstream.promptTokens', ['m', '0', '0']).record(5);
    store.bind('upstream.kvCacheUsagePerc', ['m', '0', '0']).record(0.5);
    store.bind('upstream.timeToFirstTokenSeconds', ['m', '0', '0']).record(-0.25);
    const before = Date.now();
    const byName = await metrics(new OmniMetricProducer({ store }));
    assert.deepEqual([...byName.keys()], ['vllm:kv_cache_usage_perc', 'vllm:prompt_tokens_total', 'vllm:time_to_first_token_seconds'], 'catalog order');

    const counter = byName.get('vllm:prompt_tokens_total');
    assert.equal(counter?.dataPointType, DataPointType.SUM);
    assert.equal(counter?.dataPointType === DataPointType.SUM && counter.isMonotonic, true);
    assert.equal(counter?.aggregationTemporality, AggregationTemporality.CUMULATIVE);
    assert.deepEqual(counter?.descriptor, { name: 'vllm:prompt_tokens_total', description: 'Number of prefill tokens processed.', unit: '', valueType: 1 });
    const [point] = points(counter);
    assert.equal(point?.value, 5);
    assert.deepEqual(point?.attributes, { model_name: 'm', stage: '0', replica: '0' });
    assert.equal(hrTimeToMilliseconds(point?.startTime ?? [0, 0]), 1_700_000_000_500, 'the first series created');
    assert.ok(hrTimeToMilliseconds(point?.endTime ?? [0, 0]) >= before);

    const [histogram] = points(byName.get('vllm:time_to_first_token_seconds')) as Array<DataPoint<Histogram>>;
    assert.equal(histogram?.value.count, 1);
    assert.equal(histogram?.value.sum, -0.25, 'a negative observation is kept, sum included');
    assert.equal(histogram?.value.buckets.counts[0], 1);
    assert.equal(hrTimeToMilliseconds(histogram?.startTime ?? [0, 0]), 1_700_000_002_500);
  });

  it('delta: the change since the previous collection, starting at it; unchanged series are left out; a gauge reports its new value', async () => {
    const store = fixedClockStore();
    const tokens = store.bind('upstream.promptTokens', ['m', '0', '0']);
    const idle = store.bind('upstream.generationTokens', ['m', '0', '0']);
    const usage = store.bind('upstream.kvCacheUsagePerc', ['m', '0', '0']);
    const ttft = store.bind('upstream.timeToFirstTokenSeconds', ['m', '0', '0']);
    const producer = new OmniMetricProducer({ store, aggregationTemporalitySelector: delta });
    tokens.record(5);
    usage.record(0.5);
    ttft.record(0.2);
    const first = await metrics(producer);
    assert.equal(first.get('vllm:prompt_tokens_total')?.aggregationTemporality, AggregationTemporality.DELTA);
    assert.equal(points(first.get('vllm:prompt_tokens_total'))[0]?.value, 5);
    assert.equal(first.has('vllm:generation_tokens_total'), false, 'a series that never changed has no delta');
    const firstEnd = points(first.get('vllm:prompt_tokens_total'))[0]?.endTime;
    assert.equal(hrTimeToMilliseconds(points(first.get('vllm:prompt_tokens_total'))[0]?.startTime ?? [0, 0]), 1_700_000_000_500);

    tokens.record(2);
    ttft.record(3);
    idle.record(0);
    const second = await metrics(producer);
    const [tokensPoint] = points(second.get('vllm:prompt_tokens_total'));
    assert.equal(tokensPoint?.value, 2);
    assert.deepEqual(tokensPoint?.startTime, firstEnd, 'starts where the previous collection ended');
    assert.equal(second.has('vllm:kv_cache_usage_perc'), false, 'the gauge did not change');
    const [ttftPoint] = points(second.get('vllm:time_to_first_token_seconds')) as Array<DataPoint<Histogram>>;
    assert.equal(ttftPoint?.value.count, 1);
    assert.equal(ttftPoint?.value.sum, 0.2 + 3 - 0.2);
    assert.equal(
      ttftPoint?.value.buckets.counts.reduce((a, b) => a + b, 0),
      1,
    );

    usage.record(0.75);
    const third = await metrics(producer);
    assert.deepEqual([...third.keys()], ['vllm:kv_cache_usage_perc']);
    assert.equal(points(third.get('vllm:kv_cache_usage_perc'))[0]?.value, 0.75);
  });

  it('a producer created before the store sees nothing until the store is attached', async () => {
    const producer = new OmniMetricProducer();
    assert.deepEqual((await producer.collect()).resourceMetrics.scopeMetrics[0]?.metrics, []);
    const store = fixedClockStore();
    store.bind('upstream.promptTokens', ['m', '0', '0']).record(1);
    producer.attach(store);
    assert.equal(points((await metrics(producer)).get('vllm:prompt_tokens_total'))[0]?.value, 1);
  });

  it('the otel naming scheme: dotted stream names with UCUM units', async () => {
    const store = fixedClockStore({ logStats: true }, { naming: 'otel' });
    store.bind('upstream.e2eRequestLatencySeconds', ['m', '0', '0']).record(1);
    const byName = await metrics(new OmniMetricProducer({ store }));
    assert.deepEqual(byName.get('vllm.e2e_request_latency')?.descriptor, {
      name: 'vllm.e2e_request_latency',
      description: 'Histogram of e2e request latency in seconds.',
      unit: 's',
      valueType: 1,
    });
  });
});
