import assert from 'node:assert/strict';
import { context, metrics as metricsApi, propagation, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { OmniMetricProducer } from '../../views/store/metric-producer';

/**
 * An application that already runs NodeSDK: its provider exists before the package registers, so
 * the reader gets an `OmniMetricProducer` up front and registration attaches the store to it.
 */
describe('inside an application running NodeSDK', () => {
  it('NodeSDK\u2019s own reader exports the package\u2019s families through a producer attached at registration', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const producer = new OmniMetricProducer();
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, metricProducers: [producer] });
    // Traces are not what this test is about: nothing exported, nothing sent anywhere.
    const sdk = new NodeSDK({ metricReaders: [reader], instrumentations: [], traceExporter: undefined, spanProcessors: [] });
    sdk.start();
    let handle: OmniMetricsHandle | undefined;
    try {
      handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        logStats: true,
        meterProvider: metricsApi.getMeterProvider(),
        metricProducers: [producer],
        prometheus: false,
        exporters: [],
        logIntervalSeconds: 0,
        selfCheck: false,
      });
      handle.pipeline.requestSucceeded(0.5, 'stop');
      await reader.forceFlush();
      const exported = exporter.getMetrics().flatMap((resourceMetrics) => resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics));
      const success = exported.find((metric) => metric.descriptor.name === 'vllm:omni_requests_success_total');
      assert.deepEqual(
        success?.dataPoints.map((point) => [point.attributes, point.value]),
        [[{ model_name: 'm', finished_reason: 'stop' }, 1]],
      );
      const e2e = exported.find((metric) => metric.descriptor.name === 'vllm:omni_e2e_request_latency_s') as HistogramMetricData | undefined;
      assert.equal(e2e?.dataPoints[0]?.value.count, 1);
      assert.equal(e2e?.dataPoints[0]?.value.sum, 0.5);
      assert.ok(
        exported.some((metric) => metric.descriptor.name === 'vllm:num_requests_running'),
        'the eager per-engine series too',
      );
    } finally {
      await handle?.shutdown();
      await sdk.shutdown();
      // NodeSDK registered process-wide globals; leave the process as other tests expect it.
      metricsApi.disable();
      trace.disable();
      context.disable();
      propagation.disable();
    }
  });
});
