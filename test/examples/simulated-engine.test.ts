import * as assert from 'node:assert/strict';

import type { EngineCoreEventType } from '../../instrumentation/pipeline/host-contract';
import { StatsThrottle } from '../../instrumentation/stats/stats-throttle';
import { SimulatedEngine, type SimulatedEngineOptions } from '../../examples/pipeline/simulated-engine';
import type { StageEngineOutput, StageEngineOutputs } from '../../examples/pipeline/stage-engine';

/** Fast, deterministic defaults; steps are driven by hand with runStepSync(). */
function engine(overrides: Partial<SimulatedEngineOptions> = {}): SimulatedEngine {
  return new SimulatedEngine({
    stageId: 0,
    replicaId: 0,
    seed: 42,
    timing: { stepBaseMs: 1, prefillMsPerToken: 0.01, decodeMsPerSeq: 0.1 },
    numKvBlocks: 64,
    maxNumSeqs: 8,
    maxNumBatchedTokens: 2048,
    stopPolicy: { probability: 0.1, afterFraction: 0.25 },
    sampleToken: (u) => Math.floor(u * 1000),
    statsThrottle: new StatsThrottle({ intervalSeconds: 0 }),
    ...overrides,
  });
}

function prompt(length: number, offset = 0): number[] {
  return Array.from({ length }, (_, i) => 100 + offset + i);
}

/** Steps until idle, collecting every polled step. */
function drain(e: SimulatedEngine, maxSteps = 10_000): StageEngineOutputs[] {
  const steps: StageEngineOutputs[] = [];
  for (let i = 0; i < maxSteps && e.runStepSync(); i++) {
    for (let s = e.poll(); s !== undefined; s = e.poll()) steps.push(s);
  }
  for (let s = e.poll(); s !== undefined; s = e.poll()) steps.push(s);
  return steps;
}

function outputsOf(steps: readonly StageEngineOutputs[], requestId?: string): StageEngineOutput[] {
  return steps.flatMap((s) => s.outputs).filter((o) => requestId === undefined || o.requestId === requestId);
}

/** Everything but timestamps, which come from the real monotonic clock. */
function fingerprint(steps: readonly StageEngineOutputs[]): unknown {
  return outputsOf(steps).map((o) => [o.requestId, o.newTokenIds, o.finishReason ?? null, (o.events ?? []).map((e) => e.type), o.numCachedTokens ?? null]);
}

function eventTypes(steps: readonly StageEngineOutputs[], requestId: string): EngineCoreEventType[] {
  return outputsOf(steps, requestId).flatMap((o) => (o.events ?? []).map((e) => e.type));
}

