import assert from 'node:assert/strict';
import { OrchestratorAggregator, type ReplicaResolver } from '../../instrumentation/recorders/orchestrator-aggregator';
import type { OmniTransferMetrics } from '../../instrumentation/recorders/transfer-metrics';
import type { OmniMetricsHandle } from '../../register';
import { BYTES_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { histogramOf, seriesOf } from '../support/exposition';
import { assertHistogram, assertNoSeries, bucketCount, edge, register } from './harness';

const SIZE = 'vllm:omni_transfer_size_bytes';
const TX = 'vllm:omni_transfer_tx_s';
const RX = 'vllm:omni_transfer_rx_s';
const IN_FLIGHT = 'vllm:omni_transfer_in_flight_s';

/** A resolver over a fixed binding table `requestId -> [replica of stage 0, replica of stage 1, ...]`, logging calls. */
function tableResolver(bindings: Record<string, Array<number | null>>): ReplicaResolver & { calls: Array<[number, string]> } {
  const calls: Array<[number, string]> = [];
  const resolver = (stageId: number, requestId: string): number | null | undefined => {
    calls.push([stageId, requestId]);
    return bindings[requestId]?.[stageId];
  };
  return Object.assign(resolver, { calls });
}

describe('recorders: OrchestratorAggregator', () => {
  let handle: OmniMetricsHandle;
  beforeEach(async () => {
    handle = await register({ stagePools: [2, 2, 2] });
  });
  afterEach(() => handle.shutdown());

  describe('recordTransferTx', () => {
    it('emits size as given and tx in seconds (ms / 1000) on the resolved edge, once per transfer', async () => {
      const resolver = tableResolver({ r1: [1, 0] });
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: resolver });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r1', sizeBytes: 2048, txTimeMs: 12.5 });
      aggregator.recordTransferTx({
        fromStage: 0,
        toStage: 1,
        requestId: 'r1',
        sizeBytes: 30000,
        txTimeMs: 0.5,
        usedShm: true,
      });
      const text = await handle.metricsText();
      const labels = edge(0, 1, 1, 0);
      const tx = assertHistogram(text, TX, labels, SECONDS_FAST_BUCKETS, [12.5 / 1000, 0.5 / 1000]);
      assert.equal(bucketCount(tx, '0.001'), 1, '0.5 ms');
      assert.equal(bucketCount(tx, '0.01'), 1);
      assert.equal(bucketCount(tx, '0.025'), 2, '12.5 ms');
      const size = assertHistogram(text, SIZE, labels, BYTES_BUCKETS, [2048, 30000]);
      assert.equal(bucketCount(size, '4096.0'), 1);
      assert.equal(bucketCount(size, '65536.0'), 2);
      assert.deepEqual(seriesOf(text, `${TX}_count`), [labels], 'only the resolved edge');
      assert.deepEqual(resolver.calls.slice(0, 2), [
        [0, 'r1'],
        [1, 'r1'],
      ]);
    });

    it('observes a fractional size truncated to an integer', async () => {
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: () => 0 });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 1500.7, txTimeMs: 1 });
      const text = await handle.metricsText();
      assertHistogram(text, SIZE, edge(0, 0, 1, 0), BYTES_BUCKETS, [1500]);
    });

    it('without an emitter, nothing is observed and nothing is resolved', async () => {
      const resolver = tableResolver({ r: [0, 0] });
      const aggregator = new OrchestratorAggregator({ replicaResolver: resolver });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 10, txTimeMs: 1.0 });
      assert.deepEqual(resolver.calls, [], 'no emitter: nothing to resolve');
      assertNoSeries(await handle.metricsText(), SIZE, TX, RX, IN_FLIGHT);
    });

    it('without a resolver and with nothing cached, the emit is skipped silently', async () => {
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 10, txTimeMs: 1.0 });
      assertNoSeries(await handle.metricsText(), SIZE, TX);
    });

    it('an unresolved side (resolver returns null / undefined) skips the emit', async () => {
      const resolver = tableResolver({ fromUnknown: [null, 1], toUnknown: [1] });
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: resolver });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'fromUnknown', sizeBytes: 1, txTimeMs: 3 });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'toUnknown', sizeBytes: 1, txTimeMs: 4 });
      assertNoSeries(await handle.metricsText(), SIZE, TX);
    });

    it('an emitter that throws makes the call return undefined instead of throwing', () => {
      const throwing = {
        observeSize: () => {
          throw new Error('boom');
        },
        observeTxTime: () => undefined,
      } as unknown as OmniTransferMetrics;
      const aggregator = new OrchestratorAggregator({ transferEmitter: throwing, replicaResolver: () => 0 });
      assert.equal(aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 1, txTimeMs: 1 }), undefined);
    });
  });

  describe('recordTransferRx', () => {
    it('stage 0 (and a missing stage) has no inbound edge: undefined, nothing emitted', async () => {
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: () => 0 });
      assert.equal(aggregator.recordTransferRx({ stageId: 0, requestId: 'r', replicaId: 0, rxDecodeTimeMs: 5 }), undefined);
      assert.equal(aggregator.recordTransferRx({ stageId: null, requestId: 'r', rxDecodeTimeMs: 5 }), undefined);
      assert.equal(aggregator.recordTransferRx({ stageId: undefined, requestId: 'r', rxDecodeTimeMs: 5 }), undefined);
      assertNoSeries(await handle.metricsText(), RX, IN_FLIGHT);
    });

    it('emits rx and in-flight in seconds on the edge (stage - 1 → stage), the receiving replica taken from the report', async () => {
      const resolver = tableResolver({ r1: [1, 0] });
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: resolver });
      aggregator.recordTransferRx({
        stageId: 1,
        requestId: 'r1',
        replicaId: 1, // the resolver would say 0: the cache wins
        rxTransferBytes: 4096,
        rxDecodeTimeMs: 3,
        rxInFlightTimeMs: 70,
      });
      assert.deepEqual(resolver.calls, [[0, 'r1']], 'only the uncached side is resolved');
      const text = await handle.metricsText();
      const labels = edge(0, 1, 1, 1);
      const rx = assertHistogram(text, RX, labels, SECONDS_FAST_BUCKETS, [3 / 1000]);
      assert.equal(bucketCount(rx, '0.001'), 0);
      assert.equal(bucketCount(rx, '0.005'), 1);
      const inFlight = assertHistogram(text, IN_FLIGHT, labels, SECONDS_FAST_BUCKETS, [70 / 1000]);
      assert.equal(bucketCount(inFlight, '0.05'), 0);
      assert.equal(bucketCount(inFlight, '0.1'), 1);
      // rx does not observe size (only the TX path does).
      assertNoSeries(text, SIZE, TX);
    });

    it('zero (or absent) rx durations are observed as 0 samples', async () => {
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: () => 0 });
      aggregator.recordTransferRx({ stageId: 2, requestId: 'r', replicaId: 1 });
      aggregator.recordTransferRx({ stageId: 2, requestId: 'r', replicaId: 1, rxDecodeTimeMs: 0, rxInFlightTimeMs: 0 });
      const text = await handle.metricsText();
      const rx = assertHistogram(text, RX, edge(1, 0, 2, 1), SECONDS_FAST_BUCKETS, [0, 0]);
      assert.equal(bucketCount(rx, '0.001'), 2);
      assertHistogram(text, IN_FLIGHT, edge(1, 0, 2, 1), SECONDS_FAST_BUCKETS, [0, 0]);
    });

    it('each transfer is its own sample (no per-request sums), and the size is observed on the sending side only', async () => {
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: () => 0 });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 0, txTimeMs: 2 });
      aggregator.recordTransferRx({ stageId: 1, requestId: 'r', rxTransferBytes: 500, rxDecodeTimeMs: 1, rxInFlightTimeMs: 4 });
      aggregator.recordTransferRx({ stageId: 1, requestId: 'r', rxTransferBytes: 900, rxDecodeTimeMs: 2, rxInFlightTimeMs: 6 });
      const text = await handle.metricsText();
      const labels = edge(0, 0, 1, 0);
      assertHistogram(text, SIZE, labels, BYTES_BUCKETS, [0]);
      assertHistogram(text, TX, labels, SECONDS_FAST_BUCKETS, [2 / 1000]);
      assertHistogram(text, RX, labels, SECONDS_FAST_BUCKETS, [1 / 1000, 2 / 1000]);
      assertHistogram(text, IN_FLIGHT, labels, SECONDS_FAST_BUCKETS, [4 / 1000, 6 / 1000]);
    });
  });

  describe('replica resolution', () => {
    it('a missing resolver still emits when the cache supplies both sides', async () => {
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer });
      aggregator.cacheReplica(0, 'r', 1);
      aggregator.recordTransferRx({ stageId: 1, requestId: 'r', replicaId: 0, rxDecodeTimeMs: 20 });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 100, txTimeMs: 8 });
      // Stage 2's replica is unknown: this hop is skipped.
      aggregator.recordTransferRx({ stageId: 2, requestId: 'r', rxDecodeTimeMs: 20 });
      const text = await handle.metricsText();
      assertHistogram(text, RX, edge(0, 1, 1, 0), SECONDS_FAST_BUCKETS, [20 / 1000]);
      assertHistogram(text, TX, edge(0, 1, 1, 0), SECONDS_FAST_BUCKETS, [8 / 1000]);
      assertHistogram(text, SIZE, edge(0, 1, 1, 0), BYTES_BUCKETS, [100]);
      assert.equal(seriesOf(text, `${RX}_count`).length, 1);
    });

    it('the cache is per request, and a replica reported by RX is used by a later TX of the same request', async () => {
      const resolver = tableResolver({ a: [0, 0, 0], b: [1, 1, 1] });
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: resolver });
      aggregator.recordTransferRx({ stageId: 1, requestId: 'a', replicaId: 1, rxDecodeTimeMs: 1 }); // a: stage 1 → 1
      aggregator.recordTransferTx({ fromStage: 1, toStage: 2, requestId: 'a', sizeBytes: 1, txTimeMs: 2 });
      aggregator.recordTransferTx({ fromStage: 1, toStage: 2, requestId: 'b', sizeBytes: 1, txTimeMs: 3 });
      const text = await handle.metricsText();
      assertHistogram(text, TX, edge(1, 1, 2, 0), SECONDS_FAST_BUCKETS, [2 / 1000]); // a: cached 1, resolved 0
      assertHistogram(text, TX, edge(1, 1, 2, 1), SECONDS_FAST_BUCKETS, [3 / 1000]); // b: resolved 1, 1
      assertHistogram(text, RX, edge(0, 0, 1, 1), SECONDS_FAST_BUCKETS, [1 / 1000]);
    });

    it('onFinalizeRequest drops the request cache: later emits go back to the resolver', async () => {
      let binding = 1;
      const aggregator = new OrchestratorAggregator({
        transferEmitter: handle.transfer,
        replicaResolver: (stage) => (stage === 0 ? 0 : binding),
      });
      aggregator.recordTransferRx({ stageId: 1, requestId: 'r', replicaId: 1, rxDecodeTimeMs: 10 });
      binding = 0; // the orchestrator released the binding; the cache still says 1
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 1, txTimeMs: 5 });

      aggregator.onFinalizeRequest('r');
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 1, txTimeMs: 7 });

      const text = await handle.metricsText();
      assertHistogram(text, TX, edge(0, 0, 1, 1), SECONDS_FAST_BUCKETS, [5 / 1000]);
      assertHistogram(text, TX, edge(0, 0, 1, 0), SECONDS_FAST_BUCKETS, [7 / 1000]);
      assertHistogram(text, RX, edge(0, 0, 1, 1), SECONDS_FAST_BUCKETS, [10 / 1000]);
    });

    it('a fractional resolved replica is truncated, as int() does', async () => {
      const aggregator = new OrchestratorAggregator({ transferEmitter: handle.transfer, replicaResolver: (stage) => (stage === 0 ? 1.9 : 0) });
      aggregator.recordTransferTx({ fromStage: 0, toStage: 1, requestId: 'r', sizeBytes: 1, txTimeMs: 1 });
      const text = await handle.metricsText();
      assert.ok(histogramOf(text, TX, edge(0, 1, 1, 0)));
    });
  });
});
