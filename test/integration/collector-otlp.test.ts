import assert from 'node:assert/strict';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { differencesFromOwn, waitUntil } from '../support/collector-samples';
import { parseSamples } from '../support/exposition';
import { httpGet } from '../support/http';
import { startCollector, type CollectorProcess } from '../support/peers/collector-process';
import { needPeer } from '../support/peers/need-peer';
import { freePort } from '../support/ports';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';

const E2E = 'vllm:omni_e2e_request_latency_s';
const SUCCESS = 'vllm:omni_requests_success_total';
/**
 * Two processes push OTLP to a real Collector (otelcol 0.165, contrib 0.165.1), one over HTTP and
 * one over gRPC. The Collector re-exports to its `prometheus` exporter and remote-writes into
 * Prometheus 3.16: the names, label sets and values are those of each process's own `/metrics`,
 * the two stay apart by `service.instance.id`, and an exponential histogram arrives in
 * Prometheus as a native histogram.
 */
describe('OTLP through the OpenTelemetry Collector, to its Prometheus exporter and by remote write into Prometheus 3', function () {
  const collector = needPeer('collector', this);
  const prometheus3 = needPeer('prometheus3', this);
  this.timeout(90_000);
  let prometheus: PrometheusHandle;
  let otelcol: CollectorProcess;
  let exporterUrl: string;
  let lastExport = '';
  const handles: OmniMetricsHandle[] = [];

  before(async function () {
    const { bin } = collector.paths();
    const promBin = prometheus3.paths().bin.prometheus;
    prometheus = await startPrometheus({ binary: promBin, scrapeTargets: [], extraArgs: ['--web.enable-remote-write-receiver'] });
    const [grpcPort, httpPort, exporterPort] = [await freePort(), await freePort(), await freePort()];
    exporterUrl = `http://127.0.0.1:${exporterPort}/metrics`;
    otelcol = startCollector(bin['omni-otelcol'] as string, {
      receivers: { otlp: { protocols: { grpc: { endpoint: `127.0.0.1:${grpcPort}` }, http: { endpoint: `127.0.0.1:${httpPort}` } } } },
      exporters: {
        prometheus: { endpoint: `127.0.0.1:${exporterPort}` },
        prometheusremotewrite: { endpoint: `${prometheus.url}/api/v1/write` },
      },
      service: { pipelines: { metrics: { receivers: ['otlp'], exporters: ['prometheus', 'prometheusremotewrite'] } } },
    });
    await waitUntil(
      'the Collector listened',
      async () => (await httpGet(exporterUrl)).status === 200,
      () => otelcol.output(),
    );
    const processes = [
      { otlp: { protocol: 'http/protobuf' as const, endpoint: `http://127.0.0.1:${httpPort}/v1/metrics` }, e2e: [0.3, 1.5] },
      { otlp: { protocol: 'grpc' as const, endpoint: `http://127.0.0.1:${grpcPort}` }, e2e: [7] },
    ];
    for (const [index, { otlp, e2e }] of processes.entries()) {
      const handle = await registerOmniMetrics({
        // Two processes of one service: each its own service.instance.id, as on two machines.
        resource: resourceFromAttributes({ 'service.instance.id': `omni-process-${index}` }),
        modelName: 'm',
        logStats: true,
        logIntervalSeconds: 0,
        processMetrics: false,
        selfCheck: false,
        serviceName: 'omni-collector-test',
        exporters: ['prometheus', 'otlp'],
        prometheus: { host: '127.0.0.1', port: 0 },
        otlp: { ...otlp, exportIntervalMillis: 60_000 },
        nativeHistograms: { families: [E2E] },
      });
      handles.push(handle);
      for (const seconds of e2e) handle.pipeline.requestSucceeded(seconds, 'stop');
      await handle.forceFlush();
    }
    await waitUntil(
      'both processes arrived at the Prometheus exporter',
      async () => {
        lastExport = (await httpGet(exporterUrl)).body;
        return parseSamples(lastExport).filter((sample) => sample.name === SUCCESS).length === 2;
      },
      () => `${otelcol.output()}\n--- the Prometheus exporter ---\n${lastExport}`,
    );
  });

  after(async () => {
    await Promise.all(handles.map((handle) => handle.shutdown()));
    await otelcol?.stop();
    await prometheus?.stop();
  });

  it('keeps the two processes apart by service.instance.id (the `instance` label), each with its own count', async () => {
    const samples = parseSamples((await httpGet(exporterUrl)).body).filter((sample) => sample.name === SUCCESS);
    const byInstance = Object.fromEntries(samples.map((sample) => [sample.labels.instance, sample.value]));
    assert.deepEqual(byInstance, { 'omni-process-0': 2, 'omni-process-1': 1 });
    assert.ok(samples.every((sample) => sample.labels.job === 'omni-collector-test'));
  });

  it("re-exports each process's own /metrics: the same names, label sets and values (classic families)", async () => {
    const collected = parseSamples((await httpGet(exporterUrl)).body);
    for (const handle of handles) {
      const own = parseSamples(await handle.metricsText('text')).filter((sample) => !sample.name.endsWith('_created') && !sample.name.startsWith(E2E));
      // The instance whose request count is this process's.
      const count = own.find((sample) => sample.name === SUCCESS)?.value;
      const instance = collected.find((sample) => sample.name === SUCCESS && sample.value === count)?.labels.instance;
      assert.ok(instance, `the Collector has ${SUCCESS} = ${count}`);
      const mine = collected.filter((sample) => sample.labels.instance === instance);
      assert.deepEqual(differencesFromOwn(mine, own), { missing: [], different: [] });
    }
  });

  it('remote-writes the exponential e2e histogram into Prometheus 3 as a native histogram, per process', async () => {
    const result = await prometheus.waitFor(`histogram_count(${E2E})`, (samples) => samples.length === 2, 20_000);
    assert.deepEqual(result.map((sample) => sample.value[1]).sort(), ['1', '2']);
    const [sum] = await prometheus.query(`sum(histogram_sum(${E2E}))`);
    assert.equal(Number(sum?.value[1]), 0.3 + 1.5 + 7);
  });
});
