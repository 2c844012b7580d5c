import * as assert from 'node:assert/strict';

import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { createPrefillStats, createRequestStateStats } from '../../instrumentation/stats/types';
import { assertAllClose, assertClose } from './assert-close';

describe('IterationStats (port of vLLM V1 stats.py formulas)', () => {
  it('uses the injected iteration timestamp for TTFT and e2e (frontend wall clock)', () => {
    const iteration = new IterationStats({ iterationTimestamp: 1000.875 });
    const req = createRequestStateStats({ arrivalTime: 1000 });
    iteration.updateFromOutput({ numNewTokens: 1, engineCoreTimestamp: 50.75, isPrefilling: true, promptLen: 8 }, req);
    assert.deepEqual(iteration.timeToFirstTokensIter, [0.875]);
    assert.equal(req.firstTokenLatency, 0.875);
    assert.equal(req.firstTokenTs, 50.75);
    assert.equal(req.lastTokenTs, 50.75);
    assert.deepEqual(iteration.interTokenLatenciesIter, []);
  });

  it('without a given timestamp, reads the wall clock in seconds when the timestamp is first used, and keeps it', () => {
    const iteration = new IterationStats();
    const before = Date.now() / 1000;
    const first = iteration.iterationTimestamp;
    const after = Date.now() / 1000;
    assert.ok(first >= before && first <= after, `${before} <= ${first} <= ${after}`);
    assert.equal(iteration.iterationTimestamp, first);
  });

  it('computes every interval of a realistic request to the microsecond, clocks kept apart', () => {
    // Wall clock around 1.7e9 s, engine monotonic clock around 8e3 s: mixing them would be off by ~1.7e9.
    const arrival = 1716200000.123456;
    const req = createRequestStateStats({ arrivalTime: arrival });

    const first = new IterationStats({ iterationTimestamp: 1716200000.456789 });
    first.updateFromOutput(
      {
        numNewTokens: 1,
        engineCoreTimestamp: 8123.250111,
        isPrefilling: true,
        promptLen: 12,
        events: [
          { type: 'QUEUED', timestamp: 8123.000111 },
          { type: 'SCHEDULED', timestamp: 8123.100222 },
        ],
      },
      req,
    );
    assertAllClose(first.timeToFirstTokensIter, [0.333333], 'ttft');
    assert.equal(first.numPromptTokens, 12);
    assert.equal(first.promptTokenStats.computed, 12, 'without PrefillStats the whole prompt counts as computed');

    const second = new IterationStats({ iterationTimestamp: 1716200000.5 });
    second.updateFromOutput({ numNewTokens: 3, engineCoreTimestamp: 8123.290333, isPrefilling: false, promptLen: 12 }, req);
    assertAllClose(second.interTokenLatenciesIter, [0.040222], 'itl (one per output, three tokens)');
    assert.equal(second.numPromptTokens, 0);

    const last = new IterationStats({ iterationTimestamp: 1716200001.000001 });
    last.updateFromOutput({ numNewTokens: 1, engineCoreTimestamp: 8123.330444, isPrefilling: false, promptLen: 12 }, req);
    last.updateFromFinishedRequest({ finishReason: 'stop', numPromptTokens: 12, maxTokensParam: 16 }, req);

    assertAllClose(last.interTokenLatenciesIter, [0.040111], 'itl');
    const [finished] = last.finishedRequests;
    assertClose(finished.e2eLatency, 0.876545, 'e2e');
    assertClose(finished.queuedTime, 0.100111, 'queued');
    assertClose(finished.prefillTime, 0.149889, 'prefill');
    assertClose(finished.decodeTime, 0.080333, 'decode');
    assertClose(finished.inferenceTime, 0.230222, 'inference');
    assertClose(finished.meanTimePerOutputToken, 0.080333 / 4, 'tpot = decode / (5 - 1)');
    assert.equal(finished.numGenerationTokens, 5);
    assert.equal(finished.maxTokensParam, 16);
    assert.equal(finished.finishReason, 'stop');
  });

  it('takes the queue interval from the first SCHEDULED only and counts preemptions', () => {
    const iteration = new IterationStats({ iterationTimestamp: 10 });
    const req = createRequestStateStats({ arrivalTime: 9 });
    iteration.updateFromEvents(
      [
        { type: 'QUEUED', timestamp: 1 },
        { type: 'SCHEDULED', timestamp: 2 },
        { type: 'PREEMPTED', timestamp: 3 },
        { type: 'SCHEDULED', timestamp: 4 },
      ],
      req,
    );
    assert.equal(req.queuedTs, 1);
    assert.equal(req.scheduledTs, 2);
    assert.equal(req.numPreemptions, 1);
    assert.equal(iteration.numPreemptedReqs, 1);
  });

  it('records a mean time per output token of 0 for a single-token request', () => {
    const iteration = new IterationStats({ iterationTimestamp: 5 });
    const req = createRequestStateStats({ arrivalTime: 4, queuedTs: 1, scheduledTs: 1.5 });
    iteration.updateFromOutput({ numNewTokens: 1, engineCoreTimestamp: 2, isPrefilling: true, promptLen: 3 }, req);
    iteration.updateFromFinishedRequest({ finishReason: 'length', numPromptTokens: 3 }, req);
    const [finished] = iteration.finishedRequests;
    assert.equal(finished.meanTimePerOutputToken, 0);
    assert.equal(finished.decodeTime, 0);
    assert.equal(finished.prefillTime, 0.5);
    assert.equal(finished.maxTokensParam, null);
  });

  it('splits prompt tokens by source when the output carries PrefillStats', () => {
    const iteration = new IterationStats({ iterationTimestamp: 1 });
    const prefillStats = createPrefillStats({ numPromptTokens: 100, numLocalCachedTokens: 30, numExternalCachedTokens: 20 });
    iteration.updateFromOutput({ numNewTokens: 1, engineCoreTimestamp: 1, isPrefilling: true, promptLen: 100, prefillStats }, createRequestStateStats());
    const stats = iteration.promptTokenStats;
    assert.deepEqual([stats.computed, stats.localCacheHit, stats.externalKvTransfer, stats.cachedTokens, stats.total], [50, 30, 20, 50, 100]);
    assert.equal(iteration.numPromptTokens, 100);
  });

  it('marks a request corrupted once and counts it when it finishes', () => {
    const iteration = new IterationStats({ iterationTimestamp: 1 });
    const req = createRequestStateStats();
    iteration.updateFromOutput({ numNewTokens: 1, engineCoreTimestamp: 1, isPrefilling: true, promptLen: 1, numNansInLogits: 2 }, req);
    iteration.updateFromOutput({ numNewTokens: 1, engineCoreTimestamp: 2, isPrefilling: false, promptLen: 1 }, req);
    assert.equal(req.isCorrupted, true);
    assert.equal(iteration.numCorruptedReqs, 0, 'counted at finish, not per output');
    iteration.updateFromFinishedRequest({ finishReason: 'stop', numPromptTokens: 1 }, req);
    assert.equal(iteration.numCorruptedReqs, 1);
    assert.equal(iteration.finishedRequests[0].isCorrupted, true);
  });
});
