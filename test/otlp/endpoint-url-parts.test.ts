import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolveExportSettings } from '../../exporters/otlp/export-settings';
import { parseOtelEnv } from '../../exporters/otlp/otel-env';
import { withEnv } from '../support/console-capture';
import { quietHandle } from '../support/quiet-handle';

/** A collector that answers every POST 200 (an empty response is a whole OTLP answer) and keeps each request's target. */
async function startTargetRecorder(): Promise<{ base: string; targets: string[]; close: () => Promise<void> }> {
  const targets: string[] = [];
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      targets.push(`${request.method ?? ''} ${request.url ?? ''}`);
      response
        .writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/x-protobuf' })
        .end(request.headers['content-type']?.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('OTLP endpoints: built with the URL API, query kept, fragment dropped', () => {
  const none = parseOtelEnv({});
  const url = (endpoint: string | undefined, env: Record<string, string> = {}): string | undefined =>
    resolveExportSettings({ otlp: endpoint === undefined ? {} : { endpoint } }, parseOtelEnv(env)).otlp.url;

  it('otlp.endpoint without a path is a base: v1/metrics goes into the path, before the query; the fragment goes', () => {
    assert.equal(url('http://c:4318?tenant=a'), 'http://c:4318/v1/metrics?tenant=a');
    assert.equal(url('http://c:4318/?tenant=a&x=%20y'), 'http://c:4318/v1/metrics?tenant=a&x=%20y');
    assert.equal(url('http://c:4318#frag'), 'http://c:4318/v1/metrics');
    assert.equal(url('https://c?tenant=a#frag'), 'https://c/v1/metrics?tenant=a');
    // With a path it is the full URL, kept as it is but for the fragment.
    assert.equal(url('http://c:4318/otlp/v1/metrics?tenant=a#frag'), 'http://c:4318/otlp/v1/metrics?tenant=a');
    assert.equal(
      resolveExportSettings({ otlp: { endpoint: 'http://c:4318?tenant=a', protocol: 'http/json' } }, none).otlp.url,
      'http://c:4318/v1/metrics?tenant=a',
    );
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT follows the same rule (v1/metrics relative to its path); OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is used as given but for the fragment', () => {
    assert.equal(url(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318?tenant=a' }), 'http://c:4318/v1/metrics?tenant=a');
    assert.equal(url(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base?tenant=a#frag' }), 'http://c:4318/base/v1/metrics?tenant=a');
    assert.equal(url(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base/#frag' }), 'http://c:4318/base/v1/metrics');
    assert.equal(url(undefined, { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318/custom?tenant=a#frag' }), 'http://c:4318/custom?tenant=a');
    assert.equal(url(undefined, { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318?tenant=a' }), 'http://c:4318/?tenant=a');
    // gRPC takes a target, not a URL to build on.
    assert.equal(resolveExportSettings({ otlp: { protocol: 'grpc', endpoint: 'http://c:4317?x=1' } }, none).otlp.url, 'http://c:4317?x=1');
  });

  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`${protocol}: a collector behind http://host:port?tenant=a receives POST /v1/metrics?tenant=a, from the option and from the variable`, async function () {
      this.timeout(20_000);
      const collector = await startTargetRecorder();
      try {
        const fromOption = await quietHandle({ logStats: true, exporters: ['otlp'], otlp: { protocol, endpoint: `${collector.base}?tenant=a#frag` } });
        await fromOption.forceFlush();
        await fromOption.shutdown();
        const fromVariable = await withEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.base}?tenant=b` }, () =>
          quietHandle({ logStats: true, exporters: ['otlp'], otlp: { protocol } }),
        );
        await fromVariable.forceFlush();
        await fromVariable.shutdown();
        assert.deepEqual([...new Set(collector.targets)], ['POST /v1/metrics?tenant=a', 'POST /v1/metrics?tenant=b']);
      } finally {
        await collector.close();
      }
    });
  }
});
