import assert from 'node:assert/strict';
import type { OmniStatLogger } from '../../instrumentation/recorders/stat-logger';
import type { OmniMetricsHandle } from '../../register';
import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { RequestStatsBuilder } from '../../instrumentation/stats/request-stats-builder';
import {
  createPrefillStats,
  createSchedulerStats,
  SpecDecodingStats,
  type KvCacheEvictionEvent,
  type NixlKvConnectorStats,
  createFinishedRequestStats,
} from '../../instrumentation/stats/types';
import {
  INTER_TOKEN_LATENCY_BUCKETS,
  ITERATION_TOKENS_BUCKETS,
  KV_CACHE_RESIDENCY_BUCKETS,
  NIXL_BYTES_BUCKETS,
  NIXL_NUM_DESCRIPTORS_BUCKETS,
  NIXL_POST_TIME_BUCKETS,
  NIXL_XFER_TIME_BUCKETS,
  REQUEST_LATENCY_BUCKETS,
  REQUEST_NUM_PREEMPTIONS_BUCKETS,
  REQUEST_PARAMS_N_BUCKETS,
  TIME_TO_FIRST_TOKEN_BUCKETS,
} from '../../views/catalog/buckets';
import { declaredFamilyNames, parseSamples, sampleValue, seriesOf, type Labels } from '../support/exposition';
import { assertHistogram, assertNoSeries, assertSample, bucketCount, register, stageLabels } from './harness';
import { expectPrinted } from '../support/console-capture';
import { withWarnings } from '../views/store/store-fixture';

/** vLLM's `build_1_2_5_buckets(4096)`, written out (the default max_model_len). */
const REQUEST_TOKEN_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000];

const FEATURES = {
  specDecode: { numSpeculativeTokens: 3 },
  kvConnector: 'nixl' as const,
  lora: { maxLoras: 2 },
  kvCacheMetrics: true,
  corruptedRequests: true,
};

const CACHE_CONFIG = {
  block_size: 16,
  enable_prefix_caching: true,
  num_gpu_blocks: null,
  gpu_memory_utilization: 0.9,
  swap_space: 4,
  kv_offloading_size: null,
  cache_dtype: 'auto',
};

function cacheCounts(queries: number, hits: number) {
  return { reset: false, requests: 1, queries, hits, preemptedRequests: 0, preemptedQueries: 0, preemptedHits: 0 };
}

function nixl(partial: Partial<NixlKvConnectorStats>): NixlKvConnectorStats {
  return {
    transferDuration: [],
    postDuration: [],
    bytesTransferred: [],
    numDescriptors: [],
    numFailedTransfers: [],
    numFailedNotifications: [],
    numKvExpiredReqs: [],
    ...partial,
  };
}

const finished = createFinishedRequestStats;

// ---- the two polls of one replica, with every field set ----

const spec1 = new SpecDecodingStats(3);
spec1.observeDraft(3, 2); // positions 0, 1 accepted
spec1.observeDraft(3, 0);
spec1.observeDraft(3, 3); // positions 0, 1, 2 accepted
const spec2 = new SpecDecodingStats(3);
spec2.observeDraft(2, 1); // position 0 accepted

const evictions1: KvCacheEvictionEvent[] = [
  { lifetimeSeconds: 12, idleSeconds: 0.5, reuseGapsSeconds: [0.01, 0.3] },
  { lifetimeSeconds: 0.0015, idleSeconds: 0.001, reuseGapsSeconds: [] },
];
const evictions2: KvCacheEvictionEvent[] = [{ lifetimeSeconds: 2000, idleSeconds: 0, reuseGapsSeconds: [1800] }];

const sched1 = createSchedulerStats({
  numRunningReqs: 3,
  numWaitingReqs: 4,
  numSkippedWaitingReqs: 2,
  kvCacheUsage: 0.25,
  prefixCacheStats: cacheCounts(100, 40),
  connectorPrefixCacheStats: cacheCounts(30, 12),
  mmCacheStats: { reset: false, requests: 1, queries: 5, hits: 2 },
  specDecodingStats: spec1,
  kvConnectorStats: nixl({
    transferDuration: [0.004, 0.2],
    postDuration: [0.0005],
    bytesTransferred: [3000, 5_000_000],
    numDescriptors: [15],
    numFailedTransfers: [1],
    numKvExpiredReqs: [1, 1],
  }),
  kvCacheEvictionEvents: evictions1,
  runningLoraAdapters: { a: 1, b: 2 },
  waitingLoraAdapters: { c: 1 },
  perfStats: { numFlopsPerGpu: 1e12, numReadBytesPerGpu: 2e9, numWriteBytesPerGpu: 3e8 },
});

