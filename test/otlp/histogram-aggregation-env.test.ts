import assert from 'node:assert/strict';
import { parseOtelEnv } from '../../exporters/otlp/otel-env';
import { resolveOmniSettings } from '../../settings';
import { registerOmniMetrics } from '../../register';
import { withEnv } from '../support/console-capture';
import { startOtlpReceiver } from './support/otlp-receiver';

const VARIABLE = 'OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION';
const EXPONENTIAL = { [VARIABLE]: 'base2_exponential_bucket_histogram' };
const FAMILY = 'vllm:omni_e2e_request_latency_s';

describe(`${VARIABLE}`, () => {
  it('is read as the OpenTelemetry specification names its values (any case), and a value it does not name is refused', () => {
    assert.deepEqual(parseOtelEnv(EXPONENTIAL).defaultHistogramAggregation, { value: 'base2_exponential_bucket_histogram', variable: VARIABLE });
    assert.deepEqual(parseOtelEnv({ [VARIABLE]: 'Explicit_Bucket_Histogram' }).defaultHistogramAggregation, {
      value: 'explicit_bucket_histogram',
      variable: VARIABLE,
    });
    assert.equal(parseOtelEnv({ [VARIABLE]: ' ' }).defaultHistogramAggregation, undefined);
    assert.throws(
      () => parseOtelEnv({ [VARIABLE]: 'exponential' }),
      new RangeError(`${VARIABLE} must be one of explicit_bucket_histogram, base2_exponential_bucket_histogram; got "exponential"`),
    );
  });

  it('base2_exponential_bucket_histogram gives every histogram family native buckets when OTLP is exported; the option wins; Prometheus alone is not touched', () => {
    const settings = (options: Record<string, unknown>, env: Record<string, string>) =>
      resolveOmniSettings({ modelName: 'm', logStats: true, processMetrics: false, ...options }, env).nativeHistograms;
    assert.deepEqual(settings({ exporters: ['otlp'] }, EXPONENTIAL), { config: { schema: 3, maxBuckets: 160, zeroThreshold: 2 ** -128 }, families: undefined });
    assert.deepEqual(settings({}, { ...EXPONENTIAL, OTEL_METRICS_EXPORTER: 'prometheus,otlp' }), {
      config: { schema: 3, maxBuckets: 160, zeroThreshold: 2 ** -128 },
      families: undefined,
    });
    assert.equal(settings({ exporters: ['otlp'] }, { [VARIABLE]: 'explicit_bucket_histogram' }), undefined);
    assert.equal(settings({ exporters: ['otlp'], nativeHistograms: false }, EXPONENTIAL), undefined);
    assert.equal(settings({ exporters: ['prometheus'] }, EXPONENTIAL), undefined);
    assert.equal(settings({ exporters: ['otlp'] }, {}), undefined);
  });

  it('pushes exponential histogram points over OTLP with no option in the code', async function () {
    this.timeout(20_000);
    const receiver = await startOtlpReceiver('http/json');
    try {
      await withEnv(EXPONENTIAL, async () => {
        const handle = await registerOmniMetrics({
          modelName: 'm',
          logStats: true,
          logIntervalSeconds: 0,
          processMetrics: false,
          selfCheck: false,
          exporters: ['otlp'],
          otlp: { protocol: 'http/json', endpoint: receiver.endpoint },
        });
        try {
          handle.pipeline.requestSucceeded(0.5, 'stop');
          await handle.forceFlush();
          const [request] = await receiver.waitForRequests(1);
          const body = request?.body as { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<Record<string, unknown>> }> }> };
          const metric = body.resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics)).find((one) => one.name === FAMILY);
          assert.equal(metric?.histogram, undefined);
          const points = (metric?.exponentialHistogram as { dataPoints: Array<{ count: string | number; scale: number }> }).dataPoints;
          assert.deepEqual(
            points.map((point) => ({ count: Number(point.count), scale: point.scale })),
            [{ count: 1, scale: 3 }],
          );
        } finally {
          await handle.shutdown();
        }
      });
    } finally {
      await receiver.close();
    }
  });
});
