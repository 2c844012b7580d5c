import assert from 'node:assert/strict';
import { waitUntil } from '../support/collector-samples';
import { parseSamples } from '../support/exposition';
import { httpGet } from '../support/http';
import { startCollector, type CollectorProcess } from '../support/peers/collector-process';
import { needPeer } from '../support/peers/need-peer';
import { freePort } from '../support/ports';
import { docPrograms, runDocProgram } from './doc-programs';

/**
 * docs/otlp.md's program pushing to a real OpenTelemetry Collector, as it does when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` names one: the Collector's Prometheus exporter then serves the
 * request the program recorded, under the package's own name.
 */
describe('docs/otlp.md: the program pushing to a real Collector', function () {
  const collector = needPeer('collector', this);
  this.timeout(60_000);
  let otelcol: CollectorProcess | undefined;

  after(async () => {
    await otelcol?.stop();
  });

  it('the Collector receives the request it recorded', async () => {
    const [program] = docPrograms('docs/otlp.md');
    assert.ok(program);
    const [httpPort, exporterPort] = [await freePort(), await freePort()];
    const exporterUrl = `http://127.0.0.1:${exporterPort}/metrics`;
    otelcol = startCollector(collector.paths().bin['omni-otelcol'] as string, {
      receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${httpPort}` } } } },
      exporters: { prometheus: { endpoint: `127.0.0.1:${exporterPort}` } },
      service: { pipelines: { metrics: { receivers: ['otlp'], exporters: ['prometheus'] } } },
    });
    const running = otelcol;
    await waitUntil('the Collector listened', async () => (await httpGet(exporterUrl)).status === 200, () => running.output());
    const endpoint = `http://127.0.0.1:${httpPort}`;
    const { stdout } = await runDocProgram(program, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    assert.equal(stdout, `pushing to ${endpoint} every 10 s\n`);
    let served = '';
    await waitUntil(
      'the request arrived at the Prometheus exporter',
      async () => {
        served = (await httpGet(exporterUrl)).body;
        return parseSamples(served).some((sample) => sample.name === 'vllm:omni_requests_success_total');
      },
      () => `${running.output()}\n--- the Prometheus exporter ---\n${served}`,
    );
    const success = parseSamples(served).filter((sample) => sample.name === 'vllm:omni_requests_success_total');
    assert.deepEqual(
      success.map((sample) => [sample.labels.finished_reason, sample.labels.model_name, sample.value]),
      [['stop', 'demo', 1]],
    );
  });
});
