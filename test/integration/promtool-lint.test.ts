import assert from 'node:assert/strict';
import { registerOmniMetrics } from '../../register';
import { populateEveryFamily } from '../support/populate';
import { needPeer } from '../support/peers/need-peer';
import type { PeerName } from '../support/peers/provision';
import { checkMetrics } from '../support/promtool';

/**
 * `promtool check metrics` on a full scrape (every family of every group populated) may report
 * only the lints real vLLM / vLLM-Omni output also gets: colons in names, the histogram
 * `vllm:iteration_tokens_total` ending in `_total`, and the `_s` unit abbreviation
 * of the seed design's pipeline names. Any other finding, or a parse error, fails.
 */
/** Debian's promtool (2.42) and Prometheus 3.16's report the same lints. */
const PROMTOOLS: ReadonlyArray<[title: string, peer: PeerName]> = [
  ["Debian's promtool", 'debian-prometheus'],
  ["Prometheus 3's promtool", 'prometheus3'],
];

for (const [title, peer] of PROMTOOLS)
  describe(`${title} check metrics on a full scrape`, function () {
    const promtool = needPeer(peer, this);
    it('reports exactly the known lints and no parse error', async () => {
      const binary = promtool.paths().bin.promtool as string;
      const handle = await registerOmniMetrics({
        modelName: 'm',
        stagePools: [1, 2, 1],
        logStats: true,
        showHiddenMetrics: true,
        features: { specDecode: { numSpeculativeTokens: 2 }, kvConnector: 'nixl', lora: { maxLoras: 1 }, kvCacheMetrics: true, corruptedRequests: true },
        prometheus: false,
        logIntervalSeconds: 0,
        selfCheck: false,
      });
      populateEveryFamily(handle);
      const text = await handle.metricsText();
      await handle.shutdown();

      const result = await checkMetrics(text, binary);
      assert.equal(result.parseError, undefined, result.raw);
      const expected = new Set<string>();
      const created = (name: string, type: string) => (type === 'counter' ? `${name.replace(/_total$/, '')}_created` : `${name}_created`);
      for (const family of handle.catalog.families) {
        // Counters and histograms also print their `_created` gauge family, which shares the lints of its name.
        const names = family.type === 'gauge' ? [family.name] : [family.name, created(family.name, family.type)];
        for (const name of names) {
          expected.add(`${name} metric names should not contain ':'`);
          if (/_(s|mb)(_created)?$/.test(name)) expected.add(`${name} metric names should not contain abbreviated units`);
        }
      }
      expected.add('vllm:iteration_tokens_total non-counter metrics should not have "_total" suffix');
      // prom-client's runtime gauges, kept under the names Node.js dashboards query; prom-client's own output has the same two lints.
      expected.add('nodejs_active_handles_total non-counter metrics should not have "_total" suffix');
      expected.add('nodejs_active_requests_total non-counter metrics should not have "_total" suffix');
      const unexpected = result.findings.filter((finding) => !expected.has(finding));
      assert.deepEqual(unexpected, [], 'findings beyond the known lints');
      assert.ok(result.findings.includes('vllm:iteration_tokens_total non-counter metrics should not have "_total" suffix'));
      assert.ok(result.findings.includes("vllm:num_requests_running metric names should not contain ':'"));
      assert.ok(
        result.findings.includes('nodejs_active_handles_total non-counter metrics should not have "_total" suffix'),
        'the process and runtime families are printed',
      );
      assert.ok(result.findings.includes("vllm:prompt_tokens_created metric names should not contain ':'"), 'the _created families are printed');
      assert.equal(result.exitCode, 3, 'lint findings only (exit 3), not a parse failure (exit 1)');
    });
  });
