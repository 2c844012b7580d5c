import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag } from '@opentelemetry/api';
import { registerOmniMetrics } from '../../register';
import { packageDiag } from '../../views/package-diag';
import { captureConsole } from '../support/console-capture';

/** A collector that refuses every export with 400 (not retried by the exporter). */
async function startRefusingCollector(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end('refused'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/metrics`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('failed OTLP exports are reported, rate-limited', function () {
  this.timeout(15_000);
  beforeEach(() => {
    diag.disable();
    packageDiag.resetLevel();
  });

  it('with no diag logger, the first failure is one console warning naming the endpoint; the next ones within the minute are counted, not printed', async () => {
    const collector = await startRefusingCollector();
    try {
      const printed = await captureConsole(async () => {
        const handle = await registerOmniMetrics({
          modelName: 'm',
          stagePools: [1],
          prometheus: false,
          exporters: ['otlp'],
          selfCheck: false,
          otlp: { endpoint: collector.url, protocol: 'http/json' },
        });
        try {
          for (let i = 0; i < 3; i++) await handle.forceFlush().catch(() => undefined);
        } finally {
          await handle.shutdown().catch(() => undefined);
        }
      });
      assert.ok(collector.requests() >= 3, `${collector.requests()} export requests`);
      const warnings = printed.filter((line) => line.text.includes('metrics export to'));
      assert.equal(warnings.length, 1, JSON.stringify(printed));
      assert.equal(warnings[0]!.method, 'warn');
      assert.match(
        warnings[0]!.text,
        new RegExp(
          `^omni-otel-metrics: metrics export to OTLP http/json ${collector.url} failed \\(.+\\); the next export that gets through carries the totals \\(cumulative temporality\\)$`,
        ),
      );
    } finally {
      await collector.close();
    }
  });
});
