import assert from 'node:assert/strict';
import type { OmniMetricsHandle } from '../../register';
import { BYTES_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { histogramOf, seriesOf } from '../support/exposition';
import { assertHistogram, assertNoSeries, bucketCount, edge, register } from './harness';

const SIZE = 'vllm:omni_transfer_size_bytes';
const TX = 'vllm:omni_transfer_tx_s';
const RX = 'vllm:omni_transfer_rx_s';
const IN_FLIGHT = 'vllm:omni_transfer_in_flight_s';

describe('recorders: OmniTransferMetrics (transfer families)', () => {
  let handle: OmniMetricsHandle;
  beforeEach(async () => {
    handle = await register({ stagePools: [2, 2, 1] });
  });
  afterEach(() => handle.shutdown());

  it('observes size in bytes as given, with Go-formatted byte bounds', async () => {
    handle.transfer.observeSize(0, 0, 1, 1, 5000);
    handle.transfer.observeSize(0, 0, 1, 1, 0);
    handle.transfer.observeSize(0, 0, 1, 1, 2_000_000);
    const text = await handle.metricsText();
    const size = assertHistogram(text, SIZE, edge(0, 0, 1, 1), BYTES_BUCKETS, [5000, 0, 2_000_000]);
    assert.deepEqual(size.buckets, [
      ['1024.0', 1],
      ['4096.0', 1],
      ['16384.0', 2],
      ['65536.0', 2],
      ['262144.0', 2],
      ['1.048576e+06', 2],
      ['4.194304e+06', 3],
      ['1.6777216e+07', 3],
      ['6.7108864e+07', 3],
      ['2.68435456e+08', 3],
      ['+Inf', 3],
    ]);
    assert.equal(size.sum, 2_005_000);
  });

  it('observes tx / rx / in-flight seconds as given; zero is a valid sample', async () => {
    handle.transfer.observeTxTime(0, 1, 1, 0, 0.0123);
    handle.transfer.observeTxTime(0, 1, 1, 0, 0);
    handle.transfer.observeRxTime(0, 1, 1, 0, 0);
    handle.transfer.observeInFlightTime(0, 1, 1, 0, 0.75);
    const text = await handle.metricsText();
    const labels = edge(0, 1, 1, 0);
    const tx = assertHistogram(text, TX, labels, SECONDS_FAST_BUCKETS, [0.0123, 0]);
    assert.equal(bucketCount(tx, '0.001'), 1);
    assert.equal(bucketCount(tx, '0.01'), 1);
    assert.equal(bucketCount(tx, '0.025'), 2);
    const rx = assertHistogram(text, RX, labels, SECONDS_FAST_BUCKETS, [0]);
    assert.equal(rx.sum, 0);
    assert.equal(bucketCount(rx, '0.001'), 1);
    const inFlight = assertHistogram(text, IN_FLIGHT, labels, SECONDS_FAST_BUCKETS, [0.75]);
    assert.equal(bucketCount(inFlight, '0.5'), 0);
    assert.equal(bucketCount(inFlight, '1.0'), 1);
  });

  it('keeps one series per physical hop, labelled with strings of the stage / replica numbers', async () => {
    handle.transfer.observeTxTime(0, 0, 1, 1, 0.002);
    handle.transfer.observeTxTime(0, 1, 1, 0, 0.004);
    handle.transfer.observeTxTime(1, 1, 2, 0, 0.03);
    handle.transfer.observeTxTime('0', '0', '1', '1', 0.006);
    const text = await handle.metricsText();
    assert.deepEqual(
      seriesOf(text, `${TX}_count`).map((labels) => `${labels.from_stage}/${labels.from_replica}->${labels.to_stage}/${labels.to_replica}`),
      ['0/0->1/1', '0/1->1/0', '1/1->2/0'],
    );
    assertHistogram(text, TX, edge(0, 0, 1, 1), SECONDS_FAST_BUCKETS, [0.002, 0.006]);
    assertHistogram(text, TX, edge(0, 1, 1, 0), SECONDS_FAST_BUCKETS, [0.004]);
    assertHistogram(text, TX, edge(1, 1, 2, 0), SECONDS_FAST_BUCKETS, [0.03]);
    assert.equal(histogramOf(text, TX, edge(1, 0, 2, 0)), undefined);
  });

  it('with logStats off, every method is a no-op (families declared, no series)', async () => {
    const off = await register({ stagePools: [2, 2], logStats: false });
    try {
      off.transfer.observeSize(0, 0, 1, 1, 4096);
      off.transfer.observeTxTime(0, 0, 1, 1, 0.01);
      off.transfer.observeRxTime(0, 0, 1, 1, 0.01);
      off.transfer.observeInFlightTime(0, 0, 1, 1, 0.01);
      const text = await off.metricsText();
      assertNoSeries(text, SIZE, TX, RX, IN_FLIGHT);
      for (const family of [SIZE, TX, RX, IN_FLIGHT]) assert.ok(text.includes(`# TYPE ${family} histogram`), family);
    } finally {
      await off.shutdown();
    }
  });
});
