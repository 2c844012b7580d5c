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
  preemptedRequests: number;
  preemptedQueries: number;
  preemptedHits: number;
}

/** vLLM's `PrefixCacheStats`, with its `record()` helper. */
export class PrefixCacheStats implements PrefixCacheCounts {
  reset = false;
  requests = 0;
  queries = 0;
  hits = 0;
  preemptedRequests = 0;
  preemptedQueries = 0;
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
  reset = false;
  requests = 0;
  queries = 0;
  hits = 0;

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
  lifetimeSeconds: number;
  idleSeconds: number;
  reuseGapsSeconds: readonly number[];
}

/**
 * The `kv_connector_stats` data of vLLM's NIXL connector: one entry per transfer (or per failure / expiry) since
 * the last scheduler step. Durations in seconds, sizes in bytes.
 */
export interface NixlKvConnectorStats {
  transferDuration: number[];
  postDuration: number[];
  bytesTransferred: number[];
  numDescriptors: number[];
  numFailedTransfers: number[];
  numFailedNotifications: number[];
  numKvExpiredReqs: number[];
}

/**
 * The stats payload of vLLM's OffloadingConnector since the last scheduler step: counter
 * increments (bytes, seconds) and one size observation per transfer, in bytes. A missing field
 * (or an empty list) is no payload entry: it records nothing, and its series appears with the
 * engine's first entry, as vLLM creates it.
 */
export interface KvOffloadStats {
  loadBytes?: number;
  loadTime?: number;
  loadSize?: readonly number[];
  storeBytes?: number;
  storeTime?: number;
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
  loadBlocks?: { issued?: number; completed?: number };
  usedBlocks?: number;
  pendingStoreBlocks?: number;
  /** Deployment facts, published as `vllm:simple_kv_offload_info` (value 1). */
  info?: { backend: string; pageCache: boolean; lazyOffload: boolean; capacityBlocks: number } | null;
}

/** Store decisions SimpleCPUOffloadConnector classifies (its `outcome` label values). */
export type SimpleKvOffloadOutcome = keyof NonNullable<SimpleKvOffloadStats['saveOutcomes']>;

/** vLLM's `PerfStats` (`--enable-mfu-metrics`): work done per GPU since the last step. */
export interface PerfStats {
  numFlopsPerGpu: number;
  numReadBytesPerGpu: number;
  numWriteBytesPerGpu: number;
}

/**
 * Engine sleep as vLLM's `record_sleep_state(sleep, level)` sees it: level 1 offloads the weights, level 2 discards
 * everything.
 */
export interface EngineSleepState {
  sleeping: boolean;
  level: number;
}

/** vLLM's `SpecDecodingStats` fields. */
export interface SpecDecodingCounts {
  numSpecTokens: number;
  numDrafts: number;
  numDraftTokens: number;
  numAcceptedTokens: number;
  /** Length `numSpecTokens`: drafts whose token at that position was accepted. */
  numAcceptedTokensPerPos: number[];
  /** Length `numSpecTokens`: drafts that proposed a token at that position (newest vLLM). */
  numDraftTokensPerPos: number[];
}

/** vLLM's `SpecDecodingStats` (built with `SpecDecodingStats.new(num_spec_tokens)` upstream). */
export class SpecDecodingStats implements SpecDecodingCounts {
  readonly numSpecTokens: number;
  numDrafts = 0;
  numDraftTokens = 0;
  numAcceptedTokens = 0;
  readonly numAcceptedTokensPerPos: number[];
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
  numRunningReqs: number;
  /** Waiting requests that could be scheduled if there were capacity. */
  numWaitingReqs: number;
  /** Waiting requests held back by a transient constraint (LoRA budget, async KV load, ...): the "Deferred" part. */
  numSkippedWaitingReqs: number;
  /** Used by vLLM's data-parallel load balancing. */
  stepCounter: number;
  currentWave: number;
  /** Fraction of KV cache blocks in use, 0..1. */
  kvCacheUsage: number;
  prefixCacheStats: PrefixCacheCounts;
  /** Lookups in the KV connector's external cache; present only when a connector is configured. */
  connectorPrefixCacheStats?: PrefixCacheCounts | null;
  mmCacheStats?: BaseCacheStats | null;
  kvCacheEvictionEvents: KvCacheEvictionEvent[];
  specDecodingStats?: SpecDecodingCounts | null;
  kvConnectorStats?: NixlKvConnectorStats | null;
  /** OffloadingConnector stats (`features.kvConnector: 'offloading'`). */
  kvOffloadStats?: KvOffloadStats | null;
  /** SimpleCPUOffloadConnector stats (`features.kvConnector: 'simple-cpu-offload'`). */
  simpleKvOffloadStats?: SimpleKvOffloadStats | null;
  /** Adapter name -> requests waiting / running with it. */
  waitingLoraAdapters: Record<string, number>;
  runningLoraAdapters: Record<string, number>;
  perfStats?: PerfStats | null;
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
  readonly type: 'QUEUED' | 'SCHEDULED' | 'PREEMPTED';
  /** Engine-core monotonic seconds. */
  readonly timestamp: number;
}

/** The engine-core events that carry request lifecycle timestamps (vLLM's `EngineCoreEventType`). */
export type EngineCoreEventType = EngineCoreEvent['type'];
