import assert from 'node:assert/strict';
import { COLD_START_CONTENDERS, registerScript, requireScript, runColdStart } from '../../bench/cold-start';

/**
 * The cold-start contenders are scripts run by `node -e` against the built package, so the
 * compiler never sees the paths they require: this runs each once at the smallest size, to find
 * a module the package no longer has before a bench run of a quarter of an hour does. Times are
 * the bench's business; only their presence is checked here.
 */
describe('bench: the cold-start contenders run against the built package', function () {
  this.timeout(60_000);
  for (const contender of COLD_START_CONTENDERS) {
    it(`${contender}: require, then registration at 3 × 1 and a first scrape`, async () => {
      const loaded = await runColdStart(requireScript(contender));
      assert.deepEqual(Object.keys(loaded), ['requireNs']);
      const registered = await runColdStart(registerScript(contender, 1));
      assert.deepEqual(Object.keys(registered), ['registerNs', 'firstScrapeNs']);
      for (const ns of [...Object.values(loaded), ...Object.values(registered)]) assert.ok(Number.isFinite(ns) && ns > 0, `a duration in ns, got ${ns}`);
    });
  }
});
