import assert from 'node:assert/strict';
import { join } from 'node:path';
import OpenAI from 'openai';
import { runLoad } from '../../examples/load/run-load';
import { startReferencePipeline, TENANT_LABELS, type ReferencePipeline } from '../../examples/reference-pipeline';
import type { SloOptions } from '../../views/catalog/slo-families';
import { codeBlocks, readPage, ROOT } from '../docs/doc-pages';
import { parseSamples } from '../support/exposition';
import { httpGet } from '../support/http';
import { alertRules, dashboardQueries, filledIn } from '../support/monitoring-queries';
import { needPeer } from '../support/peers/need-peer';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';
import { checkRules } from '../support/promtool';

/**
 * Objectives every chat request of the load misses, on any machine: a decode step of the fast
 * profile takes at least 1 ms, so a time per output token of 0.5 ms is missed by each request with
 * two output tokens or more. Only the image requests (a fifth of the load) can be good, so the
 * error budget burns past both alert thresholds however fast the machine is; a TPOT of 10 ms left
 * the miss share to the machine's speed (below the fast alert's 14.4 % on a fast one). The warm-up
 * requests ask for one token, which TPOT does not judge, so attainment is no constant 0 either.
 */
const OBJECTIVES: SloOptions = { firstOutputSeconds: 0.05, e2eSeconds: 0.15, tpotSeconds: 0.0005, audioTtfpSeconds: 0.1, audioRtf: 1 };
const E2E = 'vllm:omni_e2e_request_latency_s';

/** One value of an instant query, as a number. */
async function scalar(prometheus: PrometheusHandle, query: string): Promise<number> {
  const result = await prometheus.query(query);
  assert.equal(result.length, 1, `${query}: ${JSON.stringify(result)}`);
  return Number(result[0]?.value[1]);
}

/**
 * The reference pipeline with objectives (`SLO_*`), tenant labels and native buckets on the e2e
 * histogram, under the load generator, scraped by Prometheus 3 over protobuf (native and classic
 * buckets): the goodput row of the shipped dashboard, the
 * burn-rate alerts and every PromQL block of docs/goodput.md return data, and attainment as
 * Prometheus computes it from the counters is the exposition's.
 */
