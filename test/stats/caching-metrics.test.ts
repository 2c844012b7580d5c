import * as assert from 'node:assert/strict';

import { CachingMetrics } from '../../instrumentation/stats/caching-metrics';
import type { BaseCacheStats } from '../../instrumentation/stats/types';

function step(requests: number, queries: number, hits: number, reset = false): BaseCacheStats {
  return { reset, requests, queries, hits };
}

describe('CachingMetrics', () => {
  it('starts empty with a hit rate of 0', () => {
    const metrics = new CachingMetrics();
    assert.equal(metrics.maxRecentRequests, 1000);
    assert.equal(metrics.empty, true);
    assert.equal(metrics.hitRate, 0);
  });

  it('evicts whole oldest steps once the window holds more than maxRecentRequests', () => {
    const metrics = new CachingMetrics({ maxRecentRequests: 5 });
    metrics.observe(step(2, 20, 10));
    metrics.observe(step(2, 20, 20));
    assert.equal(metrics.hitRate, 0.75);
    metrics.observe(step(2, 20, 0)); // 6 requests > 5: the first step leaves
    assert.equal(metrics.aggregatedRequests, 4);
    assert.equal(metrics.aggregatedQueryTotal, 40);
    assert.equal(metrics.aggregatedQueryHit, 20);
    assert.equal(metrics.hitRate, 0.5);

    metrics.observe(step(10, 100, 100)); // alone over the limit: everything older leaves, the newest stays
    assert.equal(metrics.aggregatedRequests, 10);
    assert.equal(metrics.hitRate, 1);
  });

  it('keeps exactly the most recent 1000 single-request steps by default', () => {
    const metrics = new CachingMetrics();
    for (let i = 0; i < 1000; i++) metrics.observe(step(1, 10, 0));
    for (let i = 0; i < 500; i++) metrics.observe(step(1, 10, 10));
    assert.equal(metrics.aggregatedRequests, 1000);
    assert.equal(metrics.hitRate, 0.5);
  });

  it('ignores steps without requests, so they cannot push useful steps out', () => {
    const metrics = new CachingMetrics({ maxRecentRequests: 1 });
    metrics.observe(step(1, 4, 3));
    metrics.observe(step(0, 0, 0));
    metrics.observe(step(0, 50, 0));
    assert.equal(metrics.hitRate, 0.75);
    assert.equal(metrics.aggregatedRequests, 1);
  });

  it('clears the window before adding a step flagged reset', () => {
    const metrics = new CachingMetrics();
    metrics.observe(step(3, 30, 30));
    metrics.observe(step(1, 4, 1, true));
    assert.equal(metrics.aggregatedRequests, 1);
    assert.equal(metrics.hitRate, 0.25);
    metrics.observe(step(0, 0, 0, true));
    assert.equal(metrics.empty, true, 'a reset without requests still clears');
  });

  it('rejects an invalid window size', () => {
    assert.throws(() => new CachingMetrics({ maxRecentRequests: Number.NaN }), RangeError);
    assert.throws(() => new CachingMetrics({ maxRecentRequests: -1 }), RangeError);
  });
});
