import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { negotiateFormat } from '../../exporters/content-negotiation';
import { createMetricsHandler } from '../../exporters/metrics-handler';
import { startPrometheusServer, type PrometheusServer } from '../../exporters/prometheus-http';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE } from '../../exporters/exposition/exposition-text';
import { httpGet } from '../support/http';

describe('Prometheus HTTP endpoint', () => {
  let provider: MeterProvider;
  let reader: OmniPrometheusReader;
  let server: PrometheusServer;

  before(async () => {
    reader = new OmniPrometheusReader({ declaredFamilies: [{ name: 'vllm:x', type: 'gauge', help: 'X.' }], createdSeries: false });
    provider = new MeterProvider({ readers: [reader] });
    provider.getMeter('t').createCounter('jobs', { description: 'Jobs.' }).add(2);
    server = await startPrometheusServer(reader, { host: '127.0.0.1', port: 0 });
  });

  after(async () => {
    await server.close();
    await provider.shutdown();
  });

  it('serves the text format with vLLM content type on GET /metrics', async () => {
    const response = await httpGet(server.url);
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-type'], TEXT_CONTENT_TYPE);
    assert.equal(response.body, '# HELP vllm:x X.\n# TYPE vllm:x gauge\n# HELP jobs_total Jobs.\n# TYPE jobs_total counter\njobs_total 2.0\n');
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    assert.notEqual(server.port, 0);
  });

  it('negotiates OpenMetrics from the Accept header', async () => {
    const accept = 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5';
    const response = await httpGet(server.url, { Accept: accept });
    assert.equal(response.headers['content-type'], OPENMETRICS_CONTENT_TYPE);
    assert.ok(response.body.endsWith('# EOF\n'));
    assert.ok(response.body.includes('# TYPE jobs counter\njobs_total 2.0\n'));
    assert.equal(negotiateFormat('text/plain'), 'text');
    assert.equal(negotiateFormat(undefined), 'text');
  });

  it('answers 404 on other paths and 405 (with Allow) on other methods', async () => {
    const notFound = await httpGet(server.url.replace('/metrics', '/nope'));
    assert.equal(notFound.status, 404);
    const port = server.port;
    const { request } = await import('node:http');
    const status = await new Promise<{ status: number; allow: string | undefined }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/metrics', method: 'POST' }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, allow: res.headers.allow });
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(status, { status: 405, allow: 'GET, HEAD' });
  });

  it('mounts as middleware: serves its path, hands every other path to next()', async () => {
    const handler = createMetricsHandler(reader, '/metrics');
    let fellThrough = 0;
    const host: Server = createServer((req, res) =>
      handler(req, res, () => {
        fellThrough++;
        res.end('api');
      }),
    );
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    try {
      assert.equal((await httpGet(`${base}/metrics?x=1`)).body.includes('jobs_total 2.0'), true);
      assert.equal((await httpGet(`${base}/v1/models`)).body, 'api');
      assert.equal(fellThrough, 1);
    } finally {
      await new Promise<void>((resolve) => host.close(() => resolve()));
    }
  });

  it('honours OTEL_EXPORTER_PROMETHEUS_HOST/PORT and rejects a bad port with the variable named', async () => {
    const fromEnv = await startPrometheusServer(reader, {}, { OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1', OTEL_EXPORTER_PROMETHEUS_PORT: '0' });
    try {
      assert.equal(fromEnv.host, '127.0.0.1');
      assert.equal((await httpGet(fromEnv.url)).status, 200);
    } finally {
      await fromEnv.close();
    }
    await assert.rejects(
      startPrometheusServer(reader, {}, { OTEL_EXPORTER_PROMETHEUS_PORT: 'abc' }),
      /OTEL_EXPORTER_PROMETHEUS_PORT must be an integer from 0 to 65535; got "abc"/,
    );
    await assert.rejects(startPrometheusServer(reader, { port: 70000 }), /prometheus.port must be an integer/);
  });

  it('rejects when the port is taken by its own earlier server, naming the server, the address and the options that move it', async () => {
    await assert.rejects(startPrometheusServer(reader, { host: '127.0.0.1', port: server.port }), (error: NodeJS.ErrnoException) => {
      assert.equal(error.code, 'EADDRINUSE');
      assert.equal(
        error.message,
        `omni-otel-metrics: the /metrics server cannot listen on 127.0.0.1:${server.port}: this port is held by an earlier registerOmniMetrics handle in this process (shut that handle down first, or keep using it). Set prometheus.host / prometheus.port (or OTEL_EXPORTER_PROMETHEUS_HOST / _PORT), or prometheus: false and mount handle.metricsHandler() on your own server.`,
      );
      return true;
    });
  });
});
