import assert from 'node:assert/strict';
import { OrchestratorAggregator } from '../../instrumentation/recorders/orchestrator-aggregator';
import type { OmniStatLogger } from '../../instrumentation/recorders/stat-logger';
import type { OmniMetricsHandle } from '../../register';
import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { createPrefillStats, createSchedulerStats, type FinishedRequestStats, createFinishedRequestStats } from '../../instrumentation/stats/types';
import { BYTES_BUCKETS, REQUEST_LATENCY_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { parseSamples, seriesOf } from '../support/exposition';
import { assertHistogram, assertSample, edge, register, stageLabels } from './harness';

/** Pools [2, 2]: flat engine index → (stage, replica), stages in order, replicas within. */
const ENGINES: Array<[engine: number, stage: number, replica: number]> = [
  [0, 0, 0],
  [1, 0, 1],
  [2, 1, 0],
  [3, 1, 1],
];

/** Per-engine inputs, all different, so a series mixed up with another one shows. */
const running = (engine: number) => 10 + engine;
const waiting = (engine: number) => 2 * engine + 1;
const promptTokens = (engine: number) => 100 * (engine + 1);
const generationTokens = (engine: number) => 7 * (engine + 1);
/** Engine i finishes i + 1 requests with e2e latencies 0.4, 0.8, ... */
const e2eLatencies = (engine: number) => Array.from({ length: engine + 1 }, (_, k) => 0.4 * (k + 1));

function finishedRequest(e2eLatency: number): FinishedRequestStats {
  return createFinishedRequestStats({ finishReason: 'stop', e2eLatency, numPromptTokens: 1, numGenerationTokens: 1 });
}

describe('recorders: two stages × two replicas', () => {
  let handle: OmniMetricsHandle;
  let text: string;

  before(async () => {
    handle = await register({ stagePools: [2, 2] });
    const logger = handle.statLogger as OmniStatLogger;
    for (const [engine] of ENGINES) {
      const iteration = new IterationStats({ iterationTimestamp: 5000 });
      iteration.promptTokenStats.updateFromOutput(createPrefillStats({ numPromptTokens: promptTokens(engine) }));
      iteration.numGenerationTokens = generationTokens(engine);
      for (const latency of e2eLatencies(engine)) iteration.finishedRequests.push(finishedRequest(latency));
      logger.record(createSchedulerStats({ numRunningReqs: running(engine), numWaitingReqs: waiting(engine) }), iteration, engine);
    }

    // Request r1 runs on 0/0 then 1/1; r2 on 0/1 then 1/0.
    const bindings: Record<string, number[]> = { r1: [0, 1], r2: [1, 0] };
    const aggregator = new OrchestratorAggregator({
      transferEmitter: handle.transfer,
      replicaResolver: (stage, requestId) => bindings[requestId]?.[stage],
    });
    aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r1', sizeBytes: 1000, txTimeMs: 2 });
    aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r2', sizeBytes: 70000, txTimeMs: 9 });
    aggregator.recordTransferRx({ stageId: 1, requestId: 'r1', replicaId: 1, rxDecodeTimeMs: 4, rxInFlightTimeMs: 1 });
    aggregator.recordTransferRx({ stageId: 1, requestId: 'r2', replicaId: 0, rxDecodeTimeMs: 6, rxInFlightTimeMs: 30 });

    handle.stageReplica.observe(ENGINES.map(([engine, stage, replica]) => ({ stage, replica, outputsQueueSize: engine, inflight: 20 + engine })));
    text = await handle.metricsText();
  });
  after(() => handle.shutdown());

  it('the running gauge has four per-(stage, replica) series, each with its own value', () => {
    assert.deepEqual(
      seriesOf(text, 'vllm:num_requests_running')
        .map((l) => `${l.stage}/${l.replica}`)
        .sort(),
      ['0/0', '0/1', '1/0', '1/1'],
    );
    for (const [engine, stage, replica] of ENGINES) {
      assertSample(text, 'vllm:num_requests_running', stageLabels(stage, replica), running(engine));
      assertSample(text, 'vllm:num_requests_waiting', stageLabels(stage, replica), waiting(engine));
    }
  });

  it('the prompt / generation token counters are per replica', () => {
    assert.equal(seriesOf(text, 'vllm:prompt_tokens_total').length, 4);
    for (const [engine, stage, replica] of ENGINES) {
      assertSample(text, 'vllm:prompt_tokens_total', stageLabels(stage, replica), promptTokens(engine));
      assertSample(text, 'vllm:generation_tokens_total', stageLabels(stage, replica), generationTokens(engine));
    }
  });

  it('the e2e histogram counts each replica’s own finished requests', () => {
    assert.equal(seriesOf(text, 'vllm:e2e_request_latency_seconds_count').length, 4);
    for (const [engine, stage, replica] of ENGINES) {
      const e2e = assertHistogram(text, 'vllm:e2e_request_latency_seconds', stageLabels(stage, replica), REQUEST_LATENCY_BUCKETS, e2eLatencies(engine));
      assert.equal(e2e.count, engine + 1);
      assertSample(text, 'vllm:request_success_total', stageLabels(stage, replica, { finished_reason: 'stop' }), engine + 1);
    }
  });

  it('the two physical hops 0/0→1/1 and 0/1→1/0 are distinct transfer edges', () => {
    for (const family of ['vllm:omni_transfer_size_bytes', 'vllm:omni_transfer_tx_s', 'vllm:omni_transfer_rx_s', 'vllm:omni_transfer_in_flight_s']) {
      assert.deepEqual(
        seriesOf(text, `${family}_count`)
          .map((l) => `${l.from_stage}/${l.from_replica}->${l.to_stage}/${l.to_replica}`)
          .sort(),
        ['0/0->1/1', '0/1->1/0'],
        family,
      );
    }
    assertHistogram(text, 'vllm:omni_transfer_size_bytes', edge(0, 0, 1, 1), BYTES_BUCKETS, [1000]);
    assertHistogram(text, 'vllm:omni_transfer_size_bytes', edge(0, 1, 1, 0), BYTES_BUCKETS, [70000]);
    assertHistogram(text, 'vllm:omni_transfer_tx_s', edge(0, 0, 1, 1), SECONDS_FAST_BUCKETS, [2 / 1000]);
    assertHistogram(text, 'vllm:omni_transfer_tx_s', edge(0, 1, 1, 0), SECONDS_FAST_BUCKETS, [9 / 1000]);
    assertHistogram(text, 'vllm:omni_transfer_rx_s', edge(0, 0, 1, 1), SECONDS_FAST_BUCKETS, [4 / 1000]);
    assertHistogram(text, 'vllm:omni_transfer_rx_s', edge(0, 1, 1, 0), SECONDS_FAST_BUCKETS, [6 / 1000]);
    assertHistogram(text, 'vllm:omni_transfer_in_flight_s', edge(0, 0, 1, 1), SECONDS_FAST_BUCKETS, [1 / 1000]);
    assertHistogram(text, 'vllm:omni_transfer_in_flight_s', edge(0, 1, 1, 0), SECONDS_FAST_BUCKETS, [30 / 1000]);
  });

  it('the per-replica queue gauges follow the same (stage, replica) labels', () => {
    for (const [engine, stage, replica] of ENGINES) {
      assertSample(text, 'vllm:omni_stage_outputs_queue_size', stageLabels(stage, replica), engine);
      assertSample(text, 'vllm:omni_stage_inflight_requests', stageLabels(stage, replica), 20 + engine);
    }
  });

  it('no engine label anywhere, and every stage / replica label is one of the four', () => {
    assert.equal(text.indexOf('engine='), -1);
    const known = new Set(ENGINES.map(([, stage, replica]) => `${stage}/${replica}`));
    for (const sample of parseSamples(text)) {
      assert.ok(!('engine' in sample.labels), sample.name);
      if ('stage' in sample.labels) {
        assert.ok(known.has(`${sample.labels.stage}/${sample.labels.replica}`), `${sample.name} ${JSON.stringify(sample.labels)}`);
      }
    }
  });
});
