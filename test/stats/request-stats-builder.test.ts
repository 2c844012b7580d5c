import * as assert from 'node:assert/strict';

import type { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { RequestStatsBuilder } from '../../instrumentation/stats/request-stats-builder';
import type { FinishReason, FinishedRequestStats } from '../../instrumentation/stats/types';

/** Every interval of a finished request, in a fixed order, for whole-record comparisons. */
function intervals(finished: FinishedRequestStats) {
  return {
    e2e: finished.e2eLatency,
    queued: finished.queuedTime,
    prefill: finished.prefillTime,
    decode: finished.decodeTime,
    inference: finished.inferenceTime,
    tpot: finished.meanTimePerOutputToken,
  };
}

describe('RequestStatsBuilder', () => {
  describe('hand-computed sequences (all values are exact binary fractions)', () => {
    it('a request preempted during decode', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(1000.875);
      builder.arrived('a', { arrivalTime: 1000, promptTokens: 8, maxTokens: 5 });
      builder.queued('a', 50);
      builder.scheduled('a', 50.25, { cachedTokens: 2 });
      builder.newTokens('a', 1, 50.75);
      const first = builder.takeIterationStats();
      assert.deepEqual(first.timeToFirstTokensIter, [0.875], 'TTFT = iteration wall time - arrival wall time');
      assert.deepEqual(first.interTokenLatenciesIter, []);
      assert.equal(first.numGenerationTokens, 1);
      assert.equal(first.numPromptTokens, 8);
      assert.equal(first.promptTokenStats.computed, 6);
      assert.equal(first.promptTokenStats.localCacheHit, 2);

      builder.startIteration(1001.125);
      builder.newTokens('a', 1, 51);
      const second = builder.takeIterationStats();
      assert.deepEqual(second.timeToFirstTokensIter, []);
      assert.deepEqual(second.interTokenLatenciesIter, [0.25]);
      assert.equal(second.numPromptTokens, 0);

      builder.startIteration(1002.25);
      builder.preempted('a', 51.125);
      builder.scheduled('a', 51.5, { cachedTokens: 8 });
      builder.newTokens('a', 1, 52);
      const third = builder.takeIterationStats();
      assert.equal(third.numPreemptedReqs, 1);
      assert.deepEqual(third.timeToFirstTokensIter, [], 'the output after a preemption is not a new first token');
      assert.deepEqual(third.interTokenLatenciesIter, [1], 'ITL spans the preemption: 52 - 51');
      assert.equal(third.numPromptTokens, 0, 'the re-prefill does not count prompt tokens again');

      builder.startIteration(1003.5);
      builder.newTokens('a', 2, 52.5); // one output carrying two (speculative) tokens
      builder.finished('a', 'length');
      const last = builder.takeIterationStats();
      assert.deepEqual(last.interTokenLatenciesIter, [0.5], 'one ITL per output, not per token');
      assert.equal(last.numGenerationTokens, 2);
      assert.equal(last.finishedRequests.length, 1);
      const [finished] = last.finishedRequests;
      assert.deepEqual(intervals(finished), {
        e2e: 3.5, // 1003.5 - 1000 (wall)
        queued: 0.25, // 50.25 - 50: first QUEUED to first SCHEDULED
        prefill: 0.5, // 50.75 - 50.25
        decode: 1.75, // 52.5 - 50.75, preemption included
        inference: 2.25, // 52.5 - 50.25
        tpot: 0.4375, // 1.75 / (5 - 1)
      });
      assert.equal(finished.numGenerationTokens, 5);
      assert.equal(finished.numPreemptions, 1);
      assert.equal(finished.numPromptTokens, 8);
      assert.equal(finished.maxTokensParam, 5);
      assert.equal(finished.numCachedTokens, 2);
      assert.equal(finished.finishReason, 'length');
      assert.equal(finished.requestId, 'a');
      assert.deepEqual(last.maxNumGenerationTokensIter, [5]);
      assert.deepEqual(last.nParamsIter, [1]);
      assert.equal(builder.trackedRequests, 0);

      const scheduler = builder.takeSchedulerStats();
      const prefix = scheduler.prefixCacheStats;
      assert.deepEqual([prefix.requests, prefix.queries, prefix.hits], [1, 8, 2]);
      // Rescheduled after the preemption: it looks up prompt + 2 generated tokens, and only in the preempted fields.
      assert.deepEqual([prefix.preemptedRequests, prefix.preemptedQueries, prefix.preemptedHits], [1, 10, 8]);
    });

    it('a request preempted during prefill', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(2003.25);
      builder.arrived('b', { arrivalTime: 2000, promptTokens: 16, maxTokens: 3 });
      builder.queued('b', 100);
      builder.scheduled('b', 100.5, { cachedTokens: 4 });
      builder.preempted('b', 101);
      builder.queued('b', 101.25); // a host re-queueing the preempted request: must not move the queue start
      builder.scheduled('b', 102, { cachedTokens: 8 });
      builder.newTokens('b', 1, 103);
      const first = builder.takeIterationStats();
      assert.deepEqual(first.timeToFirstTokensIter, [3.25]);
      assert.deepEqual(first.interTokenLatenciesIter, []);
      assert.equal(first.numPreemptedReqs, 1);
      assert.equal(first.promptTokenStats.total, 16);
      assert.equal(first.promptTokenStats.computed, 12, 'cached tokens of the first scheduling');

      builder.startIteration(2004.5);
      builder.newTokens('b', 1, 103.5);
      builder.newTokens('b', 1, 104.25);
      builder.finished('b', 'stop');
      const last = builder.takeIterationStats();
      assert.deepEqual(last.interTokenLatenciesIter, [0.5, 0.75]);
      const [finished] = last.finishedRequests;
      assert.deepEqual(intervals(finished), {
        e2e: 4.5,
        queued: 0.5, // 100.5 - 100, the re-queue ignored
        prefill: 2.5, // 103 - 100.5: the preemption is inside prefill
        decode: 1.25, // 104.25 - 103
        inference: 3.75, // 104.25 - 100.5
        tpot: 0.625, // 1.25 / 2
      });
      assert.equal(finished.numPreemptions, 1);
      assert.equal(finished.numCachedTokens, 4);
    });

    it('interleaves two requests in one iteration without mixing their state', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(11);
      builder.arrived('x', { arrivalTime: 10, promptTokens: 4 });
      builder.arrived('y', { arrivalTime: 10.5, promptTokens: 6, n: 2 });
      builder.queued('x', 1);
      builder.queued('y', 1.25);
      builder.scheduled('x', 1.5);
      builder.scheduled('y', 1.5);
      builder.newTokens('x', 1, 2);
      builder.newTokens('y', 1, 2);
      const step1 = builder.takeIterationStats();
      assert.deepEqual(step1.timeToFirstTokensIter, [1, 0.5]);
      assert.equal(step1.numPromptTokens, 10);
      builder.startIteration(12);
      builder.newTokens('x', 1, 2.5);
      builder.newTokens('y', 1, 2.5);
      builder.finished('y', 'stop');
      builder.newTokens('x', 1, 3);
      builder.finished('x', 'length');
      const step2 = builder.takeIterationStats();
      assert.deepEqual(step2.interTokenLatenciesIter, [0.5, 0.5, 0.5]);
      assert.deepEqual(
        step2.finishedRequests.map((f) => [f.requestId, f.e2eLatency, f.queuedTime, f.decodeTime, f.numGenerationTokens]),
        [
          ['y', 1.5, 0.25, 0.5, 2],
          ['x', 2, 0.5, 1, 3],
        ],
      );
      assert.deepEqual(step2.nParamsIter, [2, 1]);
      assert.deepEqual(step2.maxNumGenerationTokensIter, [2, 3]);
    });
  });

  describe('iterations', () => {
    it('applies each event as it arrives, to the request and to the open iteration', () => {
      const builder = new RequestStatsBuilder();
      const iteration = builder.startIteration(20);
      builder.arrived('a', { arrivalTime: 19.5, promptTokens: 3 });
      builder.newTokens('a', 2, 7);
      assert.deepEqual(iteration.timeToFirstTokensIter, [0.5], 'before takeIterationStats()');
      assert.equal(iteration.numGenerationTokens, 2);
      builder.preempted('a', 7.5);
      assert.equal(iteration.numPreemptedReqs, 1);
      assert.equal(builder.takeIterationStats(), iteration);
    });

    it('empties an iteration handed back for reuse, and refills it', () => {
      const builder = new RequestStatsBuilder();
      const first = builder.startIteration(10);
      builder.arrived('a', { arrivalTime: 9, promptTokens: 4 });
      builder.newTokens('a', 1, 1);
      builder.newTokens('a', 1, 1.25);
      builder.preempted('a', 1.5);
      builder.takeIterationStats();
      const second = builder.startIteration(12, first);
      assert.equal(second, first, 'the same object');
      assert.deepEqual([second.iterationTimestamp, second.numGenerationTokens, second.numPromptTokens, second.numPreemptedReqs], [12, 0, 0, 0]);
      assert.deepEqual([second.timeToFirstTokensIter, second.interTokenLatenciesIter, second.finishedRequests], [[], [], []]);
      builder.newTokens('a', 1, 2);
      builder.finished('a', 'stop', 2);
      const taken = builder.takeIterationStats();
      assert.deepEqual(taken.interTokenLatenciesIter, [0.75]);
      assert.deepEqual(
        taken.finishedRequests.map((f) => [f.e2eLatency, f.numGenerationTokens, f.numPreemptions]),
        [[3, 3, 1]],
      );
    });
  });

  describe('requests that never produced a token', () => {
    it('closes the prefill at the finish time instead of measuring from 0', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(12);
      builder.arrived('c', { arrivalTime: 10, promptTokens: 5 });
      builder.queued('c', 5);
      builder.scheduled('c', 5.5);
      builder.finished('c', 'abort', 6.25);
      const iteration = builder.takeIterationStats();
      assert.deepEqual(iteration.timeToFirstTokensIter, [], 'no token, no TTFT');
      assert.deepEqual(intervals(iteration.finishedRequests[0]), {
        e2e: 2,
        queued: 0.5,
        prefill: 0.75,
        decode: 0,
        inference: 0.75,
        tpot: 0,
      });
    });

    it('closes the queue interval for a request that was never scheduled', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(11);
      builder.arrived('d', { arrivalTime: 10, promptTokens: 5 });
      builder.queued('d', 5);
      builder.finished('d', 'error', 7);
      const [finished] = builder.takeIterationStats().finishedRequests;
      assert.deepEqual(intervals(finished), { e2e: 1, queued: 2, prefill: 0, decode: 0, inference: 0, tpot: 0 });
    });

    it('uses the last known event when no finish time is given', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(11);
      builder.arrived('e', { arrivalTime: 10, promptTokens: 5 });
      builder.queued('e', 5);
      builder.scheduled('e', 5.5);
      builder.finished('e', 'error');
      const [finished] = builder.takeIterationStats().finishedRequests;
      assert.deepEqual(intervals(finished), { e2e: 1, queued: 0.5, prefill: 0, decode: 0, inference: 0, tpot: 0 });
    });
  });

  it('reproduces upstream test_metrics.py counts: N sequential requests of P prompt tokens, max_tokens T', () => {
    const N = 3;
    const P = 7;
    const T = 4;
    const builder = new RequestStatsBuilder();
    const iterations: IterationStats[] = [];
    let wall = 1_700_000_000;
    let engine = 100;
    for (let r = 0; r < N; r++) {
      const id = `req-${r}`;
      builder.arrived(id, { arrivalTime: wall, promptTokens: P, maxTokens: T });
      builder.queued(id, (engine += 0.001));
      builder.scheduled(id, (engine += 0.001));
      for (let step = 0; step < T; step++) {
        builder.startIteration((wall += 0.01));
        builder.newTokens(id, 1, (engine += 0.01));
        if (step === T - 1) builder.finished(id, 'length');
        iterations.push(builder.takeIterationStats());
      }
    }
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const finished = iterations.flatMap((it) => it.finishedRequests);

    assert.equal(sum(iterations.map((it) => it.timeToFirstTokensIter.length)), N, 'TTFT _count');
    assert.equal(sum(iterations.map((it) => it.interTokenLatenciesIter.length)), N * (T - 1), 'ITL _count');
    assert.equal(finished.length, N, 'e2e / queue / inference / prefill / decode _count');
    assert.equal(sum(finished.map((f) => f.numPromptTokens)), N * P, 'request_prompt_tokens _sum');
    assert.equal(sum(finished.map((f) => f.numGenerationTokens)), N * T, 'request_generation_tokens _sum');
    assert.equal(iterations.flatMap((it) => it.nParamsIter).length, N, 'request_params_n _count');
    assert.equal(sum(finished.map((f) => f.maxTokensParam ?? 0)), N * T, 'request_params_max_tokens _sum');
    assert.equal(sum(iterations.map((it) => it.numPromptTokens + it.numGenerationTokens)), N * (P + T), 'iteration_tokens _sum');
    assert.equal(iterations.length, N * T, 'iteration_tokens _count: one engine step per token');
    assert.equal(sum(iterations.map((it) => it.numPromptTokens)), N * P, 'prompt_tokens _total');
    assert.equal(sum(iterations.map((it) => it.numGenerationTokens)), N * T, 'generation_tokens _total');
    assert.equal(finished.filter((f) => f.finishReason === 'length').length, N, 'request_success{length} _total');
    assert.equal(builder.droppedEvents, 0);
    assert.equal(builder.trackedRequests, 0);
  });

  describe('robustness', () => {
    it('never throws on unknown ids or bad values, and counts each ignored event', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(2);
      builder.newTokens('ghost', 1, 1);
      builder.queued('ghost', 1);
      builder.scheduled('ghost', 1);
      builder.preempted('ghost', 1);
      builder.finished('ghost', 'stop');
      builder.aborted('ghost');
      assert.equal(builder.droppedEvents, 6);

      builder.arrived('r', { arrivalTime: 1, promptTokens: 2 });
      builder.arrived('r', { arrivalTime: 1, promptTokens: 2 }); // duplicate id
      builder.arrived('bad-arrival', { arrivalTime: Number.NaN, promptTokens: 2 });
      builder.arrived('bad-prompt', { arrivalTime: 1, promptTokens: -1 });
      builder.newTokens('r', 0, 1); // an output without tokens
      builder.newTokens('r', 1.5, 1);
      builder.queued('r', Number.POSITIVE_INFINITY);
      assert.equal(builder.droppedEvents, 12);
      assert.equal(builder.trackedRequests, 1);

      builder.finished('r', 'not-a-reason' as FinishReason);
      assert.equal(builder.droppedEvents, 13);
      assert.equal(builder.trackedRequests, 0, 'state is released even when the record is dropped');
      builder.newTokens('r', 1, 2); // after the end
      assert.equal(builder.droppedEvents, 14);
      assert.equal(builder.takeIterationStats().finishedRequests.length, 0);
    });

    it('aborted() releases the request without a finished record but keeps what it produced', () => {
      const builder = new RequestStatsBuilder();
      builder.startIteration(3);
      builder.arrived('q', { arrivalTime: 1, promptTokens: 3 });
      builder.scheduled('q', 1);
      builder.newTokens('q', 1, 2);
      builder.aborted('q');
      assert.equal(builder.trackedRequests, 0);
      const iteration = builder.takeIterationStats();
      assert.equal(iteration.finishedRequests.length, 0);
      assert.equal(iteration.numGenerationTokens, 1);
      assert.equal(builder.droppedEvents, 0);
    });

    it('bounds tracked requests', () => {
      const builder = new RequestStatsBuilder({ maxTrackedRequests: 2 });
      builder.arrived('1', { arrivalTime: 1, promptTokens: 1 });
      builder.arrived('2', { arrivalTime: 1, promptTokens: 1 });
      builder.arrived('3', { arrivalTime: 1, promptTokens: 1 });
      assert.equal(builder.trackedRequests, 2);
      assert.equal(builder.droppedEvents, 1);
      builder.finished('1', 'stop', 2);
      builder.arrived('3', { arrivalTime: 1, promptTokens: 1 });
      assert.equal(builder.trackedRequests, 2, 'a finished request makes room');
      assert.equal(builder.droppedEvents, 1);
    });

    it('rejects invalid limits at construction', () => {
      assert.throws(() => new RequestStatsBuilder({ maxTrackedRequests: 0 }), RangeError);
      assert.throws(() => new RequestStatsBuilder({ maxTrackedRequests: 1.5 }), RangeError);
    });
  });

  describe('takeSchedulerStats', () => {
    it('counts running and waiting requests and resets the cache lookups', () => {
      const builder = new RequestStatsBuilder();
      for (const id of ['a', 'b', 'c', 'd']) builder.arrived(id, { arrivalTime: 1, promptTokens: 10 });
      builder.queued('a', 1);
      builder.queued('b', 1);
      builder.queued('c', 1);
      builder.scheduled('a', 2, { cachedTokens: 6, externalCachedTokens: 2 });
      builder.scheduled('a', 3, { cachedTokens: 6 }); // already running: no second lookup
      builder.scheduled('b', 2, { cachedTokens: 0 });
      builder.preempted('b', 3);
      const stats = builder.takeSchedulerStats({ kvCacheUsage: 0.5 });
      assert.equal(stats.numRunningReqs, 1, 'a');
      assert.equal(stats.numWaitingReqs, 2, 'b (preempted) and c; d only arrived');
      assert.equal(stats.kvCacheUsage, 0.5);
      const prefix = stats.prefixCacheStats;
      assert.deepEqual([prefix.requests, prefix.queries, prefix.hits], [2, 20, 4], 'local hits exclude the connector part');
      const connector = stats.connectorPrefixCacheStats;
      assert.ok(connector);
      assert.deepEqual([connector.requests, connector.queries, connector.hits], [1, 10, 2]);

      const next = builder.takeSchedulerStats();
      assert.equal(next.prefixCacheStats.requests, 0);
      assert.equal(next.connectorPrefixCacheStats?.requests, 0);
    });

    it('leaves connector stats out until a connector lookup is reported', () => {
      const builder = new RequestStatsBuilder();
      builder.arrived('a', { arrivalTime: 1, promptTokens: 10 });
      builder.scheduled('a', 2, { cachedTokens: 3 });
      assert.equal(builder.takeSchedulerStats().connectorPrefixCacheStats, null);
    });
  });
});