describe('Prometheus 3: goodput under load', function () {
  const prometheus3 = needPeer('prometheus3', this);
  this.timeout(120_000);
  let pipeline: ReferencePipeline;
  let prometheus: PrometheusHandle;

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
      slo: OBJECTIVES,
      nativeHistograms: { families: [E2E], schema: 3 },
    });
    prometheus = await startPrometheus({
      binary: bin.prometheus,
      scrapeIntervalSeconds: 0.5,
      scrapeTargets: [
        {
          job: 'omni',
          target: pipeline.metricsAddress as string,
          settings: { scrape_protocols: ['PrometheusProto'], scrape_native_histograms: true, always_scrape_classic_histograms: true },
        },
      ],
    });
    await prometheus.waitForScrape(20_000);
    // Two tenants at each priority, and one request without a user (tenant "other"), scraped before the load: the
    // series the load counts into exist already, so every rate sees its requests.
    const client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    for (const user of ['tenant-a', 'tenant-b', undefined]) {
      for (const priority of ['high', 'low']) {
        await client.chat.completions.create(
          {
            model: pipeline.modelName,
            ...(user === undefined ? {} : { user }),
            messages: [{ role: 'user', content: `at ${priority} priority` }],
            max_tokens: 1,
          },
          { headers: { 'x-priority': priority } },
        );
      }
    }
    await prometheus.waitFor('count(vllm:omni_requests_good_total)', (result) => result[0]?.value[1] === '6', 20_000);
    await runLoad({
      baseUrl: `${pipeline.apiUrl}/v1`,
      requests: 120,
      concurrency: 4,
      maxTokens: 16,
      imageRatio: 0.2,
      disconnectRatio: 0.1,
      slo: OBJECTIVES,
      seed: 5,
    });
    const loaded = Date.now() / 1000;
    await prometheus.waitFor(`timestamp(up) > ${loaded + 0.6}`, (result) => result.length === 1, 20_000);
  });

  after(async () => {
    await prometheus?.stop();
    await pipeline?.stop();
  });

  it('every query of the goodput row and both burn-rate alerts return data: with these objectives the error budget burns past 14.4x and 6x', async () => {
    const model = pipeline.modelName;
    const goodputPanels = dashboardQueries().filter(({ row }) => row === 'Goodput (slo)');
    assert.equal(goodputPanels.length, 7);
    const burnRates = alertRules().filter(({ group }) => group === 'omni-goodput');
    assert.deepEqual(
      burnRates.map(({ alert }) => alert),
      ['OmniSloBudgetBurnFast', 'OmniSloBudgetBurnSlow'],
    );
    const empty: string[] = [];
    for (const query of [...goodputPanels.map(({ expr }) => filledIn(expr, model)), ...burnRates.map(({ expr }) => expr)]) {
      if ((await prometheus.query(query)).length === 0) empty.push(query);
    }
    assert.deepEqual(empty, []);
    // The load's requests carry no user: tenant "other", whose budget burns.
    for (const { expr } of burnRates)
      assert.ok(
        (await prometheus.query(expr)).some((sample) => sample.metric.tenant === 'other'),
        expr,
      );
  });

  it("attainment from Prometheus's counters is good ÷ finished of the exposition, per tenant", async () => {
    const samples = parseSamples((await httpGet(pipeline.metricsUrl)).body);
    for (const tenant of ['other', 'tenant-a', 'tenant-b']) {
      const sum = (name: string, keep: (labels: Record<string, string>) => boolean) =>
        samples
          .filter((sample) => sample.name === name && sample.labels.tenant === tenant && keep(sample.labels))
          .reduce((total, sample) => total + sample.value, 0);
      const good = sum('vllm:omni_requests_good_total', () => true);
      const finished = sum('vllm:omni_requests_success_total', (labels) => labels.finished_reason !== 'abort' && labels.finished_reason !== 'error');
      assert.ok(finished > 0, tenant);
      const attainment = await scalar(
        prometheus,
        `sum(vllm:omni_requests_good_total{tenant="${tenant}"}) / sum(vllm:omni_requests_success_total{tenant="${tenant}", finished_reason!~"abort|error"})`,
      );
      assert.equal(attainment, good / finished, tenant);
    }
  });

  it('every PromQL block of docs/goodput.md returns a share between 0 and 1 (classic bucket ratios, histogram_fraction on native and on classic buckets)', async () => {
    const blocks = codeBlocks(readPage(join('docs', 'goodput.md'))).filter((block) => block.language === 'promql');
    assert.ok(blocks.length >= 6, `${blocks.length} blocks`);
    for (const block of blocks) {
      const result = await prometheus.query(block.code);
      assert.ok(result.length > 0, `no data: ${block.code}`);
      // The alert expression returns the error ratio it fires on; the others a share of requests.
      for (const sample of result) assert.ok(Number(sample.value[1]) >= 0 && Number(sample.value[1]) <= 1, `${block.code} = ${sample.value[1]}`);
    }
  });

  it('histogram_fraction on classic buckets is the bucket ratio at a bucket bound', async () => {
    const ratio = await scalar(prometheus, `sum(${E2E}_bucket{le="0.25"}) / sum(${E2E}_count)`);
    const fraction = await scalar(prometheus, `histogram_fraction(0, 0.25, sum by (le) (${E2E}_bucket))`);
    assert.equal(fraction, ratio);
  });

  it("Prometheus 3's promtool check rules accepts alerts.yml, burn-rate rules included", async function () {
    const result = await checkRules(join(ROOT, 'examples', 'prometheus', 'alerts.yml'), { lintFatal: true, binary: prometheus3.paths().bin.promtool });
    assert.ok(result.ok, result.output);
    assert.match(result.output, /SUCCESS: 21 rules found/);
  });
});
