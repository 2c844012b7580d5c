import { IterationStats } from './iteration-stats';
import {
  createPrefillStats,
  createRequestStateStats,
  createSchedulerStats,
  type FinishReason,
  isFinishReason,
  PrefixCacheStats,
  type RequestStateStats,
  type SchedulerStats,
} from './types';
import { shown } from '../../views/common/option-checks';

export interface ArrivedInfo {
  /** Frontend wall clock seconds since the epoch (`time.time()` domain) at which the request arrived. */
  arrivalTime: number;
  promptTokens: number;
  /** The request's `max_tokens` sampling parameter, if it set one. */
  maxTokens?: number | null;
  /** The request's `n` sampling parameter. Default 1. */
  n?: number;
}

export interface ScheduledInfo {
  /** Prompt tokens that did not need prefill: local prefix-cache hits plus tokens received from a KV connector. */
  cachedTokens?: number;
  /** The part of `cachedTokens` received from a KV connector. Default 0. */
  externalCachedTokens?: number;
}

export interface RequestStatsBuilderOptions {
  /** Requests tracked at once; further arrivals are dropped. Default 65 536. */
  maxTrackedRequests?: number;
}

export const DEFAULT_MAX_TRACKED_REQUESTS = 65_536;

/** Where a request is, as the scheduler's running / waiting counts see it. */
type RequestPhase = 'arrived' | 'waiting' | 'running';

/** What the builder knows about one live request; its counts and timestamps are the request's own `stats`. */
interface TrackedRequest {
  readonly requestId: string;
  readonly promptTokens: number;
  readonly maxTokens: number | null;
  readonly n: number;
  readonly stats: RequestStateStats;
  phase: RequestPhase;
  /** From the first scheduling that reported it (vLLM sets `num_cached_tokens` once). */
  cachedTokens: number | undefined;
  externalCachedTokens: number;
}

/**
 * Builds vLLM's stats objects from lifecycle events, for hosts whose engines do not produce them. Use one builder
 * per (stage, replica).
 *
 * Clocks: `arrivalTime` and the `nowWall` of `startIteration()` are frontend wall clock seconds; every
 * `engineTs` is engine monotonic seconds (a reading above 0: 0 means "not seen", as upstream). TTFT and e2e come
 * from the wall clock, every other interval from the engine clock; they are never mixed.
 *
 * Each event is applied as it arrives, to the request's stats and to the open iteration, as vLLM's frontend
 * applies each output of a batch to the `IterationStats` it created when the batch came in. Per engine step (or
 * output batch): `startIteration(nowWall)`, the step's events, then `takeIterationStats()`. TTFT and e2e latency
 * are measured against the iteration's timestamp; an event with no iteration open starts one at the current
 * wall clock.
 *
 * Where the reference leaves room, the behaviour follows what upstream's tests
 * (`tests/entrypoints/instrumentator/test_metrics.py`: N requests of P prompt tokens, max_tokens T) pin:
 * - one TTFT per request (`time_to_first_token_seconds_count = N`): the first output of a request is its prefill
 *   output, and a request preempted after it re-prefills without producing a new "first token";
 * - one ITL per later output, not per token (`inter_token_latency_seconds_count = N*(T-1)` with one token per step);
 * - prompt tokens counted once per request, at its first output (`prompt_tokens_total = N*P`,
 *   `iteration_tokens_total_sum = N*(P+T)`), even when it is preempted and re-prefilled;
 * - one e2e / queue / prefill / decode / inference / n / max_tokens observation per finished request (`_count = N`).
 * Those tests pin counts, not durations. The durations follow upstream's comments: queue time is first QUEUED to
 * first SCHEDULED, and time spent preempted stays inside prefill / decode / inference.
 */
export class RequestStatsBuilder {
  private readonly maxTrackedRequests: number;
  private readonly requests = new Map<string, TrackedRequest>();
  private iteration: IterationStats | undefined;
  private prefixCacheStats = new PrefixCacheStats();
  private connectorPrefixCacheStats = new PrefixCacheStats();
  private connectorSeen = false;
  private droppedEventCount = 0;

  constructor({ maxTrackedRequests = DEFAULT_MAX_TRACKED_REQUESTS }: RequestStatsBuilderOptions = {}) {
    if (!Number.isInteger(maxTrackedRequests) || maxTrackedRequests < 1) {
      throw new RangeError(`maxTrackedRequests must be a positive integer; got ${shown(maxTrackedRequests)}`);
    }
    this.maxTrackedRequests = maxTrackedRequests;
  }

  /** Events ignored: unknown or duplicate request ids, or invalid values. */
  get droppedEvents(): number {
    return this.droppedEventCount;
  }

  /** Requests arrived and not yet finished or aborted. */
  get trackedRequests(): number {
    return this.requests.size;
  }

