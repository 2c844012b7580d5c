import assert from 'node:assert/strict';
import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { createRequestStateStats, createSchedulerStats } from '../../instrumentation/stats/types';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { parseGoFloat, parseSamples, type Sample } from '../support/exposition';
import { httpGet } from '../support/http';
import { startCollector, type CollectorProcess } from '../support/peers/collector-process';
import { needPeer } from '../support/peers/need-peer';
import { freePort } from '../support/ports';

/** Labels the receiver and the Collector's Prometheus exporter add to every series. */
const ADDED = new Set(['job', 'instance', 'otel_scope_name', 'otel_scope_version', 'otel_scope_schema_url']);

/** A sample's name and labels, without the added ones; `le` by its value (the Collector prints `1`, the package `1.0`). */
function key(sample: Sample): string {
  const labels = Object.entries(sample.labels)
    .filter(([name]) => !ADDED.has(name))
    .map(([name, value]) => [name, name === 'le' ? String(parseGoFloat(value)) : value])
    .sort(([a = ''], [b = '']) => (a < b ? -1 : 1));
  return `${sample.name}${JSON.stringify(labels)}`;
}

/** The `StartTimestamp` the debug exporter printed for the first point of `metric`, in milliseconds. */
function startTimeMillis(output: string, metric: string): number | undefined {
  const at = output.lastIndexOf(`-> Name: ${metric}\n`);
  const match = at < 0 ? null : /StartTimestamp: (\S+) (\S+) \+0000 UTC/.exec(output.slice(at));
  return match ? Date.parse(`${match[1]}T${match[2]?.slice(0, 12)}Z`) : undefined;
}

/**
 * The Collector (otelcol 0.165, contrib prometheusreceiver 0.165.1) scrapes the package's
 * `/metrics` every second and hands the points to its debug exporter and its Prometheus exporter:
 * no scrape error, every value the direct scrape shows, and `_created` as each point's start time.
 */
describe("the OpenTelemetry Collector's prometheus receiver scraping /metrics", function () {
  const collector = needPeer('collector', this);
  this.timeout(60_000);
  let metrics: OmniMetricsHandle;
  let otelcol: CollectorProcess;
  let exporterUrl: string;

  before(async function () {
    const { bin } = collector.paths();
    metrics = await registerOmniMetrics({
      modelName: 'omni-collector',
      stagePools: [1, 2],
      logStats: true,
      prometheus: { host: '127.0.0.1', port: 0 },
      logIntervalSeconds: 0,
      processMetrics: false,
      selfCheck: false,
    });
    for (let engine = 0; engine < 3; engine++) {
      const iteration = new IterationStats({ iterationTimestamp: 1000 });
      const request = createRequestStateStats({ arrivalTime: 999, queuedTs: 5, scheduledTs: 5.5, firstTokenTs: 6, lastTokenTs: 7, numGenerationTokens: 5 });
      iteration.updateFromFinishedRequest({ finishReason: 'stop', numPromptTokens: 12, maxTokensParam: 16 }, request);
      metrics.statLogger?.record(createSchedulerStats({ numRunningReqs: engine + 1 }), iteration, engine);
    }
    for (const seconds of [0.3, 1.5, 7]) metrics.pipeline.requestSucceeded(seconds, 'stop');
    const exporterPort = await freePort();
    exporterUrl = `http://127.0.0.1:${exporterPort}/metrics`;
    otelcol = startCollector(bin['omni-otelcol'] as string, {
      receivers: {
        prometheus: {
          config: {
            scrape_configs: [{ job_name: 'omni', scrape_interval: '1s', static_configs: [{ targets: [`127.0.0.1:${metrics.prometheusServer?.port}`] }] }],
          },
        },
      },
      exporters: { debug: { verbosity: 'detailed' }, prometheus: { endpoint: `127.0.0.1:${exporterPort}` } },
      service: { pipelines: { metrics: { receivers: ['prometheus'], exporters: ['debug', 'prometheus'] } } },
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await httpGet(exporterUrl).catch(() => undefined);
      if (answer?.body.includes('vllm:omni_requests_success_total{')) break;
      if (Date.now() > deadline) assert.fail(`the Collector exported nothing within 30 s:\n${otelcol.output().slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });

  after(async () => {
    await otelcol?.stop();
    await metrics?.shutdown();
  });

  it('logs no error or warning', () => {
    const complaints = otelcol
      .output()
      .split('\n')
      .filter((line) => /\t(warn|error)\t/.test(line));
    assert.deepEqual(complaints, []);
  });

  it('re-exports every sample of the direct scrape with its value (the 0.0.4 text, `_created` aside)', async () => {
    const direct = parseSamples(await metrics.metricsText('text')).filter((sample) => !sample.name.endsWith('_created'));
    const collected = new Map(parseSamples((await httpGet(exporterUrl)).body).map((sample) => [key(sample), sample.value]));
    assert.ok(direct.length > 300, `${direct.length} samples`);
    const missing = direct.filter((sample) => !collected.has(key(sample))).map(key);
    const different = direct.filter((sample) => collected.has(key(sample)) && !Object.is(collected.get(key(sample)), sample.value)).map(key);
    assert.deepEqual({ missing, different }, { missing: [], different: [] });
  });

  it("takes each counter's and histogram's `_created` as its points' start time", async () => {
    const text = await metrics.metricsText('text');
    for (const [metric, created] of [
      ['vllm:omni_requests_success_total', 'vllm:omni_requests_success_created'],
      ['vllm:omni_e2e_request_latency_s', 'vllm:omni_e2e_request_latency_s_created'],
    ] as const) {
      const seconds = parseSamples(text).find((sample) => sample.name === created)?.value;
      assert.ok(seconds !== undefined, created);
      const start = startTimeMillis(otelcol.output(), metric);
      assert.ok(start !== undefined, `${metric}: a StartTimestamp in the debug output`);
      assert.ok(Math.abs(start - seconds * 1000) < 1, `${metric}: start ${new Date(start).toISOString()}, _created ${seconds}`);
    }
  });
});
