import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { httpGet } from '../support/http';
import { freePort } from '../support/ports';
import { findPrometheusBinary, startPrometheus, type PrometheusHandle } from '../support/prometheus-server';
import { checkConfig, checkMetrics, checkRules } from '../support/promtool';
import { needPeer } from '../support/peers/need-peer';

const EXPOSITION = [
  '# HELP vllm:num_requests_running Number of requests currently running.',
  '# TYPE vllm:num_requests_running gauge',
  'vllm:num_requests_running{model_name="m",replica="0",stage="0"} 3.0',
  '# HELP vllm:e2e_request_latency_seconds End-to-end request latency.',
  '# TYPE vllm:e2e_request_latency_seconds histogram',
  'vllm:e2e_request_latency_seconds_bucket{model_name="m",le="0.5"} 1.0',
  'vllm:e2e_request_latency_seconds_bucket{model_name="m",le="1.0"} 3.0',
  'vllm:e2e_request_latency_seconds_bucket{model_name="m",le="+Inf"} 4.0',
  'vllm:e2e_request_latency_seconds_sum{model_name="m"} 3.5',
  'vllm:e2e_request_latency_seconds_count{model_name="m"} 4.0',
  '',
].join('\n');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

describe('test/support: Prometheus harness (real prometheus binary)', function () {
  needPeer('debian-prometheus', this);
  this.timeout(15_000);

  let app: http.Server;
  let appTarget: string;
  let scrapes = 0;
  let prom: PrometheusHandle;

  before(async () => {
    app = http.createServer((req, res) => {
      if (req.url === '/metrics') {
        scrapes++;
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(EXPOSITION);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appTarget = `127.0.0.1:${(app.address() as AddressInfo).port}`;
    prom = await startPrometheus({ scrapeTargets: [{ job: 'fake-vllm', target: appTarget }] });
  });

  after(async () => {
    await prom?.stop();
    await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
  });

  it('listens on 127.0.0.1 only and is ready', async () => {
    assert.match(prom.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await httpGet(`${prom.url}/-/ready`);
    assert.equal(res.status, 200);
    const cfg = fs.readFileSync(prom.configPath, 'utf8');
    assert.match(cfg, /"scrape_interval": "1s"/);
    assert.match(cfg, /"evaluation_interval": "1s"/);
    assert.match(cfg, /"scrape_timeout": "800ms"/);
    const check = await checkConfig(prom.configPath);
    assert.ok(check.ok, check.output);
  });

  // Independent checks first: they run while the main server waits for its
  // first scrape (~5 s in Prometheus 2.42, see prometheus-server.ts).
  it('stop() kills the process and removes the temp dir', async () => {
    const p = await startPrometheus({ scrapeTargets: [{ job: 'x', target: appTarget, metricsPath: '/nope' }] });
    try {
      assert.ok(isAlive(p.pid));
      assert.ok(fs.existsSync(p.dir));
    } finally {
      await p.stop();
    }
    await p.stop(); // idempotent
    assert.ok(!isAlive(p.pid), 'prometheus still running after stop()');
    assert.ok(!fs.existsSync(p.dir), 'temp dir still present after stop()');
  });

  it('retries on a port that is already taken', async () => {
    // The harness's readiness probe can reach the blocker before Prometheus has logged its bind
    // failure; the blocker never reads, so that connection stays open until destroyed below.
    const blocked = new Set<net.Socket>();
    const blocker = net.createServer((socket) => void blocked.add(socket));
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const busy = (blocker.address() as AddressInfo).port;
    const picked: number[] = [];
    let p: PrometheusHandle | undefined;
    try {
      p = await startPrometheus({
        scrapeTargets: [{ job: 'x', target: appTarget }],
        portPicker: async () => {
          const port = picked.length === 0 ? busy : await freePort();
          picked.push(port);
          return port;
        },
      });
      assert.equal(picked.length, 2);
      assert.equal(p.port, picked[1]);
    } finally {
      await p?.stop();
      for (const socket of blocked) socket.destroy();
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('startup failure includes Prometheus log lines', async () => {
    await assert.rejects(startPrometheus({ scrapeTargets: [{ job: 'bad', target: 'http://127.0.0.1:1' }] }), (err: Error) => {
      assert.match(err.message, /exited during startup/);
      assert.match(err.message, /last Prometheus log lines/);
      assert.match(err.message, /is not a valid hostname/);
      return true;
    });
  });

  it('kills Prometheus when the test process exits without stop()', async () => {
    const script = path.join(os.tmpdir(), `omni-prom-exit-${process.pid}.ts`);
    const modulePath = path.resolve(__dirname, '../support/prometheus-server');
    fs.writeFileSync(
      script,
      `import { startPrometheus } from ${JSON.stringify(modulePath)};\n` +
        `startPrometheus({ binary: ${JSON.stringify(findPrometheusBinary())}, scrapeTargets: [{ job: 'x', target: ${JSON.stringify(appTarget)} }] })\n` +
        `  .then((p) => { console.log(JSON.stringify({ pid: p.pid, dir: p.dir })); process.exit(0); })\n` +
        `  .catch((e) => { console.error(e); process.exit(2); });\n`,
    );
    try {
      const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', script], {
        cwd: path.resolve(__dirname, '../..'),
        encoding: 'utf8',
        timeout: 12_000,
      });
      assert.equal(r.status, 0, r.stderr);
      const { pid, dir } = JSON.parse(r.stdout.trim()) as { pid: number; dir: string };
      assert.ok(await waitUntil(() => !isAlive(pid), 3000), `prometheus pid ${pid} survived its parent`);
      assert.ok(!fs.existsSync(dir), `temp dir ${dir} left behind`);
    } finally {
      fs.rmSync(script, { force: true });
    }
  });

  it('scrapes a colon-named gauge with exact labels and value', async () => {
    const result = await prom.waitFor('vllm:num_requests_running', (r) => r.length > 0, 10_000);
    assert.equal(result.length, 1);
    assert.deepEqual(result[0]!.metric, {
      __name__: 'vllm:num_requests_running',
      instance: appTarget,
      job: 'fake-vllm',
      model_name: 'm',
      replica: '0',
      stage: '0',
    });
    assert.equal(typeof result[0]!.value[0], 'number');
    assert.equal(result[0]!.value[1], '3'); // Prometheus formats 3.0 as "3"
    assert.ok(scrapes >= 1);
  });

  it('keeps histogram buckets (le="1.0" is NOT normalised in 2.42) and computes quantiles', async () => {
    const buckets = await prom.series('vllm:e2e_request_latency_seconds_bucket');
    assert.deepEqual(buckets.map((s) => s.le).sort(), ['+Inf', '0.5', '1.0']);
    const le1 = await prom.query('vllm:e2e_request_latency_seconds_bucket{le="1.0"}');
    assert.equal(le1.length, 1);
    assert.equal(le1[0]!.value[1], '3');
    const q = await prom.query('histogram_quantile(0.5, vllm:e2e_request_latency_seconds_bucket)');
    assert.equal(q.length, 1);
    assert.ok(Number(q[0]!.value[1]) > 0.5 && Number(q[0]!.value[1]) <= 1);
    const scalar = await prom.query('1 + 1');
    assert.deepEqual(
      scalar.map((s) => [s.metric, s.value[1]]),
      [[{}, '2']],
    );
  });

  it('reports targets and API errors', async () => {
    const scraped = await prom.waitForScrape(10_000);
    assert.deepEqual(
      scraped.map((a) => a.health),
      ['up'],
    );
    const t = await prom.targets();
    assert.equal(t.activeTargets.length, 1);
    assert.equal(t.activeTargets[0]!.health, 'up');
    assert.equal(t.activeTargets[0]!.scrapeUrl, `http://${appTarget}/metrics`);
    await assert.rejects(prom.query('sum(('), /bad_data/);
    await assert.rejects(
      prom.waitFor('sum((', () => true, 2000),
      /bad_data/,
    );
    await assert.rejects(
      prom.waitFor('absent_metric_xyz', (r) => r.length > 0, 500),
      /timed out after 500 ms[\s\S]*health=up/,
    );
  });
});

describe('test/support: promtool wrappers', function () {
  needPeer('debian-prometheus', this);
  this.timeout(10_000);

  it('reports exactly the lint findings for a colon counter and a histogram named x_total', async () => {
    const text = [
      '# HELP vllm:foo A counter without _total.',
      '# TYPE vllm:foo counter',
      'vllm:foo 1',
      '# HELP x_total A histogram with a counter-like name.',
      '# TYPE x_total histogram',
      'x_total_bucket{le="1.0"} 1',
      'x_total_bucket{le="+Inf"} 2',
      'x_total_sum 3',
      'x_total_count 2',
      '',
    ].join('\n');
    const r = await checkMetrics(text);
    assert.equal(r.exitCode, 3);
    assert.deepEqual(r.findings, [
      'vllm:foo counter metrics should have "_total" suffix',
      "vllm:foo metric names should not contain ':'",
      'x_total non-counter metrics should not have "_total" suffix',
    ]);
    assert.deepEqual(r.problems, [
      { metric: 'vllm:foo', problem: 'counter metrics should have "_total" suffix' },
      { metric: 'vllm:foo', problem: "metric names should not contain ':'" },
      { metric: 'x_total', problem: 'non-counter metrics should not have "_total" suffix' },
    ]);
    assert.equal(r.parseError, undefined);
    assert.equal(r.stdout, '');
    assert.equal(r.raw, r.stderr);
  });

  it('reports camelCase and returns 0 for clean text', async () => {
    const camel = await checkMetrics('# HELP fooBar_total x\n# TYPE fooBar_total counter\nfooBar_total 1\n');
    assert.equal(camel.exitCode, 3);
    assert.deepEqual(camel.findings, ["fooBar_total metric names should be written in 'snake_case' not 'camelCase'"]);

    const clean = await checkMetrics('# HELP foo_total A counter.\n# TYPE foo_total counter\nfoo_total 1\n');
    assert.deepEqual({ exitCode: clean.exitCode, findings: clean.findings }, { exitCode: 0, findings: [] });
  });

  it('distinguishes parse errors (exit 1) from lint findings (exit 3)', async () => {
    const r = await checkMetrics('# TYPE foo gauge\nfoo abc\n');
    assert.equal(r.exitCode, 1);
    assert.deepEqual(r.findings, ['error while linting: text format parsing error in line 2: expected float as value, got "abc"']);
    assert.equal(r.parseError, 'text format parsing error in line 2: expected float as value, got "abc"');
    assert.deepEqual(r.problems, []);
  });

  it('checkConfig / checkRules', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'omni-promtool-'));
    try {
      const good = path.join(dir, 'good.rules.yml');
      const bad = path.join(dir, 'bad.rules.yml');
      const badCfg = path.join(dir, 'bad.yml');
      fs.writeFileSync(good, 'groups: [{name: g, rules: [{record: "job:foo:sum", expr: "sum(foo)"}]}]\n');
      fs.writeFileSync(bad, 'groups: [{name: g, rules: [{record: "job:foo:sum", expr: "sum(foo"}]}]\n');
      fs.writeFileSync(badCfg, 'global: {scrape_interval: 1s, scrape_timeout: 5s}\n');
      const g = await checkRules(good);
      assert.ok(g.ok, g.output);
      assert.match(g.output, /SUCCESS: 1 rules found/);
      const b = await checkRules(bad);
      assert.equal(b.ok, false);
      assert.match(b.output, /unclosed left parenthesis/);
      const c = await checkConfig(badCfg);
      assert.equal(c.ok, false);
      assert.match(c.output, /scrape timeout greater than scrape interval/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