describe('examples: SimulatedEngine', () => {
  it('is deterministic for a seed, and a different seed changes the run', () => {
    const run = (seed: number) => {
      const e = engine({ seed });
      for (let i = 0; i < 4; i++) e.submit({ requestId: `r${i}`, tokenIds: prompt(20 + i * 7, i), maxTokens: 24, final: true });
      return fingerprint(drain(e));
    };
    assert.deepEqual(run(7), run(7));
    assert.notDeepEqual(run(7), run(8));
  });

  it('preempts under a tiny KV budget: PREEMPTED events, re-SCHEDULED, and every request still finishes', () => {
    // 6 blocks of 16 tokens: three 20-token prompts fill the cache at admission, so growth must evict.
    const e = engine({ numKvBlocks: 6, stopPolicy: { probability: 0, afterFraction: 0 } });
    for (let i = 0; i < 3; i++) e.submit({ requestId: `r${i}`, tokenIds: prompt(20, i * 50), maxTokens: 40, final: true });
    const steps = drain(e);
    const preempted = ['r0', 'r1', 'r2'].filter((id) => eventTypes(steps, id).includes('PREEMPTED'));
    assert.ok(preempted.length > 0, 'no request was preempted');
    for (const id of preempted) {
      const types = eventTypes(steps, id);
      assert.equal(types[types.indexOf('PREEMPTED') + 1], 'SCHEDULED', `${id} was not rescheduled after its preemption: ${types.join(',')}`);
    }
    for (const id of ['r0', 'r1', 'r2']) {
      const outputs = outputsOf(steps, id);
      assert.equal(outputs.at(-1)?.finishReason, 'length', `${id} did not finish`);
      assert.equal(
        outputs.reduce((n, o) => n + o.numNewTokens, 0),
        40,
        `${id} lost or repeated tokens across preemption`,
      );
    }
    assert.equal(e.kvCache.freeBlocks, 6, 'blocks leaked');
    const stats = steps.flatMap((s) => (s.schedulerStats ? [s.schedulerStats] : []));
    assert.ok(
      stats.some((s) => s.kvCacheUsage === 1),
      'the cache never filled up',
    );
    assert.ok(
      stats.some((s) => s.prefixCacheStats.preemptedRequests > 0),
      'recompute lookups are kept apart as preempted',
    );
  });

  it('serves a repeated prompt from the prefix cache', () => {
    const e = engine();
    const shared = prompt(64);
    e.submit({ requestId: 'first', tokenIds: shared, maxTokens: 4, final: true });
    const first = drain(e);
    e.submit({ requestId: 'second', tokenIds: shared, maxTokens: 4, final: true });
    const second = drain(e);
    assert.equal(outputsOf(first, 'first')[0].numCachedTokens, 0);
    // 64 tokens = 4 blocks, but one token is always recomputed, so 3 whole blocks hit.
    assert.equal(outputsOf(second, 'second')[0].numCachedTokens, 48);
    const hits = second.reduce((n, s) => n + (s.schedulerStats?.prefixCacheStats.hits ?? 0), 0);
    const queries = second.reduce((n, s) => n + (s.schedulerStats?.prefixCacheStats.queries ?? 0), 0);
    assert.deepEqual([hits, queries], [48, 64]);
  });

  it('finishes with length at max_tokens, and with stop when EOS is sampled', () => {
    const never = engine({ stopPolicy: { probability: 0, afterFraction: 0 } });
    never.submit({ requestId: 'long', tokenIds: prompt(10), maxTokens: 17, final: true });
    const longRun = outputsOf(drain(never), 'long');
    assert.equal(longRun.length, 17);
    assert.deepEqual(
      longRun.map((o) => o.finishReason ?? null),
      [...Array<null>(16).fill(null), 'length'],
    );

    const always = engine({ stopPolicy: { probability: 1, afterFraction: 0.5 } });
    always.submit({ requestId: 'short', tokenIds: prompt(10), maxTokens: 16, final: true });
    const shortRun = outputsOf(drain(always), 'short');
    assert.equal(shortRun.length, 8, 'EOS may only come once half of max_tokens was generated');
    assert.equal(shortRun.at(-1)?.finishReason, 'stop');
  });

  it('reports QUEUED and SCHEDULED with the first output, monotonic timestamps in engine seconds', () => {
    let now = 100;
    const e = engine({ clock: () => now });
    e.submit({ requestId: 'r', tokenIds: prompt(8), maxTokens: 2, final: true });
    now = 100.5;
    const steps = drain(e);
    const first = outputsOf(steps, 'r')[0];
    assert.deepEqual(first.events, [
      { type: 'QUEUED', timestamp: 100 },
      { type: 'SCHEDULED', timestamp: 100.5 },
    ]);
    assert.equal(steps[0].timestamp, 100.5);
  });

  it('attaches scheduler stats at most once per interval per replica (StatsThrottle)', () => {
    let now = 0;
    const throttle = new StatsThrottle({ clock: () => now });
    const a = engine({ statsThrottle: throttle, replicaId: 0, stopPolicy: { probability: 0, afterFraction: 0 } });
    const b = engine({ statsThrottle: throttle, replicaId: 1, stopPolicy: { probability: 0, afterFraction: 0 } });
    a.submit({ requestId: 'a', tokenIds: prompt(8), maxTokens: 6, final: true });
    b.submit({ requestId: 'b', tokenIds: prompt(8), maxTokens: 6, final: true });
    const statsSteps = (e: SimulatedEngine, steps: number): number => {
      let withStats = 0;
      for (let i = 0; i < steps; i++) {
        e.runStepSync();
        if (e.poll()?.schedulerStats) withStats += 1;
      }
      return withStats;
    };
    assert.equal(statsSteps(a, 3), 1, 'three steps within one second carry one stats object');
    assert.equal(statsSteps(b, 3), 1, 'the other replica has its own gate');
    now = 1;
    assert.equal(statsSteps(a, 3), 1);
  });

  it('abort frees the blocks and drops the buffered outputs of the request', () => {
    const e = engine();
    e.submit({ requestId: 'gone', tokenIds: prompt(40), maxTokens: 30, final: true });
    e.submit({ requestId: 'kept', tokenIds: prompt(40, 500), maxTokens: 3, final: true });
    e.runStepSync();
    e.abort('gone');
    const steps = drain(e);
    assert.equal(outputsOf(steps, 'gone').length, 0);
    assert.ok(outputsOf(steps, 'kept').at(-1)?.finishReason, 'the other request still finishes');
    assert.equal(e.kvCache.freeBlocks, 64);
  });

  it('refuses a request that could never fit in the KV cache', () => {
    assert.throws(() => engine({ numKvBlocks: 2 }).submit({ requestId: 'big', tokenIds: prompt(30), maxTokens: 10, final: true }), /needs 3 KV blocks/);
  });
});
