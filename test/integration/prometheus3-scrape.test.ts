import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { startReferencePipeline, TENANT_LABELS, type ReferencePipeline } from '../../examples/reference-pipeline';
import { runLoad } from '../../examples/load/run-load';
import { httpGet } from '../support/http';
import { queryResultChoices, queryResultExpr, type GrafanaVariable } from '../support/grafana-variables';
import { alertRules, dashboardQueries, filledIn, watched } from '../support/monitoring-queries';
import { needPeer } from '../support/peers/need-peer';
import { startPrometheus, type PrometheusHandle, type ScrapeTarget } from '../support/prometheus-server';

const E2E = 'vllm:omni_e2e_request_latency_s';
/** Objectives almost every request misses: the goodput panels have misses to draw, and the burn-rate alerts fire. */
const GOODPUT_OBJECTIVES = { firstOutputSeconds: 0.5, e2eSeconds: 0.01, audioRtf: 1 };

/** One job per scrape protocol Prometheus 3 offers, and one with its default list. */
const JOBS: ReadonlyArray<{ job: string; settings: Record<string, unknown> }> = [
  { job: 'default', settings: {} },
  { job: 'text-0.0.4', settings: { scrape_protocols: ['PrometheusText0.0.4'] } },
  { job: 'text-1.0.0', settings: { scrape_protocols: ['PrometheusText1.0.0'] } },
  { job: 'openmetrics-0.0.1', settings: { scrape_protocols: ['OpenMetricsText0.0.1'] } },
  { job: 'openmetrics-1.0.0', settings: { scrape_protocols: ['OpenMetricsText1.0.0'] } },
  // Native histograms come only over protobuf; the classic buckets are kept beside them for the dashboard.
  { job: 'protobuf', settings: { scrape_protocols: ['PrometheusProto'], scrape_native_histograms: true, always_scrape_classic_histograms: true } },
];

/** Every panel query of the shipped dashboard and every alert rule's watched series, for one job. */
function monitoringQueries(job: string, model: string): string[] {
  return [...dashboardQueries().map(({ expr }) => filledIn(expr, model, job)), ...alertRules().map(({ expr }) => filledIn(watched(expr), model, job))];
}

/** A target that answers every scrape with an empty exposition and keeps the `Accept` header each job sent. */
function startAcceptProbe(): Promise<{ server: Server; accepts: Map<string, string> }> {
  const accepts = new Map<string, string>();
  const server = createServer((request, response) => {
    accepts.set((request.url ?? '').replace(/^\/probe\//, ''), request.headers.accept ?? '');
    response.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    response.end('');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, accepts })));
}

/**
 * Prometheus 3 (built from its module, see test/support/peers) scrapes the reference pipeline under
 * a mixed load, once per scrape protocol: every target is up without scrape errors, every query of
 * the shipped dashboard and alert rules finds the series it draws, in each protocol's data.
 */