const sched2 = createSchedulerStats({
  numRunningReqs: 5,
  numWaitingReqs: 1,
  numSkippedWaitingReqs: 3,
  kvCacheUsage: 0.5,
  prefixCacheStats: cacheCounts(50, 10),
  connectorPrefixCacheStats: cacheCounts(10, 3),
  mmCacheStats: { reset: false, requests: 1, queries: 1, hits: 1 },
  specDecodingStats: spec2,
  kvConnectorStats: nixl({
    transferDuration: [1.5],
    postDuration: [0.02, 6],
    bytesTransferred: [2048],
    numDescriptors: [100000],
    numFailedTransfers: [1, 1],
    numFailedNotifications: [1],
  }),
  kvCacheEvictionEvents: evictions2,
  runningLoraAdapters: { a: 1 },
  waitingLoraAdapters: {},
  // All three zero: vLLM skips the perf counters for this poll.
  perfStats: { numFlopsPerGpu: 0, numReadBytesPerGpu: 0, numWriteBytesPerGpu: 0 },
});

const iter1 = new IterationStats({ iterationTimestamp: 1000.75 });
// 20 prompt tokens: 5 local cache hits, 3 from the KV connector, 12 computed.
iter1.promptTokenStats.updateFromOutput(createPrefillStats({ numPromptTokens: 20, numLocalCachedTokens: 5, numExternalCachedTokens: 3 }));
iter1.numGenerationTokens = 1;
iter1.timeToFirstTokensIter.push(0.75);

const requestA = finished({
  finishReason: 'stop',
  e2eLatency: 2.5,
  queuedTime: 0.5,
  prefillTime: 0.5,
  inferenceTime: 1.25,
  decodeTime: 0.75,
  meanTimePerOutputToken: 0.25,
  numPromptTokens: 20,
  numGenerationTokens: 4,
  numPreemptions: 1,
  maxTokensParam: 16,
  numCachedTokens: 8,
});
const requestB = finished({
  finishReason: 'length',
  e2eLatency: 0.2,
  queuedTime: 0,
  prefillTime: 0.1,
  inferenceTime: 0.1,
  decodeTime: 0,
  meanTimePerOutputToken: 0,
  numPromptTokens: 100,
  numGenerationTokens: 1,
  numPreemptions: 0,
  maxTokensParam: null, // not observed on request_params_max_tokens
  numCachedTokens: 0,
});

const iter2 = new IterationStats({ iterationTimestamp: 1002.5 });
iter2.promptTokenStats.updateFromOutput(createPrefillStats({ numPromptTokens: 100 }));
iter2.numGenerationTokens = 7;
iter2.timeToFirstTokensIter.push(0.004);
iter2.interTokenLatenciesIter.push(0.25, 0.5, 0.01);
iter2.numPreemptedReqs = 2;
iter2.numCorruptedReqs = 1;
iter2.finishedRequests.push(requestA, requestB);
iter2.maxNumGenerationTokensIter.push(4, 1);
iter2.nParamsIter.push(1, 3);

