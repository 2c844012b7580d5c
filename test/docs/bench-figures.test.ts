import assert from 'node:assert/strict';
import { benchFigures, FIGURE_PAGES, readBenchResults, withBenchFigures, type BenchResults } from '../../bench/docs-figures';
import { readPage, ROOT } from './doc-pages';

describe('benchmark figures in docs/', () => {
  const results = readBenchResults(ROOT);

  for (const page of FIGURE_PAGES) {
    it(`${page} quotes bench/results.json as it is (regenerate with \`npx tsx bench/docs-figures.ts\`)`, () => {
      const text = readPage(page);
      assert.equal(text, withBenchFigures(text, results), `${page}: the bench figures are stale`);
    });
  }

  it('every figure is quoted somewhere, and a changed result changes the page', () => {
    const quoted = FIGURE_PAGES.map(readPage).join('\n');
    for (const name of Object.keys(benchFigures(results))) assert.ok(quoted.includes(`<!-- bench:${name} -->`), `a page quotes ${name}`);
    const faster: BenchResults = JSON.parse(JSON.stringify(results).replace('"AMD EPYC', '"Another CPU')) as BenchResults;
    assert.match(withBenchFigures(readPage('docs/performance.md'), faster), /<!-- bench:run -->Latest run, Another CPU/);
    assert.throws(() => withBenchFigures('<!-- bench:nope -->x<!-- /bench:nope -->', results), /no bench figure named nope/);
  });

  it('the row of the request judged against objectives (slo) appears once a run measured it', () => {
    const row = /\| the same request judged against five objectives \(`slo`\) \| (.*) \|/;
    const page = readPage('docs/performance.md');
    const measured: BenchResults = {
      ...results,
      perRequest: { ...results.perRequest, costs: { ...results.perRequest.costs, 'ours-slo': { ...results.perRequest.costs.ours, median: 81_000 } }, sloVsOurs: { median: 1.01, min: 0.97, max: 1.04 } },
    };
    assert.equal(row.exec(withBenchFigures(page, measured))?.[1], '0.08 ms over the host, ×1.01 the same request without');
    assert.equal(row.exec(withBenchFigures(page, { ...results, perRequest: { ...results.perRequest, sloVsOurs: undefined } })), null);
  });
});