  arrived(requestId: string, info: ArrivedInfo): void {
    const valid =
      typeof requestId === 'string' &&
      isFiniteNumber(info?.arrivalTime) &&
      isCount(info.promptTokens) &&
      !this.requests.has(requestId) &&
      this.requests.size < this.maxTrackedRequests;
    if (!valid) {
      this.droppedEventCount += 1;
      return;
    }
    this.requests.set(requestId, {
      requestId,
      promptTokens: info.promptTokens,
      maxTokens: isCount(info.maxTokens) ? info.maxTokens : null,
      n: isCount(info.n) && info.n > 0 ? info.n : 1,
      stats: createRequestStateStats({ arrivalTime: info.arrivalTime }),
      phase: 'arrived',
      cachedTokens: undefined,
      externalCachedTokens: 0,
    });
  }

  queued(requestId: string, engineTs: number): void {
    const request = this.acceptEvent(requestId, isFiniteNumber(engineTs));
    if (!request) return;
    // The engine emits QUEUED once per request; a host re-queueing a preempted request must not move the start of
    // the queue interval (upstream's update_from_events would overwrite it).
    if (request.stats.queuedTs !== 0) return;
    if (request.phase === 'arrived') request.phase = 'waiting';
    request.stats.queuedTs = engineTs;
  }

  scheduled(requestId: string, engineTs: number, info: ScheduledInfo = {}): void {
    const request = this.acceptEvent(requestId, isFiniteNumber(engineTs));
    if (!request) return;
    // Only a waiting request looks the cache up; a repeated scheduled() of a running one must not count twice.
    if (request.phase !== 'running' && isCount(info.cachedTokens)) {
      this.recordCacheLookup(request, info.cachedTokens, info.externalCachedTokens);
    }
    request.phase = 'running';
    // Only the first scheduling counts, as vLLM's update_from_events: time re-queued after a preemption belongs to prefill/decode.
    if (request.stats.scheduledTs === 0) request.stats.scheduledTs = engineTs;
  }

  preempted(requestId: string, engineTs: number): void {
    const request = this.acceptEvent(requestId, isFiniteNumber(engineTs));
    if (!request) return;
    request.phase = 'waiting';
    this.openIteration().updateFromEvent('PREEMPTED', engineTs, request.stats);
  }

  /**
   * `count` tokens of one output of the request, produced by the engine step at `engineTs`. The request's first
   * output is its prefill output (TTFT); every later one, including the first after a preemption, is a decode
   * output (one ITL observation, however many tokens it carries).
   */
  newTokens(requestId: string, count: number, engineTs: number): void {
    const request = this.acceptEvent(requestId, isCount(count) && count > 0 && isFiniteNumber(engineTs));
    if (!request) return;
    const stats = request.stats;
    const isPrefilling = stats.numGenerationTokens === 0;
    request.phase = 'running';
    const prefillStats = isPrefilling
      ? createPrefillStats({
          numPromptTokens: request.promptTokens,
          numLocalCachedTokens: (request.cachedTokens ?? 0) - request.externalCachedTokens,
          numExternalCachedTokens: request.externalCachedTokens,
        })
      : undefined;
    const iteration = this.openIteration();
    iteration.updateFromNewTokens(count, isPrefilling, request.promptTokens, prefillStats, stats);
    iteration.updateTokenTimestamps(engineTs, isPrefilling, stats);
  }

  /**
   * The request ended with `reason`; its FinishedRequestStats join the open iteration.
   * `engineTs`, the engine time it ended, only matters for a request that never produced a token: it closes the
   * interval the request was in (queue or prefill), where upstream would measure from a 0 timestamp.
   */
  finished(requestId: string, reason: FinishReason, engineTs?: number): void {
    const request = this.requests.get(requestId);
    if (!request) {
      this.droppedEventCount += 1;
      return;
    }
    // Forget the request even when the record is dropped: state must not outlive it.
    this.requests.delete(requestId);
    if (!isFinishReason(reason)) {
      this.droppedEventCount += 1;
      return;
    }
    closeMissingTimestamps(request.stats, isFiniteNumber(engineTs) ? engineTs : undefined);
    const iteration = this.openIteration();
    iteration.updateFromFinishedRequest(
      {
        finishReason: reason,
        numPromptTokens: request.promptTokens,
        maxTokensParam: request.maxTokens,
        numCachedTokens: request.cachedTokens ?? 0,
        requestId: request.requestId,
      },
      request.stats,
    );
    // vLLM's ParentRequest.observe_finished_request for a request without parallel-sampling children.
    iteration.maxNumGenerationTokensIter.push(request.stats.numGenerationTokens);
    iteration.nParamsIter.push(request.n);
  }

  /**
   * Forgets a request the client abandoned, without a FinishedRequestStats, as vLLM's frontend does for aborts it
   * initiates. A request the engine ended with `abort` goes through `finished(id, 'abort')` instead.
   */
  aborted(requestId: string): void {
    if (!this.requests.delete(requestId)) this.droppedEventCount += 1;
  }