describe('recorders: OmniStatLogger (upstream vllm:* families)', function () {
  describe('every feature group on: exact values after two polls of one replica', () => {
    // Pools [1, 2]: engine 0 = (0, 0), engine 1 = (1, 0), engine 2 = (1, 1). The replica under test is engine 1.
    const ENGINE = 1;
    const L = stageLabels(1, 0);
    const checked = new Set<string>();
    let handle: OmniMetricsHandle;
    let text: string;
    let wallBefore: number;
    let wallAfter: number;

    const sample = (family: string, labels: Labels, expected: number): void => {
      checked.add(family);
      assertSample(text, family, labels, expected);
    };
    const histogram = (family: string, labels: Labels, bounds: readonly number[], values: readonly number[]) => {
      checked.add(family);
      return assertHistogram(text, family, labels, bounds, values);
    };

    before(async () => {
      handle = await register({ stagePools: [1, 2], features: FEATURES, showHiddenMetrics: true, cacheConfig: CACHE_CONFIG });
      const logger = handle.statLogger as OmniStatLogger;
      wallBefore = Date.now() / 1000;
      logger.record(sched1, iter1, ENGINE);
      logger.record(sched2, iter2, ENGINE);
      // Engine 0: one poll whose perf stats are all zero, so its perf counters stay at zero.
      logger.record(createSchedulerStats({ numRunningReqs: 9, perfStats: { numFlopsPerGpu: 0, numReadBytesPerGpu: 0, numWriteBytesPerGpu: 0 } }), null, 0);
      wallAfter = Date.now() / 1000;
      text = await handle.metricsText();
    });
    after(() => handle.shutdown());

    it('scheduler gauges keep the last poll: running, waiting = capacity + deferred, by reason, KV usage', () => {
      sample('vllm:num_requests_running', L, 5);
      sample('vllm:num_requests_waiting', L, 1 + 3);
      sample('vllm:num_requests_waiting_by_reason', { ...L, reason: 'capacity' }, 1);
      sample('vllm:num_requests_waiting_by_reason', { ...L, reason: 'deferred' }, 3);
      sample('vllm:kv_cache_usage_perc', L, 0.5);
      sample('vllm:num_requests_running', stageLabels(0, 0), 9);
      sample('vllm:num_requests_running', stageLabels(1, 1), 0);
      assert.equal(seriesOf(text, 'vllm:num_requests_running').length, 3, 'engine 2 never recorded: its series exists since registration, at 0');
    });

    it('the engine is awake from registration, as vLLM reports it at engine start', () => {
      sample('vllm:engine_sleep_state', { ...L, sleep_state: 'awake' }, 1);
      sample('vllm:engine_sleep_state', { ...L, sleep_state: 'weights_offloaded' }, 0);
      sample('vllm:engine_sleep_state', { ...L, sleep_state: 'discard_all' }, 0);
    });

    it('cache counters are cumulative across the two polls', () => {
      sample('vllm:prefix_cache_queries_total', L, 100 + 50);
      sample('vllm:prefix_cache_hits_total', L, 40 + 10);
      sample('vllm:external_prefix_cache_queries_total', L, 30 + 10);
      sample('vllm:external_prefix_cache_hits_total', L, 12 + 3);
      sample('vllm:mm_cache_queries_total', L, 5 + 1);
      sample('vllm:mm_cache_hits_total', L, 2 + 1);
    });

    it('token counters: prompt, by source, cached, generation; preemptions; corrupted requests', () => {
      sample('vllm:prompt_tokens_total', L, 20 + 100);
      sample('vllm:prompt_tokens_by_source_total', { ...L, source: 'local_compute' }, 12 + 100);
      sample('vllm:prompt_tokens_by_source_total', { ...L, source: 'local_cache_hit' }, 5);
      sample('vllm:prompt_tokens_by_source_total', { ...L, source: 'external_kv_transfer' }, 3);
      sample('vllm:prompt_tokens_cached_total', L, 5 + 3);
      sample('vllm:generation_tokens_total', L, 1 + 7);
      sample('vllm:num_preemptions_total', L, 2);
      sample('vllm:corrupted_requests_total', L, 1);
    });

    it('request_success counts finished requests by reason', () => {
      sample('vllm:request_success_total', { ...L, finished_reason: 'stop' }, 1);
      sample('vllm:request_success_total', { ...L, finished_reason: 'length' }, 1);
    });

    it('iteration_tokens_total observes computed prompt + generation once per record (cache hits and KV transfers excluded)', () => {
      // iter1: 20 prompt tokens of which 5 local cache hits and 3 transferred → 12 computed, + 1 generated.
      const h = histogram('vllm:iteration_tokens_total', L, ITERATION_TOKENS_BUCKETS, [12 + 1, 100 + 7]);
      assert.equal(bucketCount(h, '8.0'), 0);
      assert.equal(bucketCount(h, '16.0'), 1);
      assert.equal(bucketCount(h, '64.0'), 1);
      assert.equal(bucketCount(h, '128.0'), 2);
      assert.equal(h.sum, 120);
      // Per engine: the sum equals the locally computed prompt tokens plus the generated ones.
      const computed = sampleValue(text, 'vllm:prompt_tokens_by_source_total', { ...L, source: 'local_compute' });
      const generated = sampleValue(text, 'vllm:generation_tokens_total', L);
      assert.equal(computed, 112);
      assert.equal(h.sum, (computed ?? NaN) + (generated ?? NaN));
    });

    it('TTFT and inter-token latency (and the hidden time_per_output_token) land in their buckets', () => {
      const ttft = histogram('vllm:time_to_first_token_seconds', L, TIME_TO_FIRST_TOKEN_BUCKETS, [0.75, 0.004]);
      assert.equal(bucketCount(ttft, '0.001'), 0);
      assert.equal(bucketCount(ttft, '0.005'), 1);
      assert.equal(bucketCount(ttft, '0.5'), 1);
      assert.equal(bucketCount(ttft, '0.75'), 2);
      const itl = histogram('vllm:inter_token_latency_seconds', L, INTER_TOKEN_LATENCY_BUCKETS, [0.25, 0.5, 0.01]);
      assert.equal(bucketCount(itl, '0.01'), 1);
      assert.equal(bucketCount(itl, '0.2'), 1);
      assert.equal(bucketCount(itl, '0.3'), 2);
      assert.equal(bucketCount(itl, '0.4'), 2);
      assert.equal(bucketCount(itl, '0.5'), 3);
      assert.equal(itl.count, 3, 'one observation per non-first output');
      histogram('vllm:time_per_output_token_seconds', L, INTER_TOKEN_LATENCY_BUCKETS, [0.25, 0.5, 0.01]);
    });

    it('per-request latency histograms: e2e, queue, prefill, decode, inference, TPOT', () => {
      const e2e = histogram('vllm:e2e_request_latency_seconds', L, REQUEST_LATENCY_BUCKETS, [2.5, 0.2]);
      assert.equal(bucketCount(e2e, '0.3'), 1);
      assert.equal(bucketCount(e2e, '2.0'), 1);
      assert.equal(bucketCount(e2e, '2.5'), 2);
      assert.equal(e2e.sum, 2.5 + 0.2);
      const queue = histogram('vllm:request_queue_time_seconds', L, REQUEST_LATENCY_BUCKETS, [0.5, 0]);
      assert.equal(bucketCount(queue, '0.3'), 1);
      assert.equal(bucketCount(queue, '0.5'), 2);
      const prefill = histogram('vllm:request_prefill_time_seconds', L, REQUEST_LATENCY_BUCKETS, [0.5, 0.1]);
      assert.equal(prefill.sum, 0.5 + 0.1);
      const decode = histogram('vllm:request_decode_time_seconds', L, REQUEST_LATENCY_BUCKETS, [0.75, 0]);
      assert.equal(bucketCount(decode, '0.5'), 1);
      assert.equal(bucketCount(decode, '0.8'), 2);
      const inference = histogram('vllm:request_inference_time_seconds', L, REQUEST_LATENCY_BUCKETS, [1.25, 0.1]);
      assert.equal(bucketCount(inference, '1.0'), 1);
      assert.equal(bucketCount(inference, '1.5'), 2);
      const tpot = histogram('vllm:request_time_per_output_token_seconds', L, INTER_TOKEN_LATENCY_BUCKETS, [0.25, 0]);
      assert.equal(bucketCount(tpot, '0.01'), 1);
      assert.equal(bucketCount(tpot, '0.3'), 2);
    });

    it('per-request token and parameter histograms', () => {
      histogram('vllm:request_prompt_tokens', L, REQUEST_TOKEN_BUCKETS, [20, 100]);
      histogram('vllm:request_generation_tokens', L, REQUEST_TOKEN_BUCKETS, [4, 1]);
      // prompt - max(cached, 0): 20 - 8, 100 - 0.
      const kv = histogram('vllm:request_prefill_kv_computed_tokens', L, REQUEST_TOKEN_BUCKETS, [12, 100]);
      assert.equal(bucketCount(kv, '10.0'), 0);
      assert.equal(bucketCount(kv, '20.0'), 1);
      assert.equal(bucketCount(kv, '100.0'), 2);
      histogram('vllm:request_num_preemptions', L, REQUEST_NUM_PREEMPTIONS_BUCKETS, [1, 0]);
      histogram('vllm:request_max_num_generation_tokens', L, REQUEST_TOKEN_BUCKETS, [4, 1]);
      const n = histogram('vllm:request_params_n', L, REQUEST_PARAMS_N_BUCKETS, [1, 3]);
      assert.deepEqual(n.buckets.slice(0, 3), [
        ['1.0', 1],
        ['2.0', 1],
        ['5.0', 2],
      ]);
      const maxTokens = histogram('vllm:request_params_max_tokens', L, REQUEST_TOKEN_BUCKETS, [16]);
      assert.equal(maxTokens.count, 1, 'a request without max_tokens is not observed');
    });

    it('spec decoding counters, with one counter per draft position', () => {
      sample('vllm:spec_decode_num_drafts_total', L, 3 + 1);
      sample('vllm:spec_decode_num_draft_tokens_total', L, 9 + 2);
      sample('vllm:spec_decode_num_accepted_tokens_total', L, 5 + 1);
      sample('vllm:spec_decode_num_accepted_tokens_per_pos_total', { ...L, position: '0' }, 2 + 1);
      sample('vllm:spec_decode_num_accepted_tokens_per_pos_total', { ...L, position: '1' }, 2 + 0);
      sample('vllm:spec_decode_num_accepted_tokens_per_pos_total', { ...L, position: '2' }, 1 + 0);
      assert.deepEqual(
        seriesOf(text, 'vllm:spec_decode_num_accepted_tokens_per_pos_total')
          .filter((labels) => labels.stage === L.stage && labels.replica === L.replica)
          .map((labels) => labels.position),
        ['0', '1', '2'],
      );
    });

    it('NIXL histograms and counters: one observation / increment per list entry', () => {
      const xfer = histogram('vllm:nixl_xfer_time_seconds', L, NIXL_XFER_TIME_BUCKETS, [0.004, 0.2, 1.5]);
      assert.equal(bucketCount(xfer, '0.005'), 1);
      assert.equal(bucketCount(xfer, '0.2'), 2);
      assert.equal(bucketCount(xfer, '5.0'), 3);
      histogram('vllm:nixl_post_time_seconds', L, NIXL_POST_TIME_BUCKETS, [0.0005, 0.02, 6]);
      const bytes = histogram('vllm:nixl_bytes_transferred', L, NIXL_BYTES_BUCKETS, [3000, 5_000_000, 2048]);
      assert.equal(bucketCount(bytes, '2048.0'), 1);
      assert.equal(bucketCount(bytes, '8192.0'), 2);
      assert.equal(bucketCount(bytes, '2.097152e+06'), 2);
      assert.equal(bucketCount(bytes, '8.388608e+06'), 3);
      histogram('vllm:nixl_num_descriptors', L, NIXL_NUM_DESCRIPTORS_BUCKETS, [15, 100000]);
      sample('vllm:nixl_num_failed_transfers_total', L, 1 + 2);
      sample('vllm:nixl_num_failed_notifications_total', L, 1);
      sample('vllm:nixl_num_kv_expired_reqs_total', L, 2);
    });

    it('KV-block residency histograms, one reuse-gap observation per gap', () => {
      const lifetime = histogram('vllm:kv_block_lifetime_seconds', L, KV_CACHE_RESIDENCY_BUCKETS, [12, 0.0015, 2000]);
      assert.equal(bucketCount(lifetime, '1800.0'), 2, '2000 s is above the last bound');
      assert.equal(bucketCount(lifetime, '+Inf'), 3);
      histogram('vllm:kv_block_idle_before_evict_seconds', L, KV_CACHE_RESIDENCY_BUCKETS, [0.5, 0.001, 0]);
      histogram('vllm:kv_block_reuse_gap_seconds', L, KV_CACHE_RESIDENCY_BUCKETS, [0.01, 0.3, 1800]);
    });

    it('LoRA info: one series per adapter set, labelled max_lora / running / waiting only, valued with the wall clock', () => {
      checked.add('vllm:lora_requests_info');
      const series = seriesOf(text, 'vllm:lora_requests_info');
      assert.deepEqual(series, [
        { max_lora: '2', running_lora_adapters: 'a,b', waiting_lora_adapters: 'c' }, // engine 1, first poll
        { max_lora: '2', running_lora_adapters: 'a', waiting_lora_adapters: '' }, // engine 1, second poll
        { max_lora: '2', running_lora_adapters: '', waiting_lora_adapters: '' }, // engine 0: no adapters
      ]);
      for (const labels of series) {
        const value = parseSamples(text).find(
          (s) => s.name === 'vllm:lora_requests_info' && s.labels.running_lora_adapters === labels.running_lora_adapters,
        )?.value;
        assert.ok(
          value !== undefined && value >= wallBefore - 0.001 && value <= wallAfter + 0.001,
          `time ${String(value)} within [${wallBefore}, ${wallAfter}]`,
        );
      }
    });

    it('perf counters: recorded when any value is non-zero, left as they are when all three are zero', () => {
      sample('vllm:estimated_flops_per_gpu_total', L, 1e12);
      sample('vllm:estimated_read_bytes_per_gpu_total', L, 2e9);
      sample('vllm:estimated_write_bytes_per_gpu_total', L, 3e8);
      // prometheus_client's floatToGoString: repr '1000000000000.0' has its dot at 13, so 'e+' + '12'.
      assert.ok(text.includes('vllm:estimated_flops_per_gpu_total{model_name="m",replica="0",stage="1"} 1e+12'));
      // Engine 0 only ever sent zeros: its series stay at the zero they were created with.
      for (const family of ['vllm:estimated_flops_per_gpu_total', 'vllm:estimated_read_bytes_per_gpu_total', 'vllm:estimated_write_bytes_per_gpu_total']) {
        assertSample(text, family, stageLabels(0, 0), 0);
      }
    });

    it('cache_config_info: 1 for every engine, labelled with the config fields as Python str() prints them', () => {
      checked.add('vllm:cache_config_info');
      // swap_space is a float field in vLLM: Python prints 4.0 where JavaScript holds 4.
      const config = {
        block_size: '16',
        cache_dtype: 'auto',
        enable_prefix_caching: 'True',
        gpu_memory_utilization: '0.9',
        kv_offloading_size: 'None',
        num_gpu_blocks: 'None',
        swap_space: '4.0',
      };
      for (const [stage, replica] of [
        ['0', '0'],
        ['1', '0'],
        ['1', '1'],
      ]) {
        assertSample(text, 'vllm:cache_config_info', { ...config, stage: stage as string, replica: replica as string }, 1);
      }
      assert.equal(seriesOf(text, 'vllm:cache_config_info').length, 3);
    });

    it('hidden (deprecated) names mirror their replacements', () => {
      sample('vllm:gpu_cache_usage_perc', L, 0.5);
      sample('vllm:gpu_prefix_cache_queries_total', L, 150);
      sample('vllm:gpu_prefix_cache_hits_total', L, 50);
      // time_per_output_token_seconds: asserted with the ITL above.
    });

    it('admission_rejections_total: HELP and TYPE, no series until the frontend rejects a request', () => {
      checked.add('vllm:admission_rejections_total');
      assert.ok(text.includes('# TYPE vllm:admission_rejections_total counter\n'));
      assert.equal(seriesOf(text, 'vllm:admission_rejections_total').length, 0);
    });

    it('no series carries an engine label', () => {
      assert.ok(!text.includes('engine='));
    });

    it('every registered upstream family was asserted with exact values above', () => {
      const upstream = handle.catalog.families.filter((f) => f.key.startsWith('upstream.')).map((f) => f.name);
      assert.equal(upstream.length, 58, 'core + every feature group + hidden');
      assert.deepEqual(
        upstream.filter((name) => !checked.has(name)),
        [],
      );
    });
  });

  describe('RequestStatsBuilder events → recorded intervals', () => {
    let handle: OmniMetricsHandle;
    after(() => handle.shutdown());

    it('one request: TTFT / e2e on the wall clock, the other intervals on the engine clock', async () => {
      handle = await register({ stagePools: [1] });
      const logger = handle.statLogger as OmniStatLogger;
      const builder = new RequestStatsBuilder();
      builder.arrived('r', { arrivalTime: 1000, promptTokens: 20, maxTokens: 16 });
      builder.queued('r', 10);
      builder.scheduled('r', 10.5, { cachedTokens: 0 });
      builder.startIteration(1000.75);
      builder.newTokens('r', 1, 11);
      logger.record(builder.takeSchedulerStats(), builder.takeIterationStats(), 0);
      builder.startIteration(1002.5);
      builder.newTokens('r', 2, 11.25);
      builder.newTokens('r', 1, 11.75);
      builder.finished('r', 'stop');
      logger.record(null, builder.takeIterationStats(), 0);
      const text = await handle.metricsText();
      const L = stageLabels(0, 0);

      assertHistogram(text, 'vllm:time_to_first_token_seconds', L, TIME_TO_FIRST_TOKEN_BUCKETS, [1000.75 - 1000]);
      assertHistogram(text, 'vllm:inter_token_latency_seconds', L, INTER_TOKEN_LATENCY_BUCKETS, [11.25 - 11, 11.75 - 11.25]);
      assertHistogram(text, 'vllm:e2e_request_latency_seconds', L, REQUEST_LATENCY_BUCKETS, [1002.5 - 1000]);
      assertHistogram(text, 'vllm:request_queue_time_seconds', L, REQUEST_LATENCY_BUCKETS, [10.5 - 10]);
      assertHistogram(text, 'vllm:request_prefill_time_seconds', L, REQUEST_LATENCY_BUCKETS, [11 - 10.5]);
      assertHistogram(text, 'vllm:request_decode_time_seconds', L, REQUEST_LATENCY_BUCKETS, [11.75 - 11]);
      assertHistogram(text, 'vllm:request_inference_time_seconds', L, REQUEST_LATENCY_BUCKETS, [11.75 - 10.5]);
      // 4 tokens: decode time over the 3 tokens after the first.
      assertHistogram(text, 'vllm:request_time_per_output_token_seconds', L, INTER_TOKEN_LATENCY_BUCKETS, [(11.75 - 11) / 3]);
      assertHistogram(text, 'vllm:iteration_tokens_total', L, ITERATION_TOKENS_BUCKETS, [20 + 1, 0 + 3]);
      assertHistogram(text, 'vllm:request_generation_tokens', L, REQUEST_TOKEN_BUCKETS, [4]);
      assertHistogram(text, 'vllm:request_params_max_tokens', L, REQUEST_TOKEN_BUCKETS, [16]);
      assertSample(text, 'vllm:prompt_tokens_total', L, 20);
      assertSample(text, 'vllm:generation_tokens_total', L, 4);
      assertSample(text, 'vllm:request_success_total', { ...L, finished_reason: 'stop' }, 1);
      // The scheduler poll saw the request running.
      assertSample(text, 'vllm:num_requests_running', L, 1);
      assertSample(text, 'vllm:prefix_cache_queries_total', L, 20);
      assertSample(text, 'vllm:prefix_cache_hits_total', L, 0);
    });
  });

  describe('sleep state', () => {
    let handle: OmniMetricsHandle;
    let logger: OmniStatLogger;
    beforeEach(async () => {
      handle = await register({ stagePools: [1, 2] });
      logger = handle.statLogger as OmniStatLogger;
    });
    afterEach(() => handle.shutdown());

    async function sleepStates(stage: number, replica: number): Promise<[number | undefined, number | undefined, number | undefined]> {
      const text = await handle.metricsText();
      const value = (state: string) =>
        parseSamples(text).find(
          (s) =>
            s.name === 'vllm:engine_sleep_state' && s.labels.stage === String(stage) && s.labels.replica === String(replica) && s.labels.sleep_state === state,
        )?.value;
      return [value('awake'), value('weights_offloaded'), value('discard_all')];
    }

    it('recordSleepState(true, 1) offloads weights on every engine; level 2 discards all on one', async () => {
      logger.record(createSchedulerStats(), null, 0);
      assert.deepEqual(await sleepStates(0, 0), [1, 0, 0]);
      assert.deepEqual(await sleepStates(1, 1), [1, 0, 0], 'engine 2 never recorded: awake since registration');

      logger.recordSleepState(true, 1);
      assert.deepEqual(await sleepStates(0, 0), [0, 1, 0]);
      assert.deepEqual(await sleepStates(1, 0), [0, 1, 0]);
      assert.deepEqual(await sleepStates(1, 1), [0, 1, 0]);

      logger.recordSleepState(true, 2, 2);
      assert.deepEqual(await sleepStates(1, 1), [0, 0, 1]);
      assert.deepEqual(await sleepStates(1, 0), [0, 1, 0], 'other engines unchanged');

      logger.recordSleepState(false, 0, 1);
      assert.deepEqual(await sleepStates(1, 0), [1, 0, 0]);

      // A later first poll of an engine does not reset an explicit state to awake.
      logger.record(createSchedulerStats(), null, 2);
      assert.deepEqual(await sleepStates(1, 1), [0, 0, 1]);
      await expectPrinted(['omni-otel-metrics: engine index 99 is not in the stage/replica map; its stats are dropped'], () =>
        assert.doesNotThrow(() => logger.recordSleepState(true, 1, 99)),
      );
    });

    it('a sleep state carried by the scheduler stats is applied after the default', async () => {
      logger.record(createSchedulerStats({ sleepState: { sleeping: true, level: 1 } }), null, 1);
      assert.deepEqual(await sleepStates(1, 0), [0, 1, 0]);
      logger.record(createSchedulerStats({ sleepState: { sleeping: false, level: 0 } }), null, 1);
      assert.deepEqual(await sleepStates(1, 0), [1, 0, 0]);
    });

    it('a sleep-state-only update changes the sleep state and nothing else', async () => {
      logger.record(createSchedulerStats({ numRunningReqs: 5, numWaitingReqs: 2, kvCacheUsage: 0.75, prefixCacheStats: cacheCounts(10, 4) }), null, 0);
      logger.record(createSchedulerStats({ sleepStateOnly: true, sleepState: { sleeping: true, level: 2 } }), null, 0);
      assert.deepEqual(await sleepStates(0, 0), [0, 0, 1]);
      const text = await handle.metricsText();
      const L = stageLabels(0, 0);
      assertSample(text, 'vllm:num_requests_running', L, 5);
      assertSample(text, 'vllm:num_requests_waiting', L, 2);
      assertSample(text, 'vllm:kv_cache_usage_perc', L, 0.75);
      assertSample(text, 'vllm:prefix_cache_queries_total', L, 10);
    });
  });

  describe('robustness and conditional groups off', () => {
    let handle: OmniMetricsHandle;
    before(async () => {
      handle = await register({ stagePools: [1, 2] });
    });
    after(() => handle.shutdown());

    it('an unknown engine index records nothing and does not throw', async () => {
      const logger = handle.statLogger as OmniStatLogger;
      const textBefore = await handle.metricsText();
      await expectPrinted(
        [3, 99, -1, 1.5, Number.NaN].map((engine) => `omni-otel-metrics: engine index ${engine} is not in the stage/replica map; its stats are dropped`),
        () => {
          for (const engine of [3, 99, -1, 1.5, Number.NaN]) assert.doesNotThrow(() => logger.record(sched1, iter2, engine));
        },
      );
      assert.equal(await handle.metricsText(), textBefore);
      assert.equal(seriesOf(textBefore, 'vllm:num_requests_running').length, 3, 'the three engines of the map, and no other');
    });

    it('perf counters are recorded when any one of the three values is non-zero', async () => {
      const logger = handle.statLogger as OmniStatLogger;
      logger.record(createSchedulerStats({ perfStats: { numFlopsPerGpu: 7, numReadBytesPerGpu: 0, numWriteBytesPerGpu: 0 } }), null, 0);
      logger.record(createSchedulerStats({ perfStats: { numFlopsPerGpu: 0, numReadBytesPerGpu: 0, numWriteBytesPerGpu: 5 } }), null, 0);
      logger.record(createSchedulerStats({ perfStats: { numFlopsPerGpu: 0, numReadBytesPerGpu: 4, numWriteBytesPerGpu: 0 } }), null, 0);
      logger.record(createSchedulerStats({ perfStats: null }), null, 0);
      const text = await handle.metricsText();
      const L = stageLabels(0, 0);
      assertSample(text, 'vllm:estimated_flops_per_gpu_total', L, 7);
      assertSample(text, 'vllm:estimated_read_bytes_per_gpu_total', L, 4);
      assertSample(text, 'vllm:estimated_write_bytes_per_gpu_total', L, 5);
    });

    it("a falsy max_tokens (0 or null) is not observed, as vLLM's `if max_tokens_param`", async () => {
      const logger = handle.statLogger as OmniStatLogger;
      const iteration = new IterationStats({ iterationTimestamp: 1 });
      iteration.finishedRequests.push(
        finished({ finishReason: 'stop', maxTokensParam: 0 }),
        finished({ finishReason: 'stop', maxTokensParam: null }),
        finished({ finishReason: 'stop', maxTokensParam: 3 }),
      );
      logger.record(null, iteration, 1);
      const text = await handle.metricsText();
      assertHistogram(text, 'vllm:request_params_max_tokens', stageLabels(1, 0), REQUEST_TOKEN_BUCKETS, [3]);
      assertSample(text, 'vllm:request_success_total', stageLabels(1, 0, { finished_reason: 'stop' }), 3);
    });

    it('without the features, data for spec decode / NIXL / residency / LoRA / corrupted / hidden is dropped silently', async () => {
      const logger = handle.statLogger as OmniStatLogger;
      assert.doesNotThrow(() => logger.record(sched1, iter2, 2));
      const text = await handle.metricsText();
      const declared = declaredFamilyNames(text);
      for (const family of [
        'vllm:spec_decode_num_drafts_total',
        'vllm:spec_decode_num_accepted_tokens_per_pos_total',
        'vllm:nixl_xfer_time_seconds',
        'vllm:nixl_num_failed_transfers_total',
        'vllm:kv_block_lifetime_seconds',
        'vllm:lora_requests_info',
        'vllm:corrupted_requests_total',
        'vllm:gpu_cache_usage_perc',
        'vllm:gpu_prefix_cache_queries_total',
        'vllm:time_per_output_token_seconds',
      ]) {
        assert.ok(!declared.includes(family), `${family} not registered`);
        assertNoSeries(text, family);
      }
      // The core families did record this poll.
      const L = stageLabels(1, 1);
      assertSample(text, 'vllm:num_requests_running', L, 3);
      assertSample(text, 'vllm:estimated_flops_per_gpu_total', L, 1e12);
      // No cacheConfig option: the family is declared without series.
      assert.ok(declared.includes('vllm:cache_config_info'));
      assert.deepEqual(seriesOf(text, 'vllm:cache_config_info'), []);
    });
  });
});

