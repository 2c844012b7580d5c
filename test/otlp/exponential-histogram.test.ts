import assert from 'node:assert/strict';
import { OTLP_PROTOCOLS, type OtlpProtocol, type TemporalityPreference } from '../../exporters/otlp/types';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';

const FAMILY = 'vllm:omni_e2e_request_latency_s';

interface Run {
  readonly handle: OmniMetricsHandle;
  readonly receiver: OtlpReceiver;
}

async function startRun(protocol: OtlpProtocol, temporality: TemporalityPreference): Promise<Run> {
  const receiver = await startOtlpReceiver(protocol);
  try {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      logStats: true,
      logIntervalSeconds: 0,
      processMetrics: false,
      selfCheck: false,
      exporters: ['otlp'],
      otlp: { protocol, endpoint: receiver.endpoint, temporality },
      nativeHistograms: { families: [FAMILY], schema: 2, maxBuckets: 4 },
    });
    return { handle, receiver };
  } catch (error) {
    await receiver.close();
    throw error;
  }
}

/** The exponential histogram data point of `FAMILY` in export request `index`, as the receiver decoded it. */
async function exportedPoint(run: Run, index: number): Promise<Record<string, unknown> | undefined> {
  await run.handle.forceFlush();
  const requests = await run.receiver.waitForRequests(index + 1);
  const body = requests[index]?.body as { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<Record<string, unknown>> }> }> };
  const metric = body.resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics)).find((one) => one.name === FAMILY);
  assert.ok(metric, `${FAMILY} exported`);
  assert.equal(metric.histogram, undefined, 'exported as an exponential histogram, not an explicit one');
  const exponential = metric.exponentialHistogram as { dataPoints: Array<Record<string, unknown>>; aggregationTemporality: string } | undefined;
  return exponential?.dataPoints[0];
}

/** The point's fields that carry the distribution, numbers as numbers (64-bit integers come as strings from protobuf). */
function distribution(point: Record<string, unknown> | undefined): Record<string, unknown> {
  assert.ok(point);
  const buckets = (side: unknown): { offset: number; bucketCounts: number[] } => {
    const { offset, bucketCounts } = (side ?? {}) as { offset?: number; bucketCounts?: Array<string | number> };
    return { offset: offset ?? 0, bucketCounts: (bucketCounts ?? []).map(Number) };
  };
  return {
    count: Number(point.count),
    sum: point.sum,
    scale: point.scale ?? 0,
    zeroCount: Number(point.zeroCount ?? 0),
    positive: buckets(point.positive),
    min: point.min,
    max: point.max,
  };
}

describe('OTLP: exponential histogram points of the families with native buckets', function () {
  this.timeout(20_000);

  for (const protocol of OTLP_PROTOCOLS) {
    it(`${protocol}: cumulative points carry the native buckets (OpenTelemetry's index = Prometheus's - 1), min and max`, async () => {
      const run = await startRun(protocol, 'cumulative');
      try {
        for (const value of [0, 1, 1.2, 1.4, 1.8, 2]) run.handle.pipeline.requestSucceeded(value, 'stop');
        // Prometheus buckets 0..4 at schema 2 hold 1, 0, 2, 0, 2: OpenTelemetry's offset is -1.
        assert.deepEqual(distribution(await exportedPoint(run, 0)), {
          count: 6,
          sum: 7.4,
          scale: 2,
          zeroCount: 1,
          positive: { offset: -1, bucketCounts: [1, 0, 2, 0, 2] },
          min: 0,
          max: 2,
        });
        // Past maxBuckets (4 populated) the scale drops to 1, as the protobuf exposition's schema does.
        for (const value of [1.1, 3]) run.handle.pipeline.requestSucceeded(value, 'stop');
        assert.deepEqual(distribution(await exportedPoint(run, 1)), {
          count: 8,
          sum: 11.5,
          scale: 1,
          zeroCount: 1,
          positive: { offset: -1, bucketCounts: [1, 3, 2, 0, 1] },
          min: 0,
          max: 3,
        });
      } finally {
        await run.handle.shutdown();
        await run.receiver.close();
      }
      assert.deepEqual(run.receiver.errors, []);
    });
  }

  it('delta points subtract the previous export, after bringing it down to a lowered scale', async () => {
    const run = await startRun('http/protobuf', 'delta');
    try {
      for (const value of [0, 1, 1.2, 1.4, 1.8, 2]) run.handle.pipeline.requestSucceeded(value, 'stop');
      const first = distribution(await exportedPoint(run, 0));
      assert.deepEqual([first.count, first.scale, first.positive], [6, 2, { offset: -1, bucketCounts: [1, 0, 2, 0, 2] }]);
      for (const value of [1.1, 3]) run.handle.pipeline.requestSucceeded(value, 'stop');
      const second = distribution(await exportedPoint(run, 1));
      // At scale 1 the cumulative counts are 1, 3, 2, 0, 1 (Prometheus buckets 0..4); the first export's, merged, were 1, 2, 2, 0, 0.
      assert.deepEqual(
        [second.count, second.sum, second.scale, second.zeroCount, second.positive],
        [2, 11.5 - 7.4, 1, 0, { offset: -1, bucketCounts: [0, 1, 0, 0, 1] }],
      );
      assert.equal(await exportedPoint(run, 2).catch(() => 'none'), 'none', 'nothing new: no point of the family');
    } finally {
      await run.handle.shutdown();
      await run.receiver.close();
    }
  });
});
