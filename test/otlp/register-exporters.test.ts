import assert from 'node:assert/strict';
import { AggregationTemporality, InstrumentType, MeterProvider } from '@opentelemetry/sdk-metrics';
import { createOtlpMetricExporter, GRPC_EXPORTER_PACKAGE } from '../../exporters/otlp/otlp-metric-exporter';
import { OTLP_PROTOCOLS } from '../../exporters/otlp/types';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { activeResources, assertResourcesBackTo } from '../support/resources';
import { fromOtlp, metricNamed, pointWith } from './support/normalize';
import { expectPrinted } from '../support/console-capture';
import { startOtlpReceiver } from './support/otlp-receiver';

function withEnv<T>(variables: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const saved = Object.keys(variables).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, variables);
  return run().finally(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

describe('registerOmniMetrics: exporters, Prometheus server and shutdown', function () {
  this.timeout(15_000);

  it('exporters without prometheus start no server, even with prometheus options; metricsText() still works', async () => {
    const receiver = await startOtlpReceiver('http/protobuf');
    let handle: OmniMetricsHandle | undefined;
    try {
      handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        logStats: true,
        logIntervalSeconds: 0,
        prometheus: { host: '127.0.0.1', port: 0 },
        exporters: ['otlp'],
        otlp: { endpoint: receiver.endpoint },
        selfCheck: false,
      });
      assert.equal(handle.prometheusServer, undefined);
      handle.pipeline.requestFailed();
      assert.ok((await handle.metricsText()).includes('vllm:omni_requests_success_total{finished_reason="abort",model_name="m"} 1.0'));
    } finally {
      await handle?.shutdown();
      await receiver.close();
    }
  });

  it('OTEL_METRICS_EXPORTER=otlp alone also means no server', async () => {
    const receiver = await startOtlpReceiver('http/json');
    try {
      await withEnv(
        { OTEL_METRICS_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.baseEndpoint },
        async () => {
          const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: { host: '127.0.0.1', port: 0 }, selfCheck: false });
          try {
            assert.equal(handle.prometheusServer, undefined);
            assert.equal(handle.exportSettings.exportersSource, 'env');
            assert.equal(handle.exportSettings.otlp.url, `${receiver.baseEndpoint}/v1/metrics`);
          } finally {
            await handle.shutdown();
          }
        },
      );
    } finally {
      await receiver.close();
    }
  });

  it('prometheus + otlp: both run; shutdown pushes the last values without an explicit flush', async () => {
    const receiver = await startOtlpReceiver('grpc');
    let handle: OmniMetricsHandle | undefined;
    try {
      handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        logStats: true,
        logIntervalSeconds: 0,
        prometheus: { host: '127.0.0.1', port: 0 },
        exporters: ['prometheus', 'otlp'],
        otlp: { protocol: 'grpc', endpoint: receiver.endpoint },
        selfCheck: false,
      });
      assert.ok(handle.prometheusServer);
      handle.pipeline.requestSucceeded(1.5);
    } finally {
      await handle?.shutdown();
      await receiver.close();
    }
    assert.equal(receiver.requests.length, 1, 'the final export on shutdown');
    const [request] = receiver.requests;
    assert.ok(request);
    const point = pointWith(metricNamed(fromOtlp(request.body), 'vllm:omni_requests_success_total'), { finished_reason: 'stop', model_name: 'm' });
    assert.equal(point?.value, 1);
  });

  for (const protocol of OTLP_PROTOCOLS) {
    it(`${protocol}: shutdown closes its connection to the collector, which would keep an idle one open`, async () => {
      const receiver = await startOtlpReceiver(protocol);
      try {
        const before = await activeResources();
        const handle = await registerOmniMetrics({
          modelName: 'm',
          stagePools: [1],
          prometheus: false,
          exporters: ['otlp'],
          otlp: { protocol, endpoint: receiver.endpoint },
          selfCheck: false,
        });
        try {
          await handle.forceFlush();
          assert.equal(receiver.requests.length, 1, 'one export over a connection the exporter keeps alive');
        } finally {
          await handle.shutdown();
        }
        await assertResourcesBackTo(before, 'after shutdown');
      } finally {
        await receiver.close();
      }
    });
  }

  it('prometheus: false keeps meaning no server', async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, exporters: ['prometheus'], selfCheck: false });
    assert.equal(handle.prometheusServer, undefined);
    await handle.shutdown();
  });

  it('console: pushes through the SDK console exporter', async () => {
    const printed: unknown[] = [];
    const original = console.dir;
    console.dir = (item: unknown) => void printed.push(item);
    try {
      const handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        logStats: true,
        logIntervalSeconds: 0,
        exporters: ['console'],
        selfCheck: false,
      });
      handle.pipeline.requestFailed();
      await handle.forceFlush();
      await handle.shutdown();
    } finally {
      console.dir = original;
    }
    assert.ok(printed.some((item) => (item as { descriptor?: { name?: string } }).descriptor?.name === 'vllm:omni_requests_success_total'));
  });

  it('with your own provider: push exporters from options are an error, from OTEL_METRICS_EXPORTER they are left to you', async () => {
    const reader = new OmniPrometheusReader();
    const provider = new MeterProvider({ readers: [reader] });
    await assert.rejects(
      registerOmniMetrics({
        modelName: 'm',
        stagePools: [1],
        meterProvider: provider,
        prometheusReader: reader,
        prometheus: false,
        exporters: ['otlp'],
        selfCheck: false,
      }),
      /exporters otlp and console need the provider registerOmniMetrics creates/,
    );
    await withEnv({ OTEL_METRICS_EXPORTER: 'otlp' }, async () => {
      const handle = await expectPrinted(
        [
          "omni-otel-metrics: OTEL_METRICS_EXPORTER asks for push exporters, but the meter provider is not this package's: a reader built from that variable does not carry the package's families. Give your SDK's push reader `metricProducers: [handle.createMetricProducer()]`.",
        ],
        () => registerOmniMetrics({ modelName: 'm', stagePools: [1], meterProvider: provider, prometheusReader: reader, prometheus: false, selfCheck: false }),
      );
      await handle.shutdown();
    });
    await provider.shutdown();
  });

  it('genAiMetrics needs logStats (refused without it), and is off by default', async () => {
    const off = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, logStats: true, logIntervalSeconds: 0, selfCheck: false });
    await assert.rejects(registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, genAiMetrics: true, selfCheck: false }), {
      message: 'omni-otel-metrics: genAiMetrics needs logStats: true (the GenAI histograms are derived from the upstream stats)',
    });
    const on = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1],
      prometheus: false,
      logStats: true,
      logIntervalSeconds: 0,
      genAiMetrics: true,
      selfCheck: false,
    });
    assert.equal(off.genAi, undefined);
    assert.ok(on.genAi);
    await Promise.all([off.shutdown(), on.shutdown()]);
  });
});

