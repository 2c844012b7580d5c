import assert from 'node:assert/strict';
import { AggregationTemporality, DataPointType, type ExponentialHistogram, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { EngineServer, fixtureText } from './support/engine-server';
import { decodeMetricFamilies, type DecodedFamily } from '../support/prometheus-protobuf';
import type { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { writeProtobuf } from '../../exporters/exposition/protobuf-writer';
import { allowPrinted } from '../support/console-capture';
import { familiesFromText } from '../support/text-families';

const PULLED = { model_name: 'org/current-model', stage: '1', replica: '1' };
/** Nothing served, pushed, logged or checked: the test reads the handle itself. */
const QUIET = { modelName: 'm', logStats: true, logIntervalSeconds: 0, processMetrics: false, selfCheck: false, prometheus: false, exporters: [] } as const;

/** Decoded families without what only the protobuf carries (native buckets): what the text carries too. */
function classicOnly(families: readonly DecodedFamily[]): DecodedFamily[] {
  return families.map((family) => ({
    ...family,
    metric: family.metric.map((metric) =>
      metric.histogram === undefined
        ? metric
        : {
            ...metric,
            histogram: {
              ...metric.histogram,
              schema: undefined,
              zeroThreshold: undefined,
              zeroCount: undefined,
              positiveSpan: [],
              positiveDelta: [],
              negativeSpan: [],
              negativeDelta: [],
            },
          },
    ),
  }));
}

function named(metrics: readonly MetricData[], name: string): MetricData {
  const metric = metrics.find((one) => one.descriptor.name === name);
  assert.ok(metric, name);
  return metric;
}

describe('engine pull with native histograms', () => {
  let engine: EngineServer | undefined;
  let handle: OmniMetricsHandle | undefined;

  /** Stage 1 replica 1 pulled from an engine, every family native, three pipeline latencies recorded. */
  async function pullingWithNativeHistograms(options: Partial<Parameters<typeof registerOmniMetrics>[0]> = {}): Promise<OmniMetricsHandle> {
    engine = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    const started = await registerOmniMetrics({
      ...QUIET,
      ...options,
      stagePools: [1, 2],
      nativeHistograms: true,
      enginePull: { engines: [{ stage: 1, replica: 1, url: engine.url }], cacheMillis: 0, timeoutMillis: 500 },
    });
    for (const latency of [0.5, 1, 1.5]) started.pipeline.requestSucceeded(latency, 'stop');
    return started;
  }

  afterEach(async () => {
    await handle?.shutdown();
    await engine?.down();
    handle = undefined;
    engine = undefined;
  });

  it("a push reader gets exponential points for the pipeline's own families and classic buckets for the families engines print", async () => {
    handle = await pullingWithNativeHistograms();
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

  it("the protobuf exposition: the pipeline's families with native buckets, the engines' families with the pulled series and classic buckets", async () => {
    handle = await pullingWithNativeHistograms();
    const bytes = handle.prometheusReader?.protobufBytes();
    assert.ok(bytes, 'offered');
    const families = decodeMetricFamilies(await bytes);
    const family = (name: string) => families.find((one) => one.name === name);

    const pipeline = family('vllm:omni_e2e_request_latency_s')?.metric[0]?.histogram;
    assert.deepEqual(
      { count: pipeline?.sampleCount, sum: pipeline?.sampleSum, schema: pipeline?.schema, spans: pipeline?.positiveSpan, deltas: pipeline?.positiveDelta },
      // Buckets -8, 0 and 5 at schema 3: a span of one, then a span of one 7 buckets on, then one 4 on.
      {
        count: 3,
        sum: 3,
        schema: 3,
        spans: [
          { offset: -8, length: 1 },
          { offset: 7, length: 1 },
          { offset: 4, length: 1 },
        ],
        deltas: [1, 0, 0],
      },
    );

    const upstream = family('vllm:e2e_request_latency_seconds');
    const pulled = upstream?.metric.find((metric) => metric.label.some((label) => label.name === 'model_name' && label.value === PULLED.model_name));
    assert.equal(pulled?.histogram?.sampleCount, 3);
    assert.equal(pulled?.histogram?.sampleSum, 9003);
    assert.equal(pulled?.histogram?.schema, undefined, 'classic buckets, as pulled');
    assert.equal(pulled?.histogram?.bucket.length, 22, 'the 21 bounds and +Inf');
    // The in-process series of the pulled replica is left out, the other replicas' stay.
    const labelSets = upstream?.metric.map((metric) => Object.fromEntries(metric.label.map((label) => [label.name, label.value])));
    assert.deepEqual(labelSets?.map((labels) => `${labels.model_name} ${labels.stage}/${labels.replica}`).sort(), [
      'm 0/0',
      'm 1/0',
      `${PULLED.model_name} 1/1`,
    ]);
  });

  it("the application's instruments and target_info: the protobuf carries the text's families, series and values, native buckets beside them", async () => {
    handle = await pullingWithNativeHistograms({ prometheus: { host: '127.0.0.1', port: 0, createdSeries: false, withTargetInfo: true } });
    const meter = (handle.meterProvider as MeterProvider).getMeter('my-app');
    meter.createCounter('app.jobs', { description: 'Jobs.' }).add(2, { 'odd.key': 'a"b\\c\nd' });
    meter.createHistogram('app.latency').record(0.3, { route: '/a' });
    // A stream named like a family the engines print is left out, as in the text.
    meter.createGauge('vllm:num_requests_running').record(9);
    const reader = handle.prometheusReader as OmniPrometheusReader;
    const [bytes, text] = await allowPrinted(
      [
        "omni-otel-metrics: the application's gauge vllm:num_requests_running is left out of /metrics: its name vllm:num_requests_running clashes with the family vllm:num_requests_running, which is printed. Rename one of them.",
      ],
      async () => [await reader.protobufBytes(), await reader.metricsText('text')] as const,
    );
    assert.ok(bytes);
    const fromText = writeProtobuf(familiesFromText(text), { createdSeries: false });
    assert.deepEqual(classicOnly(decodeMetricFamilies(bytes)), classicOnly(decodeMetricFamilies(fromText)));
    const names = decodeMetricFamilies(bytes).map((family) => family.name);
    assert.deepEqual(
      names.filter((name) => name === 'target_info' || name.startsWith('app_')),
      ['target_info', 'app_jobs_total', 'app_latency'],
    );
    assert.equal(names.filter((name) => name === 'vllm:num_requests_running').length, 1);
  });
});
