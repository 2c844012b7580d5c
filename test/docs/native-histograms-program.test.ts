import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { needPeer } from '../support/peers/need-peer';
import { freePort } from '../support/ports';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-server';
import { codeBlocks, readPage } from './doc-pages';
import { docPrograms, startDocProgram, type StartedDocProgram } from './doc-programs';

const PAGE = 'docs/native-histograms.md';
const FAMILY = 'vllm:omni_e2e_request_latency_s';

interface ScrapeConfig {
  job_name: string;
  static_configs: Array<{ targets: string[] }>;
  [setting: string]: unknown;
}

/**
 * docs/native-histograms.md's program, scraped by Prometheus 3 with the configuration the page
 * shows: the configuration passes Prometheus 3's `promtool check config`, and with its settings
 * Prometheus stores the family as a native histogram and keeps its classic series.
 */
describe('docs/native-histograms.md: the program under Prometheus 3, with the configuration shown', function () {
  const prometheus3 = needPeer('prometheus3', this);
  this.timeout(90_000);
  let program: StartedDocProgram | undefined;
  let prometheus: PrometheusHandle | undefined;
  const yaml = codeBlocks(readPage(PAGE)).find((block) => block.language === 'yaml');

  after(async () => {
    program?.child.kill('SIGTERM');
    await program?.exited.catch(() => undefined);
    await prometheus?.stop();
  });

  it("the configuration passes Prometheus 3's promtool check config", async () => {
    assert.ok(yaml, `${PAGE} shows a Prometheus configuration`);
    const dir = mkdtempSync(join(tmpdir(), 'omni-native-config-'));
    try {
      writeFileSync(join(dir, 'prometheus.yml'), yaml.code);
      const promtool = prometheus3.paths().bin.promtool as string;
      const { stdout } = await promisify(execFile)(promtool, ['check', 'config', join(dir, 'prometheus.yml')]);
      assert.match(stdout, /SUCCESS: .*prometheus\.yml is valid prometheus config file syntax/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stores the family as one native histogram of the 1000 requests, and keeps its classic series', async () => {
    const [docProgram] = docPrograms(PAGE);
    assert.ok(docProgram && yaml);
    const [config] = (parseYaml(yaml.code) as { scrape_configs: ScrapeConfig[] }).scrape_configs;
    assert.ok(config);
    const { job_name: job, static_configs: targets, scrape_interval: _interval, ...settings } = config;
    assert.deepEqual(targets, [{ targets: ['127.0.0.1:9464'] }]);
    const port = await freePort();
    program = startDocProgram(docProgram, { OTEL_EXPORTER_PROMETHEUS_PORT: String(port), SCRAPE_SECONDS: '60' }, 80_000);
    const deadline = Date.now() + 20_000;
    while (!program.stdout().includes('serving ')) {
      assert.ok(Date.now() < deadline, `the program did not start serving: ${program.stdout()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    prometheus = await startPrometheus({
      binary: prometheus3.paths().bin.prometheus as string,
      scrapeTargets: [{ job, target: `127.0.0.1:${port}`, settings }],
      scrapeIntervalSeconds: 1,
    });
    const count = await prometheus.waitFor(`histogram_count(${FAMILY})`, (result) => result.length > 0, 30_000);
    assert.deepEqual(
      count.map((sample) => [sample.metric.model_name, sample.value[1]]),
      [['demo', '1000']],
    );
    const median = Number((await prometheus.query(`histogram_quantile(0.5, ${FAMILY})`))[0]?.value[1]);
    // The true median of the program's latencies is 0.04 × 625^0.5 = 1 s; schema 3 buckets are 9 % wide.
    assert.ok(Math.abs(median - 1) < 0.09, `median ${median}`);
    const classic = await prometheus.query(`${FAMILY}_count`);
    assert.deepEqual(
      classic.map((sample) => sample.value[1]),
      ['1000'],
    );
  });
});
