import * as assert from 'node:assert/strict';

import { type IterationStatsSummary, LoggingStatLogger } from '../../instrumentation/stats/logging-stat-logger';
import { createMultiModalCacheStats, createPrefixCacheStats, createSchedulerStats } from '../../instrumentation/stats/types';

function harness(stage: number | string = 0, replica: number | string = 1, showCorruptedRequests = false) {
  let now = 100;
  const info: string[] = [];
  const debug: string[] = [];
  const logger = new LoggingStatLogger({
    stage,
    replica,
    info: (line) => info.push(line),
    debug: (line) => debug.push(line),
    clock: () => now,
    showCorruptedRequests,
  });
  return {
    logger,
    info,
    debug,
    advance: (seconds: number) => {
      now += seconds;
    },
  };
}

function tokens(computed: number, generated: number, preempted = 0, corrupted = 0): IterationStatsSummary {
  return {
    promptTokenStats: { computed },
    numGenerationTokens: generated,
    numPreemptedReqs: preempted,
    numCorruptedReqs: corrupted,
  };
}

const IDLE_TAIL =
  'Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, ' +
  'GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%';

describe('LoggingStatLogger', () => {
  it('prints the vLLM line with a stage/replica prefix', () => {
    const { logger, info, debug, advance } = harness(0, 1);
    const prefixCacheStats = createPrefixCacheStats();
    prefixCacheStats.record(7, 6, false);
    logger.record(createSchedulerStats({ kvCacheUsage: 0.001, prefixCacheStats }), tokens(108, 343));
    advance(10);
    logger.log();
    assert.deepEqual(info, [
      'Stage 0 replica 1: Avg prompt throughput: 10.8 tokens/s, Avg generation throughput: 34.3 tokens/s, ' +
        'Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 85.7%',
    ]);
    assert.deepEqual(debug, []);
  });

  it('sends the line to debug only while this and the previous interval are both idle', () => {
    const { logger, info, debug, advance } = harness('talker', 0);
    advance(10);
    logger.log();
    assert.deepEqual(debug, [`Stage talker replica 0: ${IDLE_TAIL}`]);
    assert.equal(info.length, 0);

    logger.record(undefined, tokens(0, 5));
    advance(10);
    logger.log();
    assert.equal(info.length, 1);
    assert.match(info[0], /Avg generation throughput: 0\.5 tokens\/s/);

    advance(10);
    logger.log(); // no tokens now, but the previous interval had some
    assert.equal(info.length, 2);
    assert.match(info[1], /^Stage talker replica 0: Avg prompt throughput: 0\.0 tokens\/s, Avg generation throughput: 0\.0/);

    advance(10);
    logger.log();
    assert.equal(info.length, 2);
    assert.equal(debug.length, 2);
  });

  it('adds the Deferred and Preemptions parts only when non-zero, and resets preemptions each interval', () => {
    const { logger, info, advance } = harness(2, 0);
    logger.record(createSchedulerStats({ numRunningReqs: 4, numWaitingReqs: 3, numSkippedWaitingReqs: 2, kvCacheUsage: 0.5 }), tokens(20, 40, 1));
    logger.record(undefined, tokens(0, 0, 2));
    advance(4);
    logger.log();
    assert.deepEqual(info, [
      'Stage 2 replica 0: Avg prompt throughput: 5.0 tokens/s, Avg generation throughput: 10.0 tokens/s, ' +
        'Running: 4 reqs, Waiting: 5 reqs, Deferred: 2 reqs, Preemptions: 3, GPU KV cache usage: 50.0%, ' +
        'Prefix cache hit rate: 0.0%',
    ]);
    advance(4);
    logger.log();
    assert.equal(
      info[1],
      'Stage 2 replica 0: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, ' +
        'Running: 4 reqs, Waiting: 5 reqs, Deferred: 2 reqs, GPU KV cache usage: 50.0%, Prefix cache hit rate: 0.0%',
    );
  });

  it('reports 0 throughput when no monotonic time elapsed', () => {
    const { logger, info, debug } = harness();
    logger.record(undefined, tokens(100, 100));
    logger.log();
    assert.equal(info.length, 0);
    assert.deepEqual(debug, [`Stage 0 replica 1: ${IDLE_TAIL}`]);
  });

  it('counts only computed prompt tokens', () => {
    const { logger, info, advance } = harness();
    logger.record(undefined, { ...tokens(50, 0), promptTokenStats: { computed: 50, total: 100 } } as IterationStatsSummary);
    advance(10);
    logger.log();
    assert.match(info[0], /Avg prompt throughput: 5\.0 tokens\/s/);
  });

  it('appends Corrupted, external and multi-modal cache parts in vLLM order', () => {
    const { logger, info, advance } = harness(1, 1, true);
    const connectorPrefixCacheStats = createPrefixCacheStats();
    connectorPrefixCacheStats.record(8, 2, false);
    const mmCacheStats = createMultiModalCacheStats();
    mmCacheStats.record(4, 3);
    logger.record(createSchedulerStats({ connectorPrefixCacheStats, mmCacheStats }), tokens(10, 10, 0, 1));
    advance(1);
    logger.log();
    assert.equal(
      info[0],
      'Stage 1 replica 1: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 10.0 tokens/s, ' +
        'Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%, Corrupted: 1 reqs, ' +
        'External prefix cache hit rate: 25.0%, MM cache hit rate: 75.0%',
    );
  });

  it('keeps the prefix cache window across log() calls and the last scheduler stats until new ones arrive', () => {
    const { logger, info, advance } = harness();
    const first = createPrefixCacheStats();
    first.record(10, 10, false);
    logger.record(createSchedulerStats({ numRunningReqs: 7, prefixCacheStats: first }), tokens(1, 1));
    advance(1);
    logger.log();
    const second = createPrefixCacheStats();
    second.record(10, 0, false);
    second.record(10, 0, true); // preempted lookups do not enter the hit rate
    logger.record(createSchedulerStats({ numRunningReqs: 7, prefixCacheStats: second }), undefined);
    logger.record(undefined, tokens(1, 1));
    advance(1);
    logger.log();
    assert.match(info[0], /Running: 7 reqs.*Prefix cache hit rate: 100\.0%$/);
    assert.match(info[1], /Running: 7 reqs.*Prefix cache hit rate: 50\.0%$/);
  });

  it('drops idle lines when no debug sink is given', () => {
    const lines: string[] = [];
    const logger = new LoggingStatLogger({ stage: 0, replica: 0, info: (line) => lines.push(line), clock: () => 1 });
    logger.log();
    assert.deepEqual(lines, []);
  });
});