describe('OmniStatLogger.record: an engine index the stage/replica map does not know', () => {
  /** Every sample but the `_created` ones (creation times differ between two handles), as `name{labels} value`. */
  async function samplesOf(handle: OmniMetricsHandle): Promise<string[]> {
    return parseSamples(await handle.metricsText())
      .filter((sample) => !sample.name.endsWith('_created'))
      .map((sample) => `${sample.name}${JSON.stringify(sample.labels)} ${sample.rawValue}`);
  }

  it('is dropped with one warning, records nothing, and a known index after it still records', async () => {
    const untouched = await register({ stagePools: [1, 2] });
    const handle = await register({ stagePools: [1, 2] });
    try {
      const scheduler = createSchedulerStats({ numRunningReqs: 3, numWaitingReqs: 1, kvCacheUsage: 0.25 });
      const iteration = new IterationStats({ iterationTimestamp: 10 });
      iteration.numGenerationTokens = 7;
      iteration.interTokenLatenciesIter.push(0.02, 0.3);
      const logger = handle.statLogger as OmniStatLogger;
      const { warnings } = withWarnings(() => {
        logger.record(scheduler, iteration, 9);
        logger.record(scheduler, iteration, 9);
      });
      assert.deepEqual(warnings, ['omni-otel-metrics: engine index 9 is not in the stage/replica map; its stats are dropped']);
      assert.deepEqual(await samplesOf(handle), await samplesOf(untouched));

      logger.record(scheduler, iteration, 2);
      const text = await handle.metricsText();
      assert.equal(sampleValue(text, 'vllm:generation_tokens_total', stageLabels(1, 1)), 7);
      assert.equal(sampleValue(text, 'vllm:inter_token_latency_seconds_count', stageLabels(1, 1)), 2);
      assert.equal(sampleValue(text, 'vllm:num_requests_running', stageLabels(1, 1)), 3);
      assert.equal(sampleValue(text, 'vllm:generation_tokens_total', stageLabels(0, 0)), 0);
    } finally {
      await untouched.shutdown();
      await handle.shutdown();
    }
  });
});
