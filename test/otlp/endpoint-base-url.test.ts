import assert from 'node:assert/strict';
import fc from 'fast-check';
import { resolveExportSettings } from '../../exporters/otlp/export-settings';
import { parseOtelEnv } from '../../exporters/otlp/otel-env';
import type { OtlpProtocol } from '../../exporters/otlp/types';
import { startOtlpReceiver } from './support/otlp-receiver';
import { quietHandle } from '../support/quiet-handle';

describe('otlp.endpoint: a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is', () => {
  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    it(`${protocol}: http://host:port posts to /v1/metrics`, async () => {
      const receiver = await startOtlpReceiver(protocol);
      try {
        const handle = await quietHandle({
          logStats: true,
          exporters: ['otlp'],
          otlp: { protocol, endpoint: receiver.baseEndpoint },
        });
        try {
          assert.equal(handle.exportSettings.otlp.url, `${receiver.baseEndpoint}/v1/metrics`);
          handle.pipeline.requestSucceeded(0.5, 'stop');
          await handle.forceFlush();
        } finally {
          await handle.shutdown();
        }
        // The receiver refuses (and records as an error) any path but /v1/metrics.
        assert.deepEqual(receiver.errors, []);
        const body = receiver.requests[0]?.body as { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string }> }> }> } | undefined;
        const names = body?.resourceMetrics.flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.name)));
        assert.ok(names?.includes('vllm:omni_requests_success_total'), String(names));
      } finally {
        await receiver.close();
      }
    });
  }
});

describe('otlp.endpoint: any value', () => {
  const none = parseOtelEnv({});

  it('property: over HTTP a URL without a path gains /v1/metrics in its path, one with a path keeps it; the query stays, the fragment goes; anything else is refused naming otlp.endpoint', () => {
    const urls = fc.oneof(
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.webUrl({ withQueryParameters: true, withFragments: true }).map((url) => {
        const { origin, search, hash } = new URL(url);
        return `${origin}${search}${hash}`;
      }),
      fc.string(),
    );
    fc.assert(
      fc.property(urls, fc.constantFrom('http/protobuf', 'http/json', 'grpc') as fc.Arbitrary<OtlpProtocol>, (endpoint, protocol) => {
        let url: string | undefined;
        try {
          url = resolveExportSettings({ otlp: { protocol, endpoint } }, none).otlp.url;
        } catch (error) {
          assert.ok(error instanceof Error && /otlp\.endpoint/.test(error.message), String(error));
          return;
        }
        if (protocol === 'grpc') return assert.equal(url, endpoint);
        const given = new URL(endpoint);
        const posted = new URL(url ?? '');
        assert.equal(posted.origin, given.origin);
        assert.equal(posted.pathname, given.pathname === '/' ? '/v1/metrics' : given.pathname);
        assert.equal(posted.search, given.search);
        assert.equal(posted.hash, '');
      }),
      { numRuns: 300 },
    );
  });
});
