import assert from 'node:assert/strict';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { AggregationTemporality, DataPointType, MeterProvider, type MetricData } from '@opentelemetry/sdk-metrics';
import type { OmniMetricsHandle } from '../../register';
import { OmniOptionError } from '../../views/common/option-checks';
import { OmniMetricProducer } from '../../views/store/metric-producer';
import fc from 'fast-check';
import { quietHandle } from '../support/quiet-handle';

const FAMILY = 'vllm:omni_e2e_request_latency_s';

async function nativeHandle(): Promise<OmniMetricsHandle> {
  return quietHandle({ logStats: true, nativeHistograms: true });
}

/** The family's metric as `producer` gives it. */
async function produced(handle: OmniMetricsHandle, options?: Parameters<OmniMetricsHandle['createMetricProducer']>[0]): Promise<MetricData | undefined> {
  const { resourceMetrics } = await handle.createMetricProducer(options).collect();
  return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((metric) => metric.descriptor.name === FAMILY);
}

describe('createMetricProducer: each reader gets the histograms it can carry', () => {
  it("the SDK's own PrometheusExporter prints the classic buckets of a family with native buckets", async () => {
    const handle = await nativeHandle();
    const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [handle.createMetricProducer()] });
    const provider = new MeterProvider({ readers: [exporter] });
    try {
      for (const latency of [0.05, 0.5, 0.5, 7]) handle.pipeline.requestSucceeded(latency, 'stop');
      const { resourceMetrics } = await exporter.collect();
      const text = new PrometheusSerializer().serialize(resourceMetrics);
      // The SDK's serializer spells the name with underscores and adds its scope labels.
      const name = 'vllm_omni_e2e_request_latency_s';
      const labels = 'model_name="m",otel_scope_name="omni-otel-metrics",otel_scope_version="0.1.0"';
      const lines = text.split('\n').filter((line) => line.startsWith(name) || line === `# TYPE ${name} histogram`);
      const cumulative: Array<[string, number]> = [
        ['0.05', 1],
        ['0.1', 1],
        ['0.25', 1],
        ['0.5', 3],
        ['1', 3],
        ['2', 3],
        ['5', 3],
        ['10', 4],
        ['20', 4],
        ['30', 4],
        ['60', 4],
        ['120', 4],
        ['300', 4],
        ['+Inf', 4],
      ];
      assert.deepEqual(lines, [
        `# TYPE ${name} histogram`,
        `${name}_count{${labels}} 4`,
        `${name}_sum{${labels}} 8.05`,
        ...cumulative.map(([le, count]) => `${name}_bucket{${labels},le="${le}"} ${count}`),
      ]);
      assert.ok(!text.includes('untyped'), text);
    } finally {
      await provider.shutdown();
      await handle.shutdown();
    }
  });

  it('a temporality selector (a push exporter) gets exponential points; exponentialHistograms decides it either way', async () => {
    const handle = await nativeHandle();
    try {
      handle.pipeline.requestSucceeded(1.5, 'stop');
      const cumulative = () => AggregationTemporality.CUMULATIVE;
      assert.equal((await produced(handle))?.dataPointType, DataPointType.HISTOGRAM);
      assert.equal((await produced(handle, cumulative))?.dataPointType, DataPointType.EXPONENTIAL_HISTOGRAM);
      assert.equal((await produced(handle, { aggregationTemporalitySelector: cumulative }))?.dataPointType, DataPointType.EXPONENTIAL_HISTOGRAM);
      assert.equal((await produced(handle, { exponentialHistograms: true }))?.dataPointType, DataPointType.EXPONENTIAL_HISTOGRAM);
      assert.equal(
        (await produced(handle, { aggregationTemporalitySelector: cumulative, exponentialHistograms: false }))?.dataPointType,
        DataPointType.HISTOGRAM,
      );
      assert.throws(
        () => handle.createMetricProducer({ exponential: true } as never),
        (error: unknown) => error instanceof OmniOptionError && error.option === 'createMetricProducer options.exponential',
      );
      assert.throws(
        () => handle.createMetricProducer({ exponentialHistograms: 'yes' } as never),
        (error: unknown) => error instanceof OmniOptionError && error.option === 'exponentialHistograms',
      );
    } finally {
      await handle.shutdown();
    }
  });

  it('property: whatever createMetricProducer is given, it returns a producer or throws an OmniOptionError', async () => {
    const handle = await nativeHandle();
    try {
      const given = fc.oneof(
        fc.anything(),
        fc.record(
          {
            aggregationTemporalitySelector: fc.oneof(
              fc.constant(() => AggregationTemporality.DELTA),
              fc.anything(),
            ),
            exponentialHistograms: fc.oneof(fc.boolean(), fc.anything()),
          },
          { requiredKeys: [] },
        ),
      );
      await fc.assert(
        fc.asyncProperty(given, async (options) => {
          let producer: OmniMetricProducer;
          try {
            producer = handle.createMetricProducer(options as never);
          } catch (error) {
            assert.ok(error instanceof OmniOptionError, String(error));
            return;
          }
          // Accepted: it collects.
          assert.deepEqual((await producer.collect()).errors, []);
        }),
        { numRuns: 300 },
      );
    } finally {
      await handle.shutdown();
    }
  });
});
