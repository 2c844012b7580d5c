import assert from 'node:assert/strict';
import { context, diag, DiagLogLevel, metrics as metricsApi, propagation, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { FakeOrchestrator, FakeServing } from '../hooks/fake-host';
import { httpGet } from '../support/http';
import { histogramOf, sampleValue } from '../support/exposition';

/** This package's warnings and errors through `diag` while `work` runs (the SDK's own are not this test's business). */
async function diagWarnings(work: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const ignore = (): void => undefined;
  const ours = (prefix: string) => (message: string) => {
    if (message.startsWith('omni-otel-metrics:')) warnings.push(`${prefix}${message}`);
  };
  diag.setLogger(
    { error: ours('error: '), warn: ours(''), info: ignore, debug: ignore, verbose: ignore },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  try {
    await work();
  } finally {
    diag.disable();
  }
  return warnings;
}

/** One request through the fake host: 7 prompt tokens on stage 0 replica 0, polled twice (queued, scheduled, a token; a token, finished), then streamed to the end. */
async function serveOneRequest(): Promise<void> {
  const orchestrator = new FakeOrchestrator();
  orchestrator.submitToStage({ requestId: 'a', stageId: 0, replicaId: 0, arrivalTime: Date.now() / 1000, promptTokenCount: 7 });
  await orchestrator.pollEngine(0, 0, 'a', 0);
  await orchestrator.pollEngine(0, 0, 'a', 1);
  for await (const _ of new FakeServing(orchestrator).generate({ requestId: 'a' })) void _;
}

/** The fake host's two stages, with the GenAI histograms; no periodic log, self-check or process families to disturb exact counts. */
const HOOKED_PIPELINE: OmniMetricsOptions = {
  modelName: 'm',
  stagePools: [1, 2],
  logStats: true,
  genAiMetrics: true,
  logIntervalSeconds: 0,
  selfCheck: false,
  processMetrics: false,
};
const EXTERNAL_WITHOUT_SERVER: OmniMetricsOptions = {
  modelName: 'm',
  logStats: true,
  meterProvider: 'external',
  prometheus: false,
  selfCheck: false,
  processMetrics: false,
};

function hooks(metrics: OmniMetricsHandle): OmniInstrumentation {
  return new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, servingClass: FakeServing, diagnosticsChannels: false });
}

/** NodeSDK registers process-wide globals: leave the process as other tests expect it. */
function resetGlobals(): void {
  metricsApi.disable();
  trace.disable();
  context.disable();
  propagation.disable();
}

