import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { diag } from '@opentelemetry/api';
import { registerOmniMetrics } from '../../register';
import type { TemporalityPreference } from '../../exporters/otlp/types';
import { packageDiag } from '../../views/package-diag';
import { captureConsole } from '../support/console-capture';

describe('a failed OTLP export says what it cost, by temporality', function () {
  this.timeout(15_000);
  beforeEach(() => {
    diag.disable();
    packageDiag.resetLevel();
  });

  const costs: ReadonlyArray<[TemporalityPreference, string]> = [
    ['cumulative', 'the next export that gets through carries the totals (cumulative temporality)'],
    ['delta', 'the increments of this export are lost (delta temporality)'],
    ['lowmemory', 'the counter and histogram increments of this export are lost (lowmemory temporality)'],
  ];
  for (const [temporality, cost] of costs) {
    it(`${temporality}: ${cost}`, async () => {
      const server = http.createServer((request, response) => {
        request.resume();
        request.on('end', () => response.writeHead(400).end('refused'));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`;
      try {
        const printed = await captureConsole(async () => {
          const handle = await registerOmniMetrics({
            modelName: 'm',
            stagePools: [1],
            prometheus: false,
            exporters: ['otlp'],
            selfCheck: false,
            otlp: { endpoint, protocol: 'http/json', temporality },
          });
          await handle.forceFlush().catch(() => undefined);
          await handle.shutdown().catch(() => undefined);
        });
        assert.deepEqual(
          printed.filter((line) => line.text.includes('metrics export to')).map((line) => line.text.replace(/ failed \(.*\); /, ' failed (…); ')),
          [`omni-otel-metrics: metrics export to OTLP http/json ${endpoint} failed (…); ${cost}`],
        );
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  }
});
