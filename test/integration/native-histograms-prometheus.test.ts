import assert from 'node:assert/strict';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';
import { needPeer } from '../support/peers/need-peer';

const FAMILY = 'vllm:omni_e2e_request_latency_s';
const SCHEMA = 3;

/** 2001 latencies spread log-normally-ish over 40 ms to 25 s, in a fixed order (a seeded generator), and their exact median. */
function latencies(): { values: number[]; median: number } {
  let seed = 12345;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const values = Array.from({ length: 2001 }, () => 0.04 * Math.exp((6.4 * (random() + random() + random())) / 3));
  const sorted = [...values].sort((a, b) => a - b);
  return { values, median: sorted[1000] as number };
}

/**
 * A real Prometheus (Debian's 2.42) with `--enable-feature=native-histograms` asks for the
 * protobuf exposition, stores the native series, and answers `histogram_quantile` over it within
 * the schema's relative error of the true quantile.
 */
describe('a real Prometheus with native histograms scraping the exporter', function () {
  needPeer('debian-prometheus', this);
  this.timeout(60_000);
  let metrics: OmniMetricsHandle;
  let prometheus: PrometheusHandle;
  const { values, median } = latencies();

  before(async () => {
    metrics = await registerOmniMetrics({
      modelName: 'omni-native',
      logStats: true,
      prometheus: { host: '127.0.0.1', port: 0 },
      logIntervalSeconds: 0,
      selfCheck: false,
      processMetrics: false,
      nativeHistograms: { families: [FAMILY], schema: SCHEMA },
    });
    for (const value of values) metrics.pipeline.requestSucceeded(value, 'stop');
    const server = metrics.prometheusServer;
    assert.ok(server);
    prometheus = await startPrometheus({
      scrapeTargets: [{ job: 'omni', target: `127.0.0.1:${server.port}` }],
      scrapeIntervalSeconds: 1,
      extraArgs: ['--enable-feature=native-histograms'],
    });
  });

  after(async () => {
    await prometheus?.stop();
    await metrics?.shutdown();
  });

  it('histogram_quantile(0.5) over the native series is within the schema 3 relative error of the true median', async () => {
    const [sample] = await prometheus.waitFor(`histogram_quantile(0.5, ${FAMILY})`, (r) => r.length === 1 && r[0]?.value[1] !== 'NaN', 20_000);
    const estimate = Number(sample?.value[1]);
    // A bucket of schema 3 spans a factor of 2^(1/8): an estimate inside the true value's bucket is off by less than that.
    const bound = 2 ** (2 ** -SCHEMA) - 1;
    const error = Math.abs(estimate - median) / median;
    assert.ok(error < bound, `estimate ${estimate}, true median ${median}: relative error ${error.toFixed(4)} (bound ${bound.toFixed(4)})`);
  });

  it('stores the native count and sum, and the other families as before', async () => {
    const [count] = await prometheus.waitFor(`histogram_count(${FAMILY})`, (r) => r.length === 1, 20_000);
    assert.equal(count?.value[1], String(values.length));
    const [sum] = await prometheus.query(`histogram_sum(${FAMILY})`);
    const exact = values.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(Number(sum?.value[1]) - exact) < 1e-6 * exact, `sum ${sum?.value[1]} vs ${exact}`);
    const [success] = await prometheus.query('vllm:omni_requests_success_total');
    assert.equal(success?.value[1], String(values.length));
  });

  it('2.42 keeps only the native series of a family that carries both (its parser drops the classic buckets then)', async () => {
    await prometheus.waitFor(`histogram_count(${FAMILY})`, (r) => r.length === 1, 20_000);
    // Later versions keep both with the scrape option scrape_classic_histograms: true; 2.42 has none.
    assert.deepEqual(await prometheus.query(`${FAMILY}_bucket`), []);
    assert.deepEqual(await prometheus.query(`${FAMILY}_count`), []);
  });
});
