import { OmniOptionError, shown } from '../../views/common/option-checks';

/**
 * Stats records of vLLM V1 (`vllm/v1/metrics/stats.py`, `vllm/v1/spec_decode/metrics.py`, the NIXL KV connector
 * stats), with camelCase names. Hosts that already produce vLLM's objects hand in equivalent plain objects; the
 * `create*` factories build complete ones with vLLM's defaults.
 *
 * Units follow vLLM: token and request counts are integers, every `*Time`, `*Latency`, `*Seconds` and `*Ts` value
 * is in seconds. `kvCacheUsage` is a fraction (0..1), not a percentage.
 */

/** Why a request finished; the values of vLLM's `FinishReason` as `str()` prints them (the `finished_reason` label). */
export type FinishReason = 'stop' | 'length' | 'abort' | 'error' | 'repetition';

/** Every `FinishReason`, in vLLM's enum order. */
export const FINISH_REASONS: readonly FinishReason[] = Object.freeze(['stop', 'length', 'abort', 'error', 'repetition']);

/** True when `value` is one of the `FinishReason` strings; hosts pass untyped data, so the record path checks. */
export function isFinishReason(value: unknown): value is FinishReason {
  return typeof value === 'string' && (FINISH_REASONS as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------------------------
// Cache stats
// ---------------------------------------------------------------------------------------------------------------

/** vLLM's `BaseCacheStats`: one scheduler step's cache lookups. */
export interface BaseCacheStats {
  /** The cache was reset before this step, so windows over earlier steps must be cleared. */
  reset: boolean;
  /** Requests that looked the cache up in this step. */
  requests: number;
  /** What was looked up: tokens for the prefix caches, items for the multi-modal cache. */
  queries: number;
  /** How much of `queries` was found, in the same unit. */
  hits: number;
}

/**
 * vLLM's `PrefixCacheStats` fields. Queries and hits count tokens (blocks before vLLM PR #18003). Lookups of
 * requests rescheduled after a preemption are kept apart so they do not inflate the hit rate.
 */
export interface PrefixCacheCounts extends BaseCacheStats {
  /** Requests rescheduled after a preemption that looked the cache up in this step (vLLM's `preempted_requests`). */
  preemptedRequests: number;
  /** Tokens those preempted requests looked up (vLLM's `preempted_queries`). */
  preemptedQueries: number;
  /** Tokens of `preemptedQueries` found in the cache (vLLM's `preempted_hits`). */
  preemptedHits: number;
}

/** vLLM's `PrefixCacheStats`, with its `record()` helper. */
export class PrefixCacheStats implements PrefixCacheCounts {
  /** The prefix cache was reset before this step (vLLM's `reset_prefix_cache`), so windows over earlier steps must be cleared. */
  reset = false;
  /** Requests not rescheduled after a preemption that looked the cache up in this step. */
  requests = 0;
  /** Tokens those requests looked up. */
  queries = 0;
  /** Tokens of `queries` found in the cache. */
  hits = 0;
  /** Requests rescheduled after a preemption that looked the cache up in this step (vLLM's `preempted_requests`). */
  preemptedRequests = 0;
  /** Tokens those preempted requests looked up (vLLM's `preempted_queries`). */
  preemptedQueries = 0;
  /** Tokens of `preemptedQueries` found in the cache (vLLM's `preempted_hits`). */
  preemptedHits = 0;

  /**
   * Adds one request's lookup. `preempted` mirrors vLLM's positional flag (`request.num_preemptions > 0`):
   * such lookups go only to the `preempted*` fields.
   */
  record(numTokens: number, numHits: number, preempted: boolean): void {
    if (preempted) {
      this.preemptedRequests += 1;
      this.preemptedQueries += numTokens;
      this.preemptedHits += numHits;
    } else {
      this.requests += 1;
      this.queries += numTokens;
      this.hits += numHits;
    }
  }
}

/** vLLM's `MultiModalCacheStats`: queries and hits count multi-modal items, not tokens. */
export class MultiModalCacheStats implements BaseCacheStats {
  /** The multi-modal cache was reset before this step (vLLM's `reset_mm_cache`), so windows over earlier steps must be cleared. */
  reset = false;
  /** Requests that looked the cache up in this step. */
  requests = 0;
  /** Multi-modal items looked up. */
  queries = 0;
  /** Items of `queries` found in the cache. */
  hits = 0;

  /** Adds one request's lookup: `numQueries` items looked up, `numHits` of them found. */
  record(numQueries: number, numHits: number): void {
    this.requests += 1;
    this.queries += numQueries;
    this.hits += numHits;
  }
}

/** An empty prefix-cache tally, as vLLM's `PrefixCacheStats()`. */
export function createPrefixCacheStats(): PrefixCacheStats {
  return new PrefixCacheStats();
}

/** An empty multimodal-cache tally, as vLLM's `MultiModalCacheStats()`. */
export function createMultiModalCacheStats(): MultiModalCacheStats {
  return new MultiModalCacheStats();
}

// ---------------------------------------------------------------------------------------------------------------
// Scheduler stats and what they carry
// ---------------------------------------------------------------------------------------------------------------

/** vLLM's `KVCacheEvictionEvent`: one sampled KV block's residency (`--kv-cache-metrics`). */
export interface KvCacheEvictionEvent {
  /** Seconds from the block's allocation to its eviction (`kv_block_lifetime_seconds`). */
  lifetimeSeconds: number;
  /** Seconds from the block's last access to its eviction (`kv_block_idle_before_evict_seconds`). */
  idleSeconds: number;
  /** Seconds between consecutive accesses of the block, its most recent ones only (`kv_block_reuse_gap_seconds`). */
  reuseGapsSeconds: readonly number[];
}

/**
 * The `kv_connector_stats` data of vLLM's NIXL connector: one entry per transfer (or per failure / expiry) since
 * the last scheduler step. Durations in seconds, sizes in bytes.
 */
export interface NixlKvConnectorStats {
  /** Seconds each successful transfer took (NIXL's `xferDuration`; `nixl_xfer_time_seconds`). */
  transferDuration: number[];
  /** Seconds each successful transfer took to post (NIXL's `postDuration`; `nixl_post_time_seconds`). */
  postDuration: number[];
  /** Bytes each successful transfer moved (`nixl_bytes_transferred`). */
  bytesTransferred: number[];
  /** Memory descriptors each successful transfer involved (`nixl_num_descriptors`). */
  numDescriptors: number[];
  /** One entry of 1 per failed transfer (`nixl_num_failed_transfers`). */
  numFailedTransfers: number[];
  /** One entry of 1 per failed NIXL notification, `send_notif` (`nixl_num_failed_notifications`). */
  numFailedNotifications: number[];
  /**
   * One entry of 1 per request whose KV blocks expired before the decode instance read them; tracked on the
   * prefill instance (`nixl_num_kv_expired_reqs`).
   */
  numKvExpiredReqs: number[];
}

/**
 * The stats payload of vLLM's OffloadingConnector since the last scheduler step: counter
 * increments (bytes, seconds) and one size observation per transfer, in bytes. A missing field
 * (or an empty list) is no payload entry: it records nothing, and its series appears with the
 * engine's first entry, as vLLM creates it.
 */
export interface KvOffloadStats {
  /** Bytes loaded from offload storage to GPU (`kv_offload_load_bytes`). */
  loadBytes?: number;
  /** Seconds spent loading from offload storage to GPU (`kv_offload_load_time`). */
  loadTime?: number;
  /** Bytes of each load transfer (`kv_offload_load_size`). */
  loadSize?: readonly number[];
  /** Bytes stored from GPU to offload storage (`kv_offload_store_bytes`). */
  storeBytes?: number;
  /** Seconds spent storing from GPU to offload storage (`kv_offload_store_time`). */
  storeTime?: number;
  /** Bytes of each store transfer (`kv_offload_store_size`). */
  storeSize?: readonly number[];
  /** Seconds spent in each offload lookup call of the step (`kv_offload_lookup_sync_delay_seconds`). */
  lookupSyncDelaySeconds?: readonly number[];
  /** Seconds from a request's lookup first deferring to the next lookup resolving, or the request finishing. */
  lookupAsyncDelaySeconds?: readonly number[];
  /** Store allocation attempts that failed (`kv_offload_allocation_failure`). */
  allocationFailures?: number;
  /** Stores skipped because the reuse threshold was not reached (`store_threshold` >= 2). */
  storesSkipped?: number;
  /**
   * The offloading spec is vLLM's `CPUOffloadingSpec`: only then does vLLM also feed the
   * deprecated `transfer_type` families. Default true.
   */
  cpuSpec?: boolean;
}

export const SIMPLE_KV_OFFLOAD_OUTCOMES: readonly SimpleKvOffloadOutcome[] = [
  'stored',
  'dropped_cpu_full',
  'dropped_request_gone',
  'dropped_null_block',
  'dropped_not_hashed',
  'skipped_already_cached',
  'skipped_in_flight',
];

/** The stats payload of vLLM's SimpleCPUOffloadConnector since the last scheduler step (counters are increments). */
export interface SimpleKvOffloadStats {
  /** Per store decision SimpleCPUOffloadConnector classifies (its `outcome` label values), the blocks decided so. */
  saveOutcomes?: Partial<
    Record<
      'stored' | 'dropped_cpu_full' | 'dropped_request_gone' | 'dropped_null_block' | 'dropped_not_hashed' | 'skipped_already_cached' | 'skipped_in_flight',
      number
    >
  >;
  /** KV blocks of offload loads by phase: `issued` when dispatched to workers, `completed` when loaded (`simple_kv_offload_load_blocks`). */
  loadBlocks?: { issued?: number; completed?: number };
  /** Offload-pool blocks pinned now by in-flight transfers or cache hits (`simple_kv_offload_used_blocks`). */
  usedBlocks?: number;
  /**
   * Offload blocks in pending stores now: queued for dispatch, issued to workers, or awaiting release after a
   * cache reset (`simple_kv_offload_pending_store_blocks`).
   */
  pendingStoreBlocks?: number;
  /** Deployment facts, published as `vllm:simple_kv_offload_info` (value 1). */
  info?: { backend: string; pageCache: boolean; lazyOffload: boolean; capacityBlocks: number } | null;
}

/** Store decisions SimpleCPUOffloadConnector classifies (its `outcome` label values). */
export type SimpleKvOffloadOutcome = keyof NonNullable<SimpleKvOffloadStats['saveOutcomes']>;

/** vLLM's `PerfStats` (`--enable-mfu-metrics`): work done per GPU since the last step. */
export interface PerfStats {
  /** Estimated floating-point operations per GPU (vLLM's `num_flops_per_gpu`; `estimated_flops_per_gpu`). */
  numFlopsPerGpu: number;
  /** Estimated bytes read from memory per GPU (vLLM's `num_read_bytes_per_gpu`; `estimated_read_bytes_per_gpu`). */
  numReadBytesPerGpu: number;
  /** Estimated bytes written to memory per GPU (vLLM's `num_write_bytes_per_gpu`; `estimated_write_bytes_per_gpu`). */
  numWriteBytesPerGpu: number;
}

/**
 * Engine sleep as vLLM's `record_sleep_state(sleep, level)` sees it: level 1 offloads the weights, level 2 discards
 * everything.
 */
export interface EngineSleepState {
  /** The engine is asleep. */
  sleeping: boolean;
  /** The sleep level while asleep: 1 offloads the weights, 2 discards everything. */
  level: number;
}

/** vLLM's `SpecDecodingStats` fields. */
export interface SpecDecodingCounts {
  /** Draft positions per draft: the configured number of speculative tokens (vLLM's `num_spec_tokens`). */
  numSpecTokens: number;
  /** Drafts in this step, one per request that speculated (`spec_decode_num_drafts`). */
  numDrafts: number;
  /** Draft tokens proposed in this step (`spec_decode_num_draft_tokens`). */
  numDraftTokens: number;
  /** Draft tokens accepted in this step (`spec_decode_num_accepted_tokens`). */
  numAcceptedTokens: number;
  /** Length `numSpecTokens`: drafts whose token at that position was accepted. */
  numAcceptedTokensPerPos: number[];
  /** Length `numSpecTokens`: drafts that proposed a token at that position (newest vLLM). */
  numDraftTokensPerPos: number[];
}

/** vLLM's `SpecDecodingStats` (built with `SpecDecodingStats.new(num_spec_tokens)` upstream). */
export class SpecDecodingStats implements SpecDecodingCounts {
  /** Draft positions per draft: the configured number of speculative tokens (vLLM's `num_spec_tokens`). */
  readonly numSpecTokens: number;
  /** Drafts in this step, one per request that speculated (`spec_decode_num_drafts`). */
  numDrafts = 0;
  /** Draft tokens proposed in this step (`spec_decode_num_draft_tokens`). */
  numDraftTokens = 0;
  /** Draft tokens accepted in this step (`spec_decode_num_accepted_tokens`). */
  numAcceptedTokens = 0;
  /** Length `numSpecTokens`: drafts whose token at that position was accepted. */
  readonly numAcceptedTokensPerPos: number[];
  /** Length `numSpecTokens`: drafts that proposed a token at that position. */
  readonly numDraftTokensPerPos: number[];

  constructor(numSpecTokens: number) {
    if (!Number.isInteger(numSpecTokens) || numSpecTokens < 0) {
      throw new OmniOptionError('numSpecTokens', `numSpecTokens must be an integer ≥ 0; got ${shown(numSpecTokens)}`);
    }
    this.numSpecTokens = numSpecTokens;
    this.numAcceptedTokensPerPos = new Array<number>(numSpecTokens).fill(0);
    this.numDraftTokensPerPos = new Array<number>(numSpecTokens).fill(0);
  }

  /**
   * Adds one request's draft of this step. vLLM asserts `numAcceptedTokens <= numSpecTokens`; on the record path
   * bad data must not throw, so the per-position loops stop at the vector length while the totals keep every token.
   */
  observeDraft(numDraftTokens: number, numAcceptedTokens: number): void {
    this.numDrafts += 1;
    this.numDraftTokens += numDraftTokens;
    this.numAcceptedTokens += numAcceptedTokens;
    const acceptedPositions = Math.min(numAcceptedTokens, this.numSpecTokens);
    for (let pos = 0; pos < acceptedPositions; pos++) this.numAcceptedTokensPerPos[pos] += 1;
    const draftedPositions = Math.min(numDraftTokens, this.numSpecTokens);
    for (let pos = 0; pos < draftedPositions; pos++) this.numDraftTokensPerPos[pos] += 1;
  }
}

/** Empty speculative-decoding stats for `numSpecTokens` draft positions, as vLLM's `SpecDecodingStats.new()`. */
export function createSpecDecodingStats(numSpecTokens: number): SpecDecodingStats {
  return new SpecDecodingStats(numSpecTokens);
}

/** vLLM's `SchedulerStats`: sent by the engine core once per step. */
export interface SchedulerStats {
  /** Requests in the running queue at this step (vLLM's `num_running_reqs`; `num_requests_running`). */
  numRunningReqs: number;
  /** Waiting requests that could be scheduled if there were capacity. */
  numWaitingReqs: number;
  /** Waiting requests held back by a transient constraint (LoRA budget, async KV load, ...): the "Deferred" part. */
  numSkippedWaitingReqs: number;
  /** Used by vLLM's data-parallel load balancing. */
  stepCounter: number;
  /** The engine's data-parallel request wave (vLLM's `current_wave`), used by vLLM's data-parallel load balancing; not recorded. */
  currentWave: number;
  /** Fraction of KV cache blocks in use, 0..1. */
  kvCacheUsage: number;
  /** This step's prefix-cache lookups, in tokens (`prefix_cache_queries`, `prefix_cache_hits`). */
  prefixCacheStats: PrefixCacheCounts;
  /** Lookups in the KV connector's external cache; present only when a connector is configured. */
  connectorPrefixCacheStats?: PrefixCacheCounts | null;
  /** This step's multi-modal cache lookups, in items (`mm_cache_queries`, `mm_cache_hits`); present when the engine has that cache. */
  mmCacheStats?: BaseCacheStats | null;
  /** Sampled KV blocks evicted since the last step (`features.kvCacheMetrics`, vLLM's `--kv-cache-metrics`). */
  kvCacheEvictionEvents: KvCacheEvictionEvent[];
  /** This step's speculative-decoding drafts; present only with speculative decoding (`features.specDecode`). */
  specDecodingStats?: SpecDecodingCounts | null;
  /** NixlConnector stats (`features.kvConnector: 'nixl'`). */
  kvConnectorStats?: NixlKvConnectorStats | null;
  /** OffloadingConnector stats (`features.kvConnector: 'offloading'`). */
  kvOffloadStats?: KvOffloadStats | null;
  /** SimpleCPUOffloadConnector stats (`features.kvConnector: 'simple-cpu-offload'`). */
  simpleKvOffloadStats?: SimpleKvOffloadStats | null;
  /** Adapter name -> requests waiting / running with it. */
  waitingLoraAdapters: Record<string, number>;
  /** Adapter name -> requests running with it; the names form the `running_lora_adapters` label of `lora_requests_info`. */
  runningLoraAdapters: Record<string, number>;
  /** Work estimated per GPU since the last step (vLLM's `--enable-mfu-metrics`); all zeros records nothing. */
  perfStats?: PerfStats | null;
  /** The engine's sleep state (vLLM's `record_sleep_state`), recorded into `engine_sleep_state`. */
  sleepState?: EngineSleepState | null;
  /** The stats carry only a sleep-state change, not a scheduler step. */
  sleepStateOnly?: boolean;
}

/** A complete `SchedulerStats` with vLLM's defaults, overridden by `partial`. */
export function createSchedulerStats(partial: Partial<SchedulerStats> = {}): SchedulerStats {
  return {
    numRunningReqs: 0,
    numWaitingReqs: 0,
    numSkippedWaitingReqs: 0,
    stepCounter: 0,
    currentWave: 0,
    kvCacheUsage: 0,
    prefixCacheStats: createPrefixCacheStats(),
    kvCacheEvictionEvents: [],
    waitingLoraAdapters: {},
    runningLoraAdapters: {},
    ...partial,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Prompt token breakdown
// ---------------------------------------------------------------------------------------------------------------

/** vLLM's `PrefillStats`: where one request's prompt tokens came from. */
export interface PrefillStats {
  numPromptTokens: number;
  /** `numPromptTokens - numCachedTokens`: the tokens actually prefilled. */
  numComputedTokens: number;
  /** `numLocalCachedTokens + numExternalCachedTokens`. */
  numCachedTokens: number;
  numLocalCachedTokens: number;
  numExternalCachedTokens: number;
}

export interface PrefillStatsInput {
  numPromptTokens: number;
  numLocalCachedTokens?: number;
  numExternalCachedTokens?: number;
}

/** A `PrefillStats` derived as vLLM's `PrefillStats.set()` does. */
export function createPrefillStats({ numPromptTokens, numLocalCachedTokens = 0, numExternalCachedTokens = 0 }: PrefillStatsInput): PrefillStats {
  const numCachedTokens = numLocalCachedTokens + numExternalCachedTokens;
  return {
    numPromptTokens,
    numComputedTokens: numPromptTokens - numCachedTokens,
    numCachedTokens,
    numLocalCachedTokens,
    numExternalCachedTokens,
  };
}

/** The `source` label values of `vllm:prompt_tokens_by_source`. */
export type PromptTokenSource = 'local_compute' | 'local_cache_hit' | 'external_kv_transfer';

/**
 * vLLM's `PromptTokenStats`: prompt tokens of one iteration by source. Invariants:
 * `computed + localCacheHit + externalKvTransfer = total` and `localCacheHit + externalKvTransfer = cachedTokens`.
 */
export class PromptTokenStats {
  /** @internal */
  static readonly ALL_SOURCES: readonly PromptTokenSource[] = Object.freeze(['local_compute', 'local_cache_hit', 'external_kv_transfer']);

  computed = 0;
  localCacheHit = 0;
  externalKvTransfer = 0;
  cachedTokens = 0;
  total = 0;

  /** @internal */
  updateFromOutput(prefillStats: PrefillStats): void {
    this.computed += prefillStats.numComputedTokens;
    this.cachedTokens += prefillStats.numCachedTokens;
    this.total += prefillStats.numPromptTokens;
    this.localCacheHit += prefillStats.numLocalCachedTokens;
    this.externalKvTransfer += prefillStats.numExternalCachedTokens;
  }

  /** @internal */
  getBySource(source: PromptTokenSource): number {
    switch (source) {
      case 'local_compute':
        return this.computed;
      case 'local_cache_hit':
        return this.localCacheHit;
      case 'external_kv_transfer':
        return this.externalKvTransfer;
    }
  }
}

export function createPromptTokenStats(): PromptTokenStats {
  return new PromptTokenStats();
}

// ---------------------------------------------------------------------------------------------------------------
// Per-request stats
// ---------------------------------------------------------------------------------------------------------------

/**
 * vLLM's `RequestStateStats`: what the frontend tracks per request across outputs. `arrivalTime` is frontend wall
 * clock; the `*Ts` fields are engine-core monotonic timestamps, and 0 means "not seen yet" (as upstream).
 */
export interface RequestStateStats {
  numGenerationTokens: number;
  numPreemptions: number;
  arrivalTime: number;
  queuedTs: number;
  scheduledTs: number;
  firstTokenTs: number;
  lastTokenTs: number;
  /** TTFT recorded for this request (wall clock seconds). */
  firstTokenLatency: number;
  /** Some output of the request had NaNs in its logits. */
  isCorrupted: boolean;
}

export function createRequestStateStats(partial: Partial<RequestStateStats> = {}): RequestStateStats {
  return {
    numGenerationTokens: 0,
    numPreemptions: 0,
    arrivalTime: 0,
    queuedTs: 0,
    scheduledTs: 0,
    firstTokenTs: 0,
    lastTokenTs: 0,
    firstTokenLatency: 0,
    isCorrupted: false,
    ...partial,
  };
}

/** vLLM's `FinishedRequestStats`: the per-request histogram inputs. All durations in seconds. */
export interface FinishedRequestStats {
  finishReason: FinishReason;
  requestId: string | null;
  /** Arrival to the iteration that finished it (frontend wall clock). */
  e2eLatency: number;
  numPromptTokens: number;
  numPreemptions: number;
  numGenerationTokens: number;
  maxTokensParam: number | null;
  /** First QUEUED to first SCHEDULED. */
  queuedTime: number;
  /** First SCHEDULED to first token; includes preemptions during prefill. */
  prefillTime: number;
  /** First SCHEDULED to last token; includes every preemption. */
  inferenceTime: number;
  /** First token to last token; includes preemptions during decode. */
  decodeTime: number;
  /** `decodeTime / (numGenerationTokens - 1)`, 0 for one token or none. */
  meanTimePerOutputToken: number;
  isCorrupted: boolean;
  numCachedTokens: number;
}

/** The engine-core events that carry request lifecycle timestamps (vLLM's `EngineCoreEventType`). */
/** A FinishedRequestStats with zeroed intervals and counts, for hosts that hand in ready-made records. */
export function createFinishedRequestStats(partial: Partial<FinishedRequestStats> & Pick<FinishedRequestStats, 'finishReason'>): FinishedRequestStats {
  return {
    requestId: null,
    e2eLatency: 0,
    numPromptTokens: 0,
    numPreemptions: 0,
    numGenerationTokens: 0,
    maxTokensParam: null,
    queuedTime: 0,
    prefillTime: 0,
    inferenceTime: 0,
    decodeTime: 0,
    meanTimePerOutputToken: 0,
    isCorrupted: false,
    numCachedTokens: 0,
    ...partial,
  };
}

/** A request lifecycle event an engine step reports (vLLM's `EngineCoreEvent`). */
export interface EngineCoreEvent {
  /** The event: QUEUED and the first SCHEDULED bound the queue and prefill intervals; PREEMPTED counts a preemption. */
  readonly type: 'QUEUED' | 'SCHEDULED' | 'PREEMPTED';
  /** Engine-core monotonic seconds. */
  readonly timestamp: number;
}

/** The engine-core events that carry request lifecycle timestamps (vLLM's `EngineCoreEventType`). */
export type EngineCoreEventType = EngineCoreEvent['type'];
