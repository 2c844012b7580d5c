import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { OmniStatLogger } from '../../instrumentation/recorders/stat-logger';
import { createSchedulerStats, type KvOffloadStats, type SimpleKvOffloadStats } from '../../instrumentation/stats/types';
import type { OmniMetricsHandle } from '../../register';
import { KV_OFFLOAD_LOOKUP_ASYNC_DELAY_BUCKETS, KV_OFFLOAD_LOOKUP_SYNC_DELAY_BUCKETS } from '../../views/catalog/buckets';
import { declaredFamilyNames, sampleValue, seriesOf } from '../support/exposition';
import { assertHistogram, assertSample, register, stageLabels } from './harness';

/*
 * The offloading connectors' emit-site rules, each quoting the vLLM file and statement it follows
 * (vllm-project/vllm, the versions named in docs/families.md). Engines: pools [1, 2], so engine 0
 * is stage 0 / replica 0, engine 2 is stage 1 / replica 1.
 */

async function offloading(connector: 'offloading' | 'simple-cpu-offload'): Promise<OmniMetricsHandle> {
  return register({ stagePools: [1, 2], features: { kvConnector: connector } });
}

function report(handle: OmniMetricsHandle, engineIdx: number, stats: { kvOffloadStats?: KvOffloadStats; simpleKvOffloadStats?: SimpleKvOffloadStats }): void {
  (handle.statLogger as OmniStatLogger).record(createSchedulerStats(stats), null, engineIdx);
}

const FLAT_FAMILIES = [
  'vllm:kv_offload_load_bytes_total',
  'vllm:kv_offload_load_time_total',
  'vllm:kv_offload_store_bytes_total',
  'vllm:kv_offload_store_time_total',
  'vllm:kv_offload_allocation_failure_total',
  'vllm:kv_offload_stores_skipped_total',
];
const FLAT_HISTOGRAMS = [
  'vllm:kv_offload_load_size',
  'vllm:kv_offload_store_size',
  'vllm:kv_offload_lookup_sync_delay_seconds',
  'vllm:kv_offload_lookup_async_delay_seconds',
];