  /**
   * Opens the iteration the next events apply to, stamped `nowWall` (vLLM creates its `IterationStats` when a
   * batch of outputs comes in); without it, the wall clock is read when the step's first TTFT or e2e latency
   * needs it. An iteration still open is replaced: take it first. `reuse`, an iteration the caller took before
   * and no longer holds, is emptied and filled again instead of allocating one per step.
   */
  startIteration(nowWall?: number, reuse?: IterationStats): IterationStats {
    this.iteration = reuse ? reuse.restart(nowWall) : new IterationStats({ iterationTimestamp: nowWall });
    return this.iteration;
  }

  /** Ends the open iteration: the next event opens another (the caller holds the one it started). */
  endIteration(): void {
    this.iteration = undefined;
  }

  /** The open iteration with everything reported since it started (an empty one stamped now if none is open); the next event opens another. */
  takeIterationStats(): IterationStats {
    const iteration = this.iteration ?? new IterationStats();
    this.iteration = undefined;
    return iteration;
  }

  /**
   * A SchedulerStats for this (stage, replica): running / waiting counts of the tracked requests, and the prefix
   * cache lookups reported through `scheduled()` since the last call. `extra` sets what the builder cannot know,
   * e.g. `kvCacheUsage`.
   */
  takeSchedulerStats(extra: Partial<SchedulerStats> = {}): SchedulerStats {
    let numRunningReqs = 0;
    let numWaitingReqs = 0;
    for (const request of this.requests.values()) {
      if (request.phase === 'running') numRunningReqs += 1;
      else if (request.phase === 'waiting') numWaitingReqs += 1;
    }
    const stats = createSchedulerStats({
      numRunningReqs,
      numWaitingReqs,
      prefixCacheStats: this.prefixCacheStats,
      connectorPrefixCacheStats: this.connectorSeen ? this.connectorPrefixCacheStats : null,
      ...extra,
    });
    this.prefixCacheStats = new PrefixCacheStats();
    this.connectorPrefixCacheStats = new PrefixCacheStats();
    return stats;
  }

  /** The tracked request, or undefined (and counted as dropped) when the id is unknown or the event is invalid. */
  private acceptEvent(requestId: string, valid: boolean): TrackedRequest | undefined {
    const request = this.requests.get(requestId);
    if (!request || !valid) {
      this.droppedEventCount += 1;
      return undefined;
    }
    return request;
  }

  private openIteration(): IterationStats {
    return this.iteration ?? this.startIteration();
  }

  /**
   * As vLLM's KV cache manager does when it schedules a waiting request: the lookup covers every token the request
   * has (prompt plus output so far), local hits go to the prefix cache, connector hits to the external one, and a
   * request that was preempted before counts only in the `preempted*` fields.
   */
  private recordCacheLookup(request: TrackedRequest, cachedTokens: number, externalCachedTokens: number | undefined): void {
    const numTokens = request.promptTokens + request.stats.numGenerationTokens;
    // Hits can never exceed what was looked up; bad host data is clamped rather than producing negative counts.
    const cached = Math.min(cachedTokens, numTokens);
    const external = isCount(externalCachedTokens) ? Math.min(externalCachedTokens, cached) : 0;
    const preempted = request.stats.numPreemptions > 0;
    this.prefixCacheStats.record(numTokens, cached - external, preempted);
    if (externalCachedTokens !== undefined) {
      this.connectorSeen = true;
      this.connectorPrefixCacheStats.record(numTokens, external, preempted);
    }
    if (request.cachedTokens === undefined && request.stats.numGenerationTokens === 0) {
      request.cachedTokens = Math.min(cached, request.promptTokens);
      request.externalCachedTokens = Math.min(external, request.cachedTokens);
    }
  }
}

/**
 * Upstream measures every interval between engine timestamps that default to 0, so a request that skipped an event
 * would report an interval from the clock's origin. Missing timestamps are filled from their neighbours instead,
 * making the skipped phase 0 long; a request without any token closes its open phase at `endTs` (or at its last
 * known event). Real timestamps are never changed.
 */
function closeMissingTimestamps(stats: RequestStateStats, endTs: number | undefined): void {
  if (stats.numGenerationTokens > 0) {
    if (stats.scheduledTs === 0) stats.scheduledTs = stats.firstTokenTs;
    if (stats.queuedTs === 0) stats.queuedTs = stats.scheduledTs;
    return;
  }
  const end = Math.max(endTs ?? 0, stats.queuedTs, stats.scheduledTs);
  if (stats.scheduledTs === 0) stats.scheduledTs = end;
  if (stats.queuedTs === 0) stats.queuedTs = stats.scheduledTs;
  stats.firstTokenTs = end;
  stats.lastTokenTs = end;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
