import assert from 'node:assert/strict';
import { diag } from '@opentelemetry/api';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics } from '../../register';
import type { TemporalityPreference } from '../../exporters/otlp/types';
import { packageDiag } from '../../views/common/package-diag';
import { captureConsole, type ConsoleLine } from '../support/console-capture';
import { startRefusingCollector } from './support/refusing-collector';

/** What the console shows while a handle pushing OTLP with `otlp` flushes `flushes` times and shuts down. */
function printedWhileExporting(otlp: OmniMetricsOptions['otlp'], flushes: number): Promise<ConsoleLine[]> {
  return captureConsole(async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, exporters: ['otlp'], selfCheck: false, otlp });
    try {
      for (let i = 0; i < flushes; i++) await handle.forceFlush().catch(() => undefined);
    } finally {
      await handle.shutdown().catch(() => undefined);
    }
  });
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
      const printed = await printedWhileExporting({ endpoint: collector.url, protocol: 'http/json' }, 3);
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

  const costs: ReadonlyArray<[TemporalityPreference, string]> = [
    ['cumulative', 'the next export that gets through carries the totals (cumulative temporality)'],
    ['delta', 'the increments of this export are lost (delta temporality)'],
    ['lowmemory', 'the counter and histogram increments of this export are lost (lowmemory temporality)'],
  ];
  for (const [temporality, cost] of costs) {
    it(`the warning says what a failed export costs under ${temporality} temporality: ${cost}`, async () => {
      const collector = await startRefusingCollector();
      try {
        const printed = await printedWhileExporting({ endpoint: collector.url, protocol: 'http/json', temporality }, 1);
        assert.deepEqual(
          printed.filter((line) => line.text.includes('metrics export to')).map((line) => line.text.replace(/ failed \(.*\); /, ' failed (…); ')),
          [`omni-otel-metrics: metrics export to OTLP http/json ${collector.url} failed (…); ${cost}`],
        );
      } finally {
        await collector.close();
      }
    });
  }
});
