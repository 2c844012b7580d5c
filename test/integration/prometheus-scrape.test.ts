import assert from 'node:assert/strict';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { createRequestStateStats, createSchedulerStats } from '../../instrumentation/stats/types';
import { join } from 'node:path';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';
import { needPeer } from '../support/peers/need-peer';

/** A real Prometheus server (Debian's package) scrapes the exporter every second. */
describe('a real Prometheus server scraping the exporter', function () {
  needPeer('debian-prometheus', this);
  this.timeout(60_000);
  let metrics: OmniMetricsHandle;
  let prometheus: PrometheusHandle;

  before(async () => {
    metrics = await registerOmniMetrics({
      modelName: 'omni-test',
      stagePools: [1, 2, 1],
      logStats: true,
      prometheus: { host: '127.0.0.1', port: 0 },
      logIntervalSeconds: 0,
      selfCheck: false,
    });
    for (let engine = 0; engine < 4; engine++) {
      const iteration = new IterationStats({ iterationTimestamp: 1000 });
      const request = createRequestStateStats({ arrivalTime: 999, queuedTs: 5, scheduledTs: 5.5, firstTokenTs: 6, lastTokenTs: 7, numGenerationTokens: 5 });
      iteration.updateFromFinishedRequest({ finishReason: 'stop', numPromptTokens: 12, maxTokensParam: 16 }, request);
      metrics.statLogger?.record(createSchedulerStats({ numRunningReqs: engine + 1 }), iteration, engine);
    }
    metrics.pipeline.requestSucceeded(1.5, 'stop');
    const server = metrics.prometheusServer;
    assert.ok(server);
    prometheus = await startPrometheus({ scrapeTargets: [{ job: 'omni', target: `127.0.0.1:${server.port}` }], scrapeIntervalSeconds: 1 });
  });

  after(async () => {
    await prometheus?.stop();
    await metrics?.shutdown();
  });

  const stageReplicas = (series: Array<Record<string, string>>): string[] => series.map((s) => `${s.stage ?? '-'}/${s.replica ?? '-'}`).sort();

  it('stores every replica of vllm:num_requests_running with its value', async () => {
    const result = await prometheus.waitFor('vllm:num_requests_running', (r) => r.length === 4, 20_000);
    const byReplica = Object.fromEntries(result.map((s) => [`${s.metric.stage}/${s.metric.replica}`, s.value[1]]));
    assert.deepEqual(byReplica, { '0/0': '1', '1/0': '2', '1/1': '3', '2/0': '4' });
    assert.ok(result.every((s) => s.metric.engine === undefined && s.metric.model_name === 'omni-test'));
  });

  it('stores vllm:e2e_request_latency_seconds_bucket and vllm:request_success_total per stage and replica', async () => {
    await prometheus.waitFor('vllm:request_success_total', (r) => r.length >= 4, 20_000);
    const buckets = await prometheus.series('vllm:e2e_request_latency_seconds_bucket{le="1.0"}');
    assert.deepEqual(stageReplicas(buckets), ['0/0', '1/0', '1/1', '2/0']);
    const success = await prometheus.query('sum by (stage, replica) (vllm:request_success_total{finished_reason="stop"})');
    assert.deepEqual(Object.fromEntries(success.map((s) => [`${s.metric.stage}/${s.metric.replica}`, s.value[1]])), {
      '0/0': '1',
      '1/0': '1',
      '1/1': '1',
      '2/0': '1',
    });
    const le = await prometheus.query('vllm:e2e_request_latency_seconds_bucket{stage="1",replica="1",le="1.0"}');
    assert.equal(le[0]?.value[1], '1', 'the 1 s e2e sample is in le="1.0", spelled as vLLM spells it');
  });

  it('stores the pipeline histogram vllm:omni_e2e_request_latency_s_bucket (model-level, no stage label)', async () => {
    const result = await prometheus.waitFor('vllm:omni_e2e_request_latency_s_bucket{le="2.0"}', (r) => r.length === 1, 20_000);
    assert.equal(result[0]?.value[1], '1');
    assert.equal(result[0]?.metric.stage, undefined);
    assert.equal(result[0]?.metric.model_name, 'omni-test');
  });
});

/** The endpoint as a production scrape config reaches it: https with a private CA, and a bearer token. */
describe('a real Prometheus server scraping over TLS with a bearer token', function () {
  needPeer('debian-prometheus', this);
  this.timeout(60_000);
  const certFile = join(__dirname, '..', 'exporters', 'fixtures', 'tls', 'cert.pem');
  const keyFile = join(__dirname, '..', 'exporters', 'fixtures', 'tls', 'key.pem');
  let metrics: OmniMetricsHandle;
  let prometheus: PrometheusHandle;

  before(async () => {
    metrics = await registerOmniMetrics({
      modelName: 'omni-tls',
      stagePools: [1],
      logStats: true,
      prometheus: { host: '127.0.0.1', port: 0, tls: { keyFile, certFile }, auth: { bearerToken: 'scrape-token' } },
      logIntervalSeconds: 0,
      selfCheck: false,
    });
    metrics.pipeline.requestSucceeded(0.7, 'stop');
    const server = metrics.prometheusServer;
    assert.ok(server);
    prometheus = await startPrometheus({
      scrapeTargets: [{ job: 'omni-tls', target: `127.0.0.1:${server.port}`, scheme: 'https', caFile: certFile, bearerToken: 'scrape-token' }],
      scrapeIntervalSeconds: 1,
    });
  });

  after(async () => {
    await prometheus?.stop();
    await metrics?.shutdown();
  });

  it('stores the series (OpenMetrics and gzip negotiated by Prometheus itself)', async () => {
    const result = await prometheus.waitFor('vllm:omni_requests_success_total', (r) => r.length === 1, 20_000);
    assert.deepEqual(result[0]?.metric, {
      __name__: 'vllm:omni_requests_success_total',
      finished_reason: 'stop',
      instance: result[0]?.metric.instance,
      job: 'omni-tls',
      model_name: 'omni-tls',
    });
    assert.equal(result[0]?.value[1], '1');
    const up = await prometheus.query('up{job="omni-tls"}');
    assert.equal(up[0]?.value[1], '1');
  });
});