describe('createOtlpMetricExporter', () => {
  it('honours the temporality preference on every protocol', async () => {
    const expected = {
      cumulative: [AggregationTemporality.CUMULATIVE, AggregationTemporality.CUMULATIVE, AggregationTemporality.CUMULATIVE],
      delta: [AggregationTemporality.DELTA, AggregationTemporality.DELTA, AggregationTemporality.DELTA],
      lowmemory: [AggregationTemporality.DELTA, AggregationTemporality.DELTA, AggregationTemporality.CUMULATIVE],
    } as const;
    for (const protocol of OTLP_PROTOCOLS) {
      for (const temporality of ['cumulative', 'delta', 'lowmemory'] as const) {
        const exporter = createOtlpMetricExporter({ protocol, temporality, url: 'http://127.0.0.1:1/v1/metrics' });
        const got = [InstrumentType.COUNTER, InstrumentType.HISTOGRAM, InstrumentType.GAUGE].map((type) => exporter.selectAggregationTemporality?.(type));
        assert.deepEqual(got, expected[temporality], `${protocol} ${temporality}`);
        await exporter.shutdown();
      }
    }
  });

  it('grpc without the optional dependency: a clear error naming the package', () => {
    const missing = (id: string): never => {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    };
    assert.throws(
      () => createOtlpMetricExporter({ protocol: 'grpc', temporality: 'cumulative' }, missing),
      (error: Error) => error.message.includes(GRPC_EXPORTER_PACKAGE) && error.message.includes('npm install'),
    );
    // The HTTP protocols never load it.
    const http = createOtlpMetricExporter({ protocol: 'http/protobuf', temporality: 'cumulative' }, missing);
    return http.shutdown();
  });
});