describe('recorders: offloading connectors, as vLLM emits them', () => {
  let handle: OmniMetricsHandle;
  afterEach(async () => {
    await handle.shutdown();
  });

  // offloading/metrics.py `_get_prometheus_metric`: `prom_metric = self.offloading_metrics.get(key)`,
  // `if prom_metric is None:` … `.labels(*(engine_labelvalues + list(labelvalues)))`.
  it('OffloadingConnector: a flat family has no series before an engine’s first payload entry for it (`_get_prometheus_metric` creates it then); the deprecated transfer_type ones exist from start', async () => {
    handle = await offloading('offloading');
    let text = await handle.metricsText();
    for (const family of [...FLAT_FAMILIES, ...FLAT_HISTOGRAMS.map((name) => `${name}_count`)]) assert.deepEqual(seriesOf(text, family), [], family);
    const declared = declaredFamilyNames(text);
    for (const family of [...FLAT_FAMILIES, ...FLAT_HISTOGRAMS]) assert.ok(declared.includes(family), `${family} is declared`);
    assertSample(text, 'vllm:kv_offload_total_bytes_total', stageLabels(1, 1, { transfer_type: 'CPU_to_GPU' }), 0);

    // A zero increment is a payload entry (`increase_counter` ran); an empty list is none.
    report(handle, 2, { kvOffloadStats: { storeBytes: 0, loadSize: [], lookupSyncDelaySeconds: [] } });
    text = await handle.metricsText();
    assert.deepEqual(seriesOf(text, 'vllm:kv_offload_store_bytes_total'), [stageLabels(1, 1)]);
    assertSample(text, 'vllm:kv_offload_store_bytes_total', stageLabels(1, 1), 0);
    assert.deepEqual(seriesOf(text, 'vllm:kv_offload_load_size_count'), []);
    assert.deepEqual(seriesOf(text, 'vllm:kv_offload_lookup_sync_delay_seconds_count'), []);
    assert.deepEqual(seriesOf(text, 'vllm:kv_offload_load_bytes_total'), []);
  });

  // offloading/metrics.py `get_connector_metric_definitions`: LOOKUP_SYNC_DELAY, LOOKUP_ASYNC_DELAY
  // (histograms with their own buckets) and ALLOCATION_FAILURE (a counter), no extra labels.
  it('OffloadingConnector: `kv_offload_lookup_sync_delay_seconds`, `kv_offload_lookup_async_delay_seconds` and `kv_offload_allocation_failure` record each lookup and failure of a report', async () => {
    handle = await offloading('offloading');
    report(handle, 2, { kvOffloadStats: { lookupSyncDelaySeconds: [0.00002, 0.3], lookupAsyncDelaySeconds: [12], allocationFailures: 2 } });
    report(handle, 0, { kvOffloadStats: { lookupAsyncDelaySeconds: [0.02] } });
    report(handle, 2, { kvOffloadStats: { allocationFailures: 1 } });
    const text = await handle.metricsText();
    assertHistogram(text, 'vllm:kv_offload_lookup_sync_delay_seconds', stageLabels(1, 1), KV_OFFLOAD_LOOKUP_SYNC_DELAY_BUCKETS, [0.00002, 0.3]);
    assertHistogram(text, 'vllm:kv_offload_lookup_async_delay_seconds', stageLabels(1, 1), KV_OFFLOAD_LOOKUP_ASYNC_DELAY_BUCKETS, [12]);
    assertHistogram(text, 'vllm:kv_offload_lookup_async_delay_seconds', stageLabels(0, 0), KV_OFFLOAD_LOOKUP_ASYNC_DELAY_BUCKETS, [0.02]);
    assertSample(text, 'vllm:kv_offload_allocation_failure_total', stageLabels(1, 1), 3);
    assert.deepEqual(seriesOf(text, 'vllm:kv_offload_allocation_failure_total'), [stageLabels(1, 1)], 'engine 0 never reported a failure');
    assert.deepEqual(
      seriesOf(text, 'vllm:kv_offload_lookup_async_delay_seconds_count'),
      [stageLabels(1, 1), stageLabels(0, 0)],
      'series in first-report order',
    );
  });

  it('a sleep-state-only update that carries offload stats records them, and leaves the step gauges as they were', async () => {
    handle = await offloading('offloading');
    const logger = handle.statLogger as OmniStatLogger;
    logger.record(createSchedulerStats({ numRunningReqs: 4, kvCacheUsage: 0.5 }), null, 2);
    logger.record(
      createSchedulerStats({ sleepStateOnly: true, sleepState: { sleeping: true, level: 1 }, kvOffloadStats: { storeBytes: 4096, allocationFailures: 1 } }),
      null,
      2,
    );
    const text = await handle.metricsText();
    assertSample(text, 'vllm:kv_offload_store_bytes_total', stageLabels(1, 1), 4096);
    assertSample(text, 'vllm:kv_offload_allocation_failure_total', stageLabels(1, 1), 1);
    assertSample(text, 'vllm:engine_sleep_state', stageLabels(1, 1, { sleep_state: 'weights_offloaded' }), 1);
    assertSample(text, 'vllm:num_requests_running', stageLabels(1, 1), 4);
    assertSample(text, 'vllm:kv_cache_usage_perc', stageLabels(1, 1), 0.5);
  });

  it('OffloadingConnector: whatever reports an engine sends, a flat series exists exactly for the engines that sent an entry for it, holding their sum', async () => {
    const entry = fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined });
    const reportArb = fc.record({
      engine: fc.integer({ min: 0, max: 2 }),
      loadBytes: entry,
      allocationFailures: entry,
      lookupSyncDelaySeconds: fc.option(fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { maxLength: 3 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(reportArb, { maxLength: 12 }), async (reports) => {
        handle = await offloading('offloading');
        try {
          for (const { engine, ...stats } of reports) report(handle, engine, { kvOffloadStats: stats });
          const text = await handle.metricsText();
          const labelsOf = [stageLabels(0, 0), stageLabels(1, 0), stageLabels(1, 1)];
          for (const [field, family] of [
            ['loadBytes', 'vllm:kv_offload_load_bytes_total'],
            ['allocationFailures', 'vllm:kv_offload_allocation_failure_total'],
          ] as const) {
            const reporting = [...new Set(reports.filter((r) => r[field] !== undefined).map((r) => r.engine))];
            assert.deepEqual(
              seriesOf(text, family),
              reporting.map((engine) => labelsOf[engine]),
            );
            for (const engine of reporting) {
              const sum = reports.filter((r) => r.engine === engine).reduce((total, r) => total + (r[field] ?? 0), 0);
              assert.equal(sampleValue(text, family, labelsOf[engine] ?? {}), sum);
            }
          }
          const lookups = [...new Set(reports.filter((r) => (r.lookupSyncDelaySeconds?.length ?? 0) > 0).map((r) => r.engine))];
          assert.deepEqual(
            seriesOf(text, 'vllm:kv_offload_lookup_sync_delay_seconds_count'),
            lookups.map((engine) => labelsOf[engine]),
          );
        } finally {
          await handle.shutdown();
        }
      }),
      { numRuns: 20 },
    );
    handle = await offloading('offloading');
  });

  // vllm/v1/simple_kv_offload/manager.py `get_stats` reports an outcome only `if delta > 0` and a
  // load phase only when it moved; tests/v1/simple_kv_offload (the connector's metrics tests):
  // `assert _values(stats, LOAD_BLOCKS) == {("issued",): 2}` after a load was only issued, and
  // "Deltas are per-interval: a second drain reports no new outcomes."
  it('SimpleCPUOffloadConnector: an outcome or load phase whose increment is 0 is not reported (`if delta > 0`), so it creates no series', async () => {
    handle = await offloading('simple-cpu-offload');
    report(handle, 2, {
      simpleKvOffloadStats: { saveOutcomes: { stored: 0, dropped_cpu_full: 2 }, loadBlocks: { issued: 2, completed: 0 }, usedBlocks: 0, pendingStoreBlocks: 0 },
    });
    let text = await handle.metricsText();
    assert.deepEqual(
      seriesOf(text, 'vllm:simple_kv_offload_save_outcomes_total').map((labels) => labels.outcome),
      ['dropped_cpu_full'],
    );
    assert.deepEqual(
      seriesOf(text, 'vllm:simple_kv_offload_load_blocks_total').map((labels) => labels.phase),
      ['issued'],
    );
    // Gauges are re-reported every drain, zero included.
    assertSample(text, 'vllm:simple_kv_offload_used_blocks', stageLabels(1, 1), 0);
    report(handle, 2, { simpleKvOffloadStats: { loadBlocks: { issued: 0, completed: 2 } } });
    text = await handle.metricsText();
    assertSample(text, 'vllm:simple_kv_offload_load_blocks_total', stageLabels(1, 1, { phase: 'issued' }), 2);
    assertSample(text, 'vllm:simple_kv_offload_load_blocks_total', stageLabels(1, 1, { phase: 'completed' }), 2);
  });
});
