import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needPeer } from '../support/peers/need-peer';
import { checkConfig } from '../support/promtool';
import { codeBlocks, documentationPages, readPage, ROOT } from './doc-pages';

/** Every YAML block of the docs that is a Prometheus configuration (it has `scrape_configs`), with where it is. */
function prometheusConfigs(): Array<{ where: string; yaml: string }> {
  return documentationPages().flatMap((page) =>
    codeBlocks(readPage(page))
      .filter((block) => block.language === 'yaml' && /^scrape_configs:/m.test(block.code))
      .map((block) => ({ where: `${page}:${block.line}`, yaml: block.code })),
  );
}

describe('the Prometheus configurations the docs show', function () {
  const prometheus3 = needPeer('prometheus3', this);
  let promtool: string;
  let dir: string;

  before(() => {
    promtool = prometheus3.paths().bin.promtool as string;
    dir = mkdtempSync(join(tmpdir(), 'omni-doc-configs-'));
  });
  after(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('are there: the exemplar and native-histogram pages show one each', () => {
    const pages = prometheusConfigs().map(({ where }) => where.replace(/:\d+$/, ''));
    assert.ok(pages.includes('docs/exemplars.md') && pages.includes('docs/native-histograms.md'), pages.join());
  });

  it("each passes Prometheus 3's `promtool check config`, and so does examples/prometheus/prometheus.yml", async () => {
    const configs = prometheusConfigs();
    for (const [i, { where, yaml }] of configs.entries()) {
      const file = join(dir, `config-${i}.yml`);
      writeFileSync(file, yaml);
      const result = await checkConfig(file, promtool);
      assert.ok(result.ok, `${where}: ${result.output}`);
    }
    const shipped = await checkConfig(join(ROOT, 'examples', 'prometheus', 'prometheus.yml'), promtool);
    assert.ok(shipped.ok, shipped.output);
  });

  it('a configuration that names `scrape_classic_histograms` (Prometheus 2.x) is refused by Prometheus 3: the check can fail', async () => {
    const file = join(dir, 'refused.yml');
    writeFileSync(file, "scrape_configs:\n  - job_name: omni\n    scrape_classic_histograms: true\n    static_configs:\n      - targets: ['127.0.0.1:9464']\n");
    const result = await checkConfig(file, promtool);
    assert.equal(result.ok, false);
    assert.match(result.output, /scrape_classic_histograms/);
  });
});
