import assert from 'node:assert/strict';
import { registerOmniMetrics } from '../../register';
import { isPreviousMinorRelease, shownForHiddenVersion } from '../../views/catalog/hidden-metrics';
import { OmniOptionError } from '../../views/common/option-checks';
import { UPSTREAM_FAMILIES } from '../../views/catalog/upstream-families';

describe("vLLM's --show-hidden-metrics-for-version", () => {
  // vllm/version.py `_prev_minor_version_was`:
  // `return version_str == f"{__version_tuple__[0]}.{__version_tuple__[1] - 1}"`.
  it('version.py `_prev_minor_version_was`: only the minor release before the matched vLLM 0.32, compared as a string', () => {
    assert.equal(isPreviousMinorRelease('0.31'), true);
    assert.equal(isPreviousMinorRelease('0.30'), false);
    assert.equal(isPreviousMinorRelease('0.32'), false);
    assert.equal(isPreviousMinorRelease('0.31.0'), false, 'vLLM compares the string, not the parsed version');
  });

  // vllm/v1/metrics/loggers.py keeps `if self.show_hidden_metrics:` around a deprecated family for
  // the one release that hides it; the next release deletes the family. gpu_cache_usage_perc and the
  // gpu_prefix_cache pair were hidden in 0.11 and gone in 0.12; time_per_output_token_seconds was
  // hidden in 0.12 and gone in 0.13. vLLM 0.32 therefore prints none of them, whatever the version.
  it('each hidden family can be shown only by the release that hid it: vLLM 0.32 shows none of the four for "0.31"', () => {
    const hidden = Object.values(UPSTREAM_FAMILIES).filter((family) => family.group === 'hidden');
    assert.deepEqual(
      hidden.map((family) => [family.baseName, family.hiddenIn]),
      [
        ['gpu_cache_usage_perc', '0.11'],
        ['gpu_prefix_cache_queries', '0.11'],
        ['gpu_prefix_cache_hits', '0.11'],
        ['time_per_output_token_seconds', '0.12'],
      ],
    );
    for (const family of hidden)
      for (const version of ['0.31', '0.10', '0.11', '0.12']) assert.equal(shownForHiddenVersion(family, version), false, `${family.baseName} for ${version}`);
    assert.equal(shownForHiddenVersion({ hiddenIn: '0.32' }, '0.31'), true, 'a family 0.32 itself hid is shown for 0.31');
    assert.equal(shownForHiddenVersion({ hiddenIn: '0.32' }, '0.30'), false);
  });

  it('registration follows the rule: "0.31" (or any version) shows no removed family; showHiddenMetrics: true still shows them all; a string that is not a version is refused', async () => {
    const hiddenNames = [
      'vllm:gpu_cache_usage_perc',
      'vllm:gpu_prefix_cache_queries_total',
      'vllm:gpu_prefix_cache_hits_total',
      'vllm:time_per_output_token_seconds',
    ];
    for (const [options, shown] of [
      [{ showHiddenMetricsForVersion: '0.31' }, false],
      [{ showHiddenMetricsForVersion: '0.11' }, false],
      [{ showHiddenMetricsForVersion: '0.10' }, false],
      [{ showHiddenMetrics: true }, true],
    ] as const) {
      const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], logStats: true, prometheus: false, logIntervalSeconds: 0, ...options });
      try {
        const text = await handle.metricsText();
        for (const name of hiddenNames) {
          assert.equal(handle.catalog.byName(name) !== undefined, shown, `${name} with ${JSON.stringify(options)}`);
          assert.equal(text.includes(`# HELP ${name} `), shown, `${name} printed with ${JSON.stringify(options)}`);
        }
      } finally {
        await handle.shutdown();
      }
    }
    await assert.rejects(
      registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, showHiddenMetricsForVersion: 'latest' }),
      (error: unknown) => error instanceof OmniOptionError && error.option === 'showHiddenMetricsForVersion',
    );
  });
});
