import assert from 'node:assert/strict';
import { AggregationTemporality, DataPointType, type ExponentialHistogram, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { EngineServer, fixtureText } from './support/engine-server';

const PULLED = { model_name: 'org/current-model', stage: '1', replica: '1' };

function named(metrics: readonly MetricData[], name: string): MetricData {
  const metric = metrics.find((one) => one.descriptor.name === name);
  assert.ok(metric, name);
  return metric;
}

describe('engine pull with native histograms', () => {
  let engine: EngineServer | undefined;
  let handle: OmniMetricsHandle | undefined;

  afterEach(async () => {
    await handle?.shutdown();
    await engine?.down();
    handle = undefined;
    engine = undefined;
  });

  it("a push reader gets exponential points for the pipeline's own families and classic buckets for the families engines print", async () => {
    engine = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      logIntervalSeconds: 0,
      processMetrics: false,
      selfCheck: false,
      prometheus: false,
      exporters: [],
      nativeHistograms: true,
      enginePull: { engines: [{ stage: 1, replica: 1, url: engine.url }], cacheMillis: 0, timeoutMillis: 500 },
    });
    for (const latency of [0.5, 1, 1.5]) handle.pipeline.requestSucceeded(latency, 'stop');
    const producer = handle.createMetricProducer(() => AggregationTemporality.CUMULATIVE);
    const metrics = (await producer.collect()).resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);

    const pipeline = named(metrics, 'vllm:omni_e2e_request_latency_s');
    assert.equal(pipeline.dataPointType, DataPointType.EXPONENTIAL_HISTOGRAM);
    const [point] = pipeline.dataPoints as Array<{ value: ExponentialHistogram }>;
    assert.deepEqual(
      { count: point?.value.count, sum: point?.value.sum, scale: point?.value.scale, positive: point?.value.positive },
      // Schema 3: 0.5 = 2^-1 is bucket -8 (Prometheus's index), 1 bucket 0, 1.5 bucket 5; OpenTelemetry's are one below.
      { count: 3, sum: 3, scale: 3, positive: { offset: -9, bucketCounts: [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1] } },
    );

    const upstream = named(metrics, 'vllm:e2e_request_latency_seconds');
    assert.equal(upstream.dataPointType, DataPointType.HISTOGRAM);
    const pulled = (upstream.dataPoints as Array<{ attributes: Record<string, unknown>; value: Histogram }>).find(
      (one) => JSON.stringify(one.attributes) === JSON.stringify(PULLED),
    );
    assert.equal(pulled?.value.count, 3);
    assert.equal(pulled?.value.sum, 9003);
  });
});
