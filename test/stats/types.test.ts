import * as assert from 'node:assert/strict';

import {
  createMultiModalCacheStats,
  createPrefillStats,
  createPrefixCacheStats,
  createPromptTokenStats,
  createRequestStateStats,
  createSchedulerStats,
  createSpecDecodingStats,
  FINISH_REASONS,
  isFinishReason,
  PromptTokenStats,
} from '../../instrumentation/stats/types';
import { OmniOptionError } from '../../views/common/option-checks';

describe('stats types', () => {
  it('PrefixCacheStats.record keeps preempted lookups apart', () => {
    const stats = createPrefixCacheStats();
    stats.record(100, 40, false);
    stats.record(50, 50, true);
    stats.record(10, 0, false);
    assert.deepEqual(
      [stats.requests, stats.queries, stats.hits, stats.preemptedRequests, stats.preemptedQueries, stats.preemptedHits],
      [2, 110, 40, 1, 50, 50],
    );
    assert.equal(stats.reset, false);
  });

  it('MultiModalCacheStats.record counts items', () => {
    const stats = createMultiModalCacheStats();
    stats.record(3, 1);
    stats.record(2, 2);
    assert.deepEqual([stats.requests, stats.queries, stats.hits], [2, 5, 3]);
  });

  it('SpecDecodingStats.observeDraft counts per position and never throws on too many accepted tokens', () => {
    const stats = createSpecDecodingStats(3);
    stats.observeDraft(3, 2);
    stats.observeDraft(3, 0);
    stats.observeDraft(2, 1);
    assert.deepEqual([stats.numDrafts, stats.numDraftTokens, stats.numAcceptedTokens], [3, 8, 3]);
    assert.deepEqual(stats.numAcceptedTokensPerPos, [2, 1, 0]);
    assert.deepEqual(stats.numDraftTokensPerPos, [3, 3, 2]);
    stats.observeDraft(5, 4);
    assert.deepEqual(stats.numAcceptedTokensPerPos, [3, 2, 1]);
    assert.equal(stats.numAcceptedTokens, 7);
    assert.throws(() => createSpecDecodingStats(-1), OmniOptionError);
  });

  it('createSchedulerStats fills vLLM defaults and applies overrides', () => {
    const stats = createSchedulerStats({ numRunningReqs: 2, kvCacheUsage: 0.25 });
    assert.equal(stats.numRunningReqs, 2);
    assert.equal(stats.numWaitingReqs, 0);
    assert.equal(stats.numSkippedWaitingReqs, 0);
    assert.equal(stats.kvCacheUsage, 0.25);
    assert.equal(stats.prefixCacheStats.requests, 0);
    assert.deepEqual(stats.kvCacheEvictionEvents, []);
    assert.deepEqual(stats.waitingLoraAdapters, {});
    assert.equal(stats.specDecodingStats, undefined);
    assert.notEqual(createSchedulerStats().prefixCacheStats, createSchedulerStats().prefixCacheStats, 'fresh objects');
  });

  it('createPrefillStats derives computed and cached tokens as PrefillStats.set()', () => {
    assert.deepEqual(createPrefillStats({ numPromptTokens: 10, numLocalCachedTokens: 3, numExternalCachedTokens: 2 }), {
      numPromptTokens: 10,
      numComputedTokens: 5,
      numCachedTokens: 5,
      numLocalCachedTokens: 3,
      numExternalCachedTokens: 2,
    });
  });

  it('PromptTokenStats keeps its invariants and answers by source', () => {
    const stats = createPromptTokenStats();
    stats.updateFromOutput(createPrefillStats({ numPromptTokens: 10, numLocalCachedTokens: 3, numExternalCachedTokens: 2 }));
    stats.updateFromOutput(createPrefillStats({ numPromptTokens: 6 }));
    assert.equal(stats.computed + stats.localCacheHit + stats.externalKvTransfer, stats.total);
    assert.equal(stats.localCacheHit + stats.externalKvTransfer, stats.cachedTokens);
    assert.deepEqual(
      PromptTokenStats.ALL_SOURCES.map((source) => stats.getBySource(source)),
      [11, 3, 2],
    );
  });

  it('createRequestStateStats starts every timestamp at 0 (not seen)', () => {
    const stats = createRequestStateStats({ arrivalTime: 5 });
    assert.deepEqual([stats.arrivalTime, stats.queuedTs, stats.scheduledTs, stats.firstTokenTs, stats.lastTokenTs, stats.numPreemptions], [5, 0, 0, 0, 0, 0]);
  });

  it('lists the finish reasons and recognises them', () => {
    assert.deepEqual(FINISH_REASONS, ['stop', 'length', 'abort', 'error', 'repetition']);
    assert.equal(isFinishReason('abort'), true);
    assert.equal(isFinishReason('cancelled'), false);
    assert.equal(isFinishReason(1), false);
  });
});
