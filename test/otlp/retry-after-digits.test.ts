import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { createPushReaders } from '../../exporters/otlp/push-readers';
import { MAX_RETRY_AFTER_MILLIS, retryAfterMillis } from '../../exporters/otlp/retry-after';
import { captureWarnings } from '../support/diag-capture';

describe('Retry-After: any number of digits, capped at the documented maximum', function () {
  this.timeout(10_000);

  it('reads seconds of 11 digits and more as the cap, and leading zeros as the number they spell', () => {
    const now = Date.UTC(2030, 0, 1);
    assert.equal(MAX_RETRY_AFTER_MILLIS, 600_000);
    assert.equal(retryAfterMillis(429, '99999999999', now), MAX_RETRY_AFTER_MILLIS);
    assert.equal(retryAfterMillis(503, '9'.repeat(400), now), MAX_RETRY_AFTER_MILLIS);
    assert.equal(retryAfterMillis(429, '00000000030', now), 30_000);
    assert.equal(retryAfterMillis(429, '0000000000000', now), undefined, 'zero seconds: no pause');
    assert.equal(retryAfterMillis(429, '1e3', now), undefined, 'not all digits, not a date');
  });

  it('a collector answering 429 with an 11-digit Retry-After is sent nothing more until the cap has passed', async () => {
    let requests = 0;
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        requests++;
        response.writeHead(429, { 'Retry-After': '99999999999' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`;
    const captured = captureWarnings();
    const provider = new MeterProvider({
      readers: createPushReaders({
        exporters: new Set(['otlp']),
        exportersSource: 'option',
        otlp: { protocol: 'http/json', url, timeoutMillis: 100, temporality: 'cumulative' },
        exportIntervalMillis: 100,
        exportTimeoutMillis: 100,
      }),
    });
    provider.getMeter('t').createCounter('jobs').add(1);
    const started = Date.now();
    try {
      while (requests === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      // Five more intervals: each export is skipped.
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(requests, 1);
      const pause = captured.warnings.find((warning) => warning.includes('Retry-After'));
      const until = Date.parse(/before (\S+Z)/.exec(pause ?? '')?.[1] ?? '');
      assert.ok(
        until - started >= MAX_RETRY_AFTER_MILLIS && until - Date.now() <= MAX_RETRY_AFTER_MILLIS,
        `${pause ?? 'no pause'}: ten minutes from the answer`,
      );
    } finally {
      captured.stop();
      server.closeAllConnections();
      server.close();
      await provider.shutdown().catch(() => undefined);
    }
  });
});