describe('inside NodeSDK: OmniInstrumentation in its instrumentations, the reader and views in its metrics config', () => {
  let metrics: OmniMetricsHandle | undefined;
  let sdk: NodeSDK | undefined;
  let instrumentation: OmniInstrumentation | undefined;
  afterEach(async () => {
    instrumentation?.disable();
    await sdk?.shutdown();
    await metrics?.shutdown();
    resetGlobals();
    [metrics, sdk, instrumentation] = [undefined, undefined, undefined];
  });

  it("meterProvider: 'external': /metrics has the hooks' families, the GenAI histograms and the application's own instruments, with no warning", async () => {
    const warnings = await diagWarnings(async () => {
      metrics = await registerOmniMetrics({ ...HOOKED_PIPELINE, meterProvider: 'external', prometheus: { host: '127.0.0.1', port: 0 } });
      instrumentation = hooks(metrics);
      sdk = new NodeSDK({
        metricReaders: [metrics.prometheusReader!],
        views: [...metrics.views],
        instrumentations: [instrumentation],
        spanProcessors: [],
        autoDetectResources: false,
      });
      sdk.start();
      assert.equal(metrics.meterProvider, metricsApi.getMeterProvider(), "the handle's provider is NodeSDK's once it started");
      metricsApi.getMeter('application').createCounter('app_jobs').add(3);
      await serveOneRequest();
    });
    assert.deepEqual(warnings, []);

    const { status, body } = await httpGet(metrics!.prometheusServer!.url);
    assert.equal(status, 200);
    assert.equal(sampleValue(body, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop' }), 1);
    assert.equal(sampleValue(body, 'vllm:request_success_total', { model_name: 'm', finished_reason: 'stop', stage: '0', replica: '0' }), 1);
    assert.equal(sampleValue(body, 'vllm:generation_tokens_total', { model_name: 'm', stage: '0', replica: '0' }), 2);
    assert.equal(
      histogramOf(body, 'gen_ai_server_request_duration', {
        gen_ai_operation_name: 'chat',
        gen_ai_provider_name: 'vllm',
        gen_ai_request_model: 'm',
        stage: '0',
        replica: '0',
      })?.count,
      1,
    );
    assert.equal(sampleValue(body, 'app_jobs_total', {}), 3);
    assert.equal(body.match(/^# TYPE vllm:omni_requests_success_total /gm)?.length, 1, 'one block per family');
  });

  it('OTLP inside NodeSDK: its push reader carries the store through handle.createMetricProducer()', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    metrics = await registerOmniMetrics(EXTERNAL_WITHOUT_SERVER);
    const push = new PeriodicExportingMetricReader({
      exporter,
      exportIntervalMillis: 3_600_000,
      metricProducers: [metrics.createMetricProducer(exporter.selectAggregationTemporality.bind(exporter))],
    });
    sdk = new NodeSDK({ metricReaders: [metrics.prometheusReader!, push], views: [...metrics.views], spanProcessors: [], autoDetectResources: false });
    sdk.start();
    metrics.pipeline.requestSucceeded(0.5, 'stop');
    metricsApi.getMeter('application').createCounter('app_jobs').add(3);
    await push.forceFlush();
    const exported = exporter.getMetrics().flatMap((resourceMetrics) => resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics));
    const point = (name: string) => exported.find((metric) => metric.descriptor.name === name)?.dataPoints.map((p) => [p.attributes, p.value]);
    assert.deepEqual(point('vllm:omni_requests_success_total'), [[{ model_name: 'm', finished_reason: 'stop' }, 1]]);
    assert.deepEqual(point('app_jobs'), [[{}, 3]]);
  });

  it('the package owning its provider while NodeSDK hands the instrumentation another: the families stay on /metrics, and one warning says where the GenAI histograms went', async () => {
    const warnings = await diagWarnings(async () => {
      metrics = await registerOmniMetrics({ ...HOOKED_PIPELINE, prometheus: false });
      instrumentation = hooks(metrics);
      sdk = new NodeSDK({
        metricReaders: [
          new PeriodicExportingMetricReader({
            exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
            exportIntervalMillis: 3_600_000,
          }),
        ],
        instrumentations: [instrumentation],
        spanProcessors: [],
        autoDetectResources: false,
      });
      sdk.start();
      await serveOneRequest();
    });
    assert.deepEqual(warnings, [
      "omni-otel-metrics: OmniInstrumentation was given a MeterProvider other than the registration's (NodeSDK gives one to every instrumentation in its list): the GenAI histograms now go to that provider, not to this package's /metrics. Inside NodeSDK, register with meterProvider: 'external' and put handle.prometheusReader in NodeSDK's metricReaders.",
    ]);
    const text = await metrics!.metricsText();
    assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop' }), 1);
    assert.doesNotMatch(text, /gen_ai_/);
  });

  it("a reader no provider took: /metrics still serves the package's families, and says once what is missing", async () => {
    let text = '';
    const warnings = await diagWarnings(async () => {
      metrics = await registerOmniMetrics(EXTERNAL_WITHOUT_SERVER);
      metrics.pipeline.requestSucceeded(0.5, 'stop');
      text = await metrics.metricsText();
      await metrics.metricsText();
    });
    assert.equal(sampleValue(text, 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop' }), 1);
    assert.deepEqual(warnings, [
      "omni-otel-metrics: the OmniPrometheusReader is in no MeterProvider yet: /metrics serves the package's families but no other instruments. With meterProvider: 'external', put handle.prometheusReader in NodeSDK's metricReaders.",
    ]);
  });
});

describe('OTEL_SDK_DISABLED=true', () => {
  it('nothing is served, pushed, pulled or timed; recording and metricsText() still work', async () => {
    process.env.OTEL_SDK_DISABLED = 'true';
    try {
      await new Promise((resolve) => setImmediate(resolve));
      const before = process.getActiveResourcesInfo().length;
      const handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        logStats: true,
        logIntervalSeconds: 5,
        prometheus: { host: '127.0.0.1', port: 0 },
        exporters: ['prometheus', 'otlp'],
        otlp: { endpoint: 'http://127.0.0.1:9/v1/metrics' },
        enginePull: { engines: [{ stage: 0, replica: 0, url: 'http://127.0.0.1:9/metrics' }], intervalMillis: 100 },
        processMetrics: false,
      });
      try {
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(handle.prometheusServer, undefined);
        assert.equal(process.getActiveResourcesInfo().length, before, `resources: ${process.getActiveResourcesInfo().join(', ')}`);
        handle.pipeline.requestSucceeded(0.5, 'stop');
        assert.equal(sampleValue(await handle.metricsText(), 'vllm:omni_requests_success_total', { model_name: 'm', finished_reason: 'stop' }), 1);
      } finally {
        await handle.shutdown();
      }
    } finally {
      delete process.env.OTEL_SDK_DISABLED;
    }
  });
});