describe('Prometheus 3 scraping the reference pipeline, every scrape protocol', function () {
  const prometheus3 = needPeer('prometheus3', this);
  this.timeout(120_000);
  let pipeline: ReferencePipeline;
  let prometheus: PrometheusHandle;
  let probe: { server: Server; accepts: Map<string, string> };

  before(async function () {
    const { bin } = prometheus3.paths();
    pipeline = await startReferencePipeline({
      port: 0,
      metricsPort: 0,
      profile: 'fast',
      imageReplicas: 1,
      logIntervalSeconds: 0,
      logSink: { info: () => undefined },
      requestLabels: TENANT_LABELS,
      slo: GOODPUT_OBJECTIVES,
      nativeHistograms: { families: [E2E], schema: 3 },
      // Some image requests fail on their stage and some audio is skipped: the failure and skip families and their alerts have series.
      simulation: { diffusion: { errorProbability: 0.5 }, code2wav: { malformedProbability: 0.3 } },
    });
    probe = await startAcceptProbe();
    const metrics = pipeline.metricsAddress;
    assert.ok(metrics);
    const probeAddress = `127.0.0.1:${(probe.server.address() as AddressInfo).port}`;
    const targets: ScrapeTarget[] = JOBS.flatMap(({ job, settings }) => [
      { job, target: metrics, settings },
      { job: `probe-${job}`, target: probeAddress, metricsPath: `/probe/${job}`, settings },
    ]);
    prometheus = await startPrometheus({ binary: bin.prometheus, scrapeTargets: targets, scrapeIntervalSeconds: 1 });
    const client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    // One request scraped before the load: the series the load counts into (tenant "other") exist already, so a rate sees the load's requests.
    await client.chat.completions.create({ model: pipeline.modelName, messages: [{ role: 'user', content: 'first' }], max_tokens: 4 });
    await prometheus.waitFor('count(vllm:omni_requests_good_total)', (result) => result[0]?.value[1] === String(JOBS.length), 20_000);
    const summary = await runLoad({
      baseUrl: `${pipeline.apiUrl}/v1`,
      requests: 40,
      concurrency: 4,
      maxTokens: 16,
      imageRatio: 0.25,
      disconnectRatio: 0.2,
      seed: 3,
    });
    const errors = Object.keys(summary.errors);
    assert.ok(errors.length > 0, 'some image requests failed on their stage');
    assert.deepEqual(
      errors.filter((error) => !error.startsWith('500 image stage')),
      [],
      'no failure but those of the image stage',
    );
    // Requests of a tenant at each priority, for the per-tenant and per-priority panels.
    for (const priority of ['high', 'low']) {
      await client.chat.completions.create(
        { model: pipeline.modelName, user: 'tenant-a', messages: [{ role: 'user', content: `at ${priority} priority` }], max_tokens: 4 },
        { headers: { 'x-priority': priority } },
      );
    }
    // Every job scrapes twice more after the load, so each rate() has its last points.
    const loaded = Date.now() / 1000;
    await prometheus.waitFor(`count(timestamp(up) > ${loaded + 1.1})`, (result) => result[0]?.value[1] === String(JOBS.length * 2), 20_000);
  });

  after(async () => {
    await prometheus?.stop();
    probe?.server.close();
    await pipeline?.stop();
  });

  it('every target is up, with no scrape error in /api/v1/targets or in the server log', async () => {
    const targets = await prometheus.waitForScrape(20_000);
    assert.equal(targets.length, JOBS.length * 2);
    for (const target of targets) assert.deepEqual([target.scrapePool, target.health, target.lastError], [target.scrapePool, 'up', '']);
    const up = await prometheus.query('up');
    assert.deepEqual(up.map((sample) => sample.value[1]).sort(), Array(JOBS.length * 2).fill('1'));
    const complaints = prometheus
      .logs(400)
      .split('\n')
      .filter((line) => /level=(warn|error)/i.test(line));
    assert.deepEqual(complaints, [], 'the server logged no warning or error');
  });

  it('answers the `escaping` each job asks for in its Accept header, and names none when it asks none', async () => {
    const answered: Record<string, string | undefined> = {};
    for (const { job } of JOBS) {
      const accept = probe.accepts.get(job);
      assert.ok(accept !== undefined, job);
      answered[job] = (await httpGet(pipeline.metricsUrl, { Accept: accept })).headers['content-type'];
    }
    assert.deepEqual(answered, {
      default: 'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8',
      'text-0.0.4': 'text/plain; version=0.0.4; charset=utf-8',
      'text-1.0.0': 'text/plain; version=0.0.4; charset=utf-8; escaping=allow-utf-8',
      'openmetrics-0.0.1': 'application/openmetrics-text; version=1.0.0; charset=utf-8',
      'openmetrics-1.0.0': 'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8',
      protobuf: 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited',
    });
    // What Prometheus 3 sent: `escaping=allow-utf-8` with the 1.0.0 text formats, nothing with the others.
    assert.equal(
      probe.accepts.get('default'),
      'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7,application/openmetrics-text;version=0.0.1;q=0.6,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3',
    );
  });

  it('`_created`: stored as a `<name>_created` series under every text protocol (no feature flag); over protobuf no start time arrives (the package sends none there)', async () => {
    const perJob = async (query: string): Promise<Record<string, string>> =>
      Object.fromEntries((await prometheus.query(query)).map((sample) => [sample.metric.job ?? '', sample.value[1]]));
    const created = await perJob('count by (job) ({__name__=~"vllm:.+_created", job!~"probe-.*"})');
    const all = await perJob('count by (job) ({__name__=~"vllm:.+", job!~"probe-.*"})');
    const native = await perJob('count by (job) (histogram_count({__name__=~"vllm:.+", job!~"probe-.*"}))');
    const texts = JOBS.map(({ job }) => job).filter((job) => job !== 'protobuf');
    // The same series, `_created` included, whichever text format carried them.
    assert.deepEqual(new Set(texts.map((job) => `${all[job]} series, ${created[job]} _created`)).size, 1, JSON.stringify({ all, created }));
    const [text] = texts as [string];
    assert.ok(Number(created[text]) > 100, `${created[text]} _created series`);
    assert.equal(created.protobuf, undefined);
    // Over protobuf: no `_created` series, and one native series per e2e label set beside the classic ones.
    assert.equal(Number(all.protobuf), Number(all[text]) - Number(created[text]) + Number(native.protobuf));
    assert.equal(native.protobuf, '3', 'the e2e family has three label sets (tenant and priority), each a native histogram');
  });

  it("the dashboard's stage variable lists every stage of the pipeline by its name, the image stage included", async () => {
    const dashboard = JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', 'grafana', 'omni-pipeline-dashboard.json'), 'utf8')) as {
      templating: { list: GrafanaVariable[] };
    };
    const stage = dashboard.templating.list.find((variable) => variable.name === 'stage') as GrafanaVariable;
    const job = JOBS[0]?.job as string;
    const results = await prometheus.query(filledIn(queryResultExpr(stage), pipeline.modelName, job));
    assert.deepEqual(
      queryResultChoices(stage, results).sort((a, b) => a.value.localeCompare(b.value)),
      [
        { value: '0', text: 'thinker' },
        { value: '1', text: 'talker' },
        { value: '2', text: 'code2wav' },
        { value: '3', text: 'diffusion' },
      ],
    );
  });

  for (const { job } of JOBS) {
    it(`${job}: every dashboard query and every alert rule's series returns data`, async () => {
      const empty: string[] = [];
      for (const query of monitoringQueries(job, pipeline.modelName)) {
        if ((await prometheus.query(query)).length === 0) empty.push(query);
      }
      // A scrape that timed out on a busy machine marks every series stale until the next one: ask such a query again.
      const still: string[] = [];
      for (const query of empty) await prometheus.waitFor(query, (result) => result.length > 0, 10_000).catch(() => still.push(query));
      assert.deepEqual(still, []);
    });
  }
});
