import assert from 'node:assert/strict';
import type { OmniMetricsOptions } from '../options';
import { registerOmniMetrics } from '../register';
import { captureConsole } from './support/console-capture';

const BASE: OmniMetricsOptions = { modelName: 'm', logStats: true, logIntervalSeconds: 0, processMetrics: false, selfCheck: false };

/** The package's startup warnings for `options` (the server, if any, on an ephemeral port and stopped at once). */
async function startupWarnings(options: Partial<OmniMetricsOptions>): Promise<string[]> {
  const lines = await captureConsole(async () => {
    const handle = await registerOmniMetrics({ ...BASE, ...options });
    await handle.shutdown();
  });
  return lines.filter((line) => line.method === 'warn').map((line) => line.text);
}

const TEXT_SERVER = { exposition: 'text', host: '127.0.0.1', port: 0 } as const;

describe('features a reader cannot carry are said at startup', () => {
  it("native histograms and exemplars with exposition 'text': one line each, naming the way out", async () => {
    assert.deepEqual(await startupWarnings({ nativeHistograms: true, exemplars: true, prometheus: TEXT_SERVER }), [
      "omni-otel-metrics: nativeHistograms with prometheus.exposition 'text': /metrics serves the 0.0.4 text only, so scrapers get the classic buckets (OTLP and metric producers still carry the exponential points). Use exposition 'negotiate' (the default) to offer the protobuf exposition.",
      "omni-otel-metrics: exemplars with prometheus.exposition 'text': only OpenMetrics carries exemplars, so /metrics serves none. Use exposition 'negotiate' (the default).",
    ]);
  });

  it("nothing is said when the exposition negotiates, or when 'text' has neither feature", async () => {
    assert.deepEqual(await startupWarnings({ nativeHistograms: true, exemplars: true, prometheus: { host: '127.0.0.1', port: 0 } }), []);
    assert.deepEqual(await startupWarnings({ exemplars: false, prometheus: TEXT_SERVER }), []);
  });

  it('native histograms with enginePull: nothing to say, the protobuf exposition is offered', async () => {
    const warnings = await startupWarnings({
      stagePools: [1],
      prometheus: false,
      exemplars: false,
      nativeHistograms: true,
      // A port nothing listens on: the pull fails quietly into scrape_up 0; only startup is looked at.
      enginePull: { engines: [{ stage: 0, replica: 0, url: 'http://127.0.0.1:9/metrics' }], timeoutMillis: 100 },
    });
    assert.deepEqual(warnings, []);
  });

  it('exemplars and OpenTelemetry readers: said once per handle, at its first producer', async () => {
    const said =
      "omni-otel-metrics: exemplars and OpenTelemetry readers: the SDK's data points have no exemplar field, so OTLP, console, log lines and readers given an OmniMetricProducer carry none. Scrape /metrics (OpenMetrics or protobuf) for them.";
    const lines = await captureConsole(async () => {
      const handle = await registerOmniMetrics({ ...BASE, exemplars: true, prometheus: false, exporters: [] });
      handle.createMetricProducer();
      handle.createMetricProducer();
      await handle.shutdown();
    });
    assert.deepEqual(
      lines.filter((line) => line.method === 'warn').map((line) => line.text),
      [said],
    );
    assert.deepEqual(await startupWarnings({ exemplars: false, prometheus: false, exporters: [] }), []);
  });
});
