import type { EngineCoreEvent } from '../../instrumentation/hooks/host-contract';
import { monotonicSeconds, type SecondsClock } from '../../instrumentation/stats/clock';
import { StatsThrottle } from '../../instrumentation/stats/stats-throttle';
import { createPrefixCacheStats, createSchedulerStats, type FinishReason, type PrefixCacheStats } from '../../instrumentation/stats/types';
import { KvCacheManager } from './kv-cache-manager';
import { SeededRandom } from './seeded-random';
import type { StageEngine, StageEngineOutput, StageEngineOutputs, StageInput } from './stage-engine';

/** vLLM's default KV block size. */
export const KV_BLOCK_SIZE = 16;

/** How long a step takes, from what it computes. */
export interface LlmStepTiming {
  /** Fixed cost of any step (launches, sampling), milliseconds. */
  readonly stepBaseMs: number;
  /** Prefill cost per prompt token actually computed (cache hits are free), milliseconds. */
  readonly prefillMsPerToken: number;
  /** Decode cost per running sequence, milliseconds. */
  readonly decodeMsPerSeq: number;
}

/** When a request may end on its own (EOS) before `max_tokens`. */
export interface StopPolicy {
  /** Chance per generated token of sampling EOS once stopping is allowed. */
  readonly probability: number;
  /** Stopping is allowed once this fraction of `max_tokens` was generated (0 = from the first token). */
  readonly afterFraction: number;
}

export interface SimulatedEngineOptions {
  readonly stageId: number;
  readonly replicaId: number;
  /** Seeds this replica's PRNG: same seed and same call order give the same tokens and finishes. */
  readonly seed: number;
  readonly timing: LlmStepTiming;
  /** KV blocks of `KV_BLOCK_SIZE` tokens; a small budget forces preemption under load. */
  readonly numKvBlocks: number;
  /** Most sequences in one batch (vLLM's `max_num_seqs`). */
  readonly maxNumSeqs: number;
  /** Prefill tokens admitted per step (vLLM's `max_num_batched_tokens`); a step's first prefill always fits. */
  readonly maxNumBatchedTokens: number;
  readonly stopPolicy: StopPolicy;
  /** Maps a uniform draw and the ids generated so far to the next id (text words or codec ids). */
  readonly sampleToken: (u: number, previousIds: readonly number[]) => number;
  /** One per replica by default; a shared one must be keyed per replica, as this engine does. */
  readonly statsThrottle?: StatsThrottle;
  /** Engine monotonic seconds for output and event timestamps. */
  readonly clock?: SecondsClock;
}

interface EngineRequest {
  readonly requestId: string;
  readonly promptTokenIds: readonly number[];
  readonly maxTokens: number;
  readonly outputTokenIds: number[];
  /** Tokens whose KV is in the cache; reset to 0 by preemption (vLLM recomputes). */
  numComputedTokens: number;
  numBlocks: number;
  numPreemptions: number;
  /** Events not yet reported; they ride on the request's next output, as in vLLM. */
  pendingEvents: EngineCoreEvent[];
  /** Prefix-cache hit of the first scheduling, reported once with the first output. */
  cachedTokensToReport?: number;
}

interface ScheduledEntry {
  readonly request: EngineRequest;
  readonly kind: 'prefill' | 'decode';
  /** Tokens computed in this step. */
  readonly numTokens: number;
}

interface StepPlan {
  readonly entries: readonly ScheduledEntry[];
  readonly durationMs: number;
}

/**
 * A per-replica simulated LLM engine core (vLLM V1 reduced): a FIFO waiting queue and a running
 * batch, a KV block budget with recompute preemption (the newest running request is evicted back
 * to the front of the waiting queue), prefix caching of prompt blocks, prefill time that grows with
 * the computed prompt length, per-sequence decode time, and EOS (`stop`) vs `length` finishes.
 *
 * Steps run on the engine's own timer while it has work; each step's outputs are buffered until
 * polled. Scheduler stats are attached at most once per `statsThrottle` interval (vLLM-Omni's
 * `make_stats` gate); an idle replica sends one stats-only step after going idle so gauges settle.
 */
export class SimulatedEngine implements StageEngine {
  readonly stageId: number;
  readonly replicaId: number;
  readonly kvCache: KvCacheManager;
  private readonly options: SimulatedEngineOptions;
  private readonly random: SeededRandom;
  private readonly throttle: StatsThrottle;
  private readonly throttleKey: string;
  private readonly clock: SecondsClock;
  private readonly requests = new Map<string, EngineRequest>();
  private readonly waiting: EngineRequest[] = [];
  private readonly running: EngineRequest[] = [];
  private readonly buffered: StageEngineOutputs[] = [];
  private prefixCacheStats: PrefixCacheStats = createPrefixCacheStats();
  private stepCounter = 0;
  private started = false;
  private stepTimer: NodeJS.Timeout | undefined;
  private idleStatsTimer: NodeJS.Timeout | undefined;
  /** Stats changed since the last emission, so an idle replica still owes one snapshot. */
  private statsDirty = false;

  constructor(options: SimulatedEngineOptions) {
    if (!Number.isInteger(options.maxNumSeqs) || options.maxNumSeqs < 1) {
      throw new RangeError(`maxNumSeqs must be a positive integer, got ${options.maxNumSeqs}`);
    }
    this.options = options;
    this.stageId = options.stageId;
    this.replicaId = options.replicaId;
    this.kvCache = new KvCacheManager({ numBlocks: options.numKvBlocks, blockSize: KV_BLOCK_SIZE });
    this.random = new SeededRandom(options.seed);
    this.throttle = options.statsThrottle ?? new StatsThrottle();
    this.throttleKey = `${options.stageId}:${options.replicaId}`;
    this.clock = options.clock ?? monotonicSeconds;
  }

  get bufferedSteps(): number {
    return this.buffered.length;
  }

  get numWaiting(): number {
    return this.waiting.length;
  }

  get numRunning(): number {
    return this.running.length;
  }

  start(): void {
    this.started = true;
    this.kick();
  }

  stop(): void {
    this.started = false;
    clearTimeout(this.stepTimer);
    clearTimeout(this.idleStatsTimer);
    this.stepTimer = undefined;
    this.idleStatsTimer = undefined;
    this.requests.clear();
    this.waiting.length = 0;
    this.running.length = 0;
    this.buffered.length = 0;
    this.kvCache.reset();
  }

  submit(input: StageInput): void {
    if (!input.final) throw new Error(`an LLM stage takes the whole prompt at once (request ${input.requestId})`);
    if (this.requests.has(input.requestId)) throw new Error(`request ${input.requestId} is already on replica ${this.throttleKey}`);
    if (input.tokenIds.length === 0) throw new RangeError(`request ${input.requestId} has an empty prompt`);
    if (!Number.isInteger(input.maxTokens) || input.maxTokens < 1) {
      throw new RangeError(`max_tokens must be a positive integer, got ${input.maxTokens}`);
    }
    const neededBlocks = this.kvCache.blocksFor(input.tokenIds.length + input.maxTokens);
    if (neededBlocks > this.kvCache.numBlocks) {
      throw new RangeError(
        `request ${input.requestId} needs ${neededBlocks} KV blocks (prompt ${input.tokenIds.length} + max_tokens ${input.maxTokens}), ` +
          `replica ${this.throttleKey} has ${this.kvCache.numBlocks}`,
      );
    }
    const request: EngineRequest = {
      requestId: input.requestId,
      promptTokenIds: [...input.tokenIds],
      maxTokens: input.maxTokens,
      outputTokenIds: [],
      numComputedTokens: 0,
      numBlocks: 0,
      numPreemptions: 0,
      pendingEvents: [{ type: 'QUEUED', timestamp: this.clock() }],
    };
    this.requests.set(request.requestId, request);
    this.waiting.push(request);
    this.statsDirty = true;
    this.kick();
  }

  abort(requestId: string): void {
    const request = this.requests.get(requestId);
    if (request !== undefined) {
      this.requests.delete(requestId);
      removeFrom(this.waiting, request);
      removeFrom(this.running, request);
      this.kvCache.free(request.numBlocks);
      this.statsDirty = true;
    }
    // Outputs already buffered for it are dropped: after an abort the engine reports nothing more.
    for (let i = 0; i < this.buffered.length; i++) {
      const step = this.buffered[i];
      if (step.outputs.some((output) => output.requestId === requestId)) {
        this.buffered[i] = { ...step, outputs: step.outputs.filter((output) => output.requestId !== requestId) };
      }
    }
    this.kick();
  }

  poll(): StageEngineOutputs | undefined {
    return this.buffered.shift();
  }

  /**
   * Runs one whole step now, without the timer (deterministic tests). Returns false when there was
   * nothing to schedule. Not to be mixed with `start()`.
   */
  runStepSync(): boolean {
    if (this.started) throw new Error('runStepSync() is for an engine that was not started');
    const plan = this.schedule();
    if (plan.entries.length === 0) return false;
    this.complete(plan);
    return true;
  }

  /** Starts a step if the loop is idle and there is work; the step completes after its duration. */
  private kick(): void {
    if (!this.started || this.stepTimer !== undefined) return;
    if (this.waiting.length === 0 && this.running.length === 0) {
      this.armIdleStats();
      return;
    }
    // An empty plan with work pending (everything preempted this step) still takes a step's time.
    const plan = this.schedule();
    clearTimeout(this.idleStatsTimer);
    this.idleStatsTimer = undefined;
    this.stepTimer = setTimeout(() => {
      this.stepTimer = undefined;
      if (!this.started) return;
      this.complete(plan);
      this.kick();
    }, plan.durationMs);
    this.stepTimer.unref();
  }

  private schedule(): StepPlan {
    const now = this.clock();
    const entries: ScheduledEntry[] = [];
    let preempted = false;

    // Running requests first: each needs room for one more token, evicting the newest if it must.
    for (let i = 0; i < this.running.length; i++) {
      const request = this.running[i];
      const needed = this.kvCache.blocksFor(request.numComputedTokens + 1) - request.numBlocks;
      while (needed > this.kvCache.freeBlocks) {
        const victim = this.running.pop() as EngineRequest;
        this.preempt(victim, now);
        preempted = true;
        if (victim === request) break;
      }
      if (this.running[i] !== request) break;
      this.kvCache.tryAllocate(needed);
      request.numBlocks += needed;
      entries.push({ request, kind: 'decode', numTokens: 1 });
    }

    // Then admissions, unless this step had to preempt (vLLM admits nothing new under pressure).
    let tokenBudget = this.options.maxNumBatchedTokens;
    while (!preempted && this.waiting.length > 0 && this.running.length < this.options.maxNumSeqs) {
      const request = this.waiting[0];
      const allTokens = request.promptTokenIds.length + request.outputTokenIds.length;
      const cached = this.kvCache.lookupPrefix(request.promptTokenIds);
      const toCompute = allTokens - cached;
      const hasPrefill = entries.some((entry) => entry.kind === 'prefill');
      if (hasPrefill && toCompute > tokenBudget) break;
      const needed = this.kvCache.blocksFor(allTokens + 1);
      if (!this.kvCache.tryAllocate(needed)) break;
      this.waiting.shift();
      request.numBlocks = needed;
      request.numComputedTokens = cached;
      this.prefixCacheStats.record(request.promptTokenIds.length, cached, request.numPreemptions > 0);
      if (request.numPreemptions === 0) request.cachedTokensToReport = cached;
      request.pendingEvents.push({ type: 'SCHEDULED', timestamp: now });
      this.running.push(request);
      tokenBudget -= toCompute;
      entries.push({ request, kind: 'prefill', numTokens: toCompute });
    }

    const { stepBaseMs, prefillMsPerToken, decodeMsPerSeq } = this.options.timing;
    let durationMs = stepBaseMs;
    for (const entry of entries) durationMs += entry.kind === 'prefill' ? entry.numTokens * prefillMsPerToken : decodeMsPerSeq;
    if (entries.length > 0 || preempted) this.statsDirty = true;
    return { entries, durationMs };
  }

  private preempt(request: EngineRequest, now: number): void {
    this.kvCache.free(request.numBlocks);
    request.numBlocks = 0;
    request.numComputedTokens = 0;
    request.numPreemptions += 1;
    request.pendingEvents.push({ type: 'PREEMPTED', timestamp: now });
    this.waiting.unshift(request);
  }

  private complete(plan: StepPlan): void {
    this.stepCounter += 1;
    const timestamp = this.clock();
    const outputs: StageEngineOutput[] = [];
    for (const { request, kind, numTokens } of plan.entries) {
      // Aborted or preempted while the step ran: its work is void.
      if (this.requests.get(request.requestId) !== request || !this.running.includes(request)) continue;
      request.numComputedTokens += numTokens;
      if (kind === 'prefill' && request.numPreemptions === 0) this.kvCache.cachePrompt(request.promptTokenIds);
      const tokenId = this.options.sampleToken(this.random.next(), request.outputTokenIds);
      request.outputTokenIds.push(tokenId);
      const finishReason = this.finishReasonOf(request);
      outputs.push({
        requestId: request.requestId,
        numNewTokens: 1,
        newTokenIds: [tokenId],
        finishReason,
        events: request.pendingEvents.length > 0 ? request.pendingEvents.splice(0) : undefined,
        numCachedTokens: request.cachedTokensToReport,
      });
      request.cachedTokensToReport = undefined;
      if (finishReason !== undefined) this.finish(request);
    }
    const schedulerStats = this.takeStatsIfDue();
    if (outputs.length > 0 || schedulerStats !== undefined) this.buffered.push({ timestamp, outputs, schedulerStats });
  }

  private finishReasonOf(request: EngineRequest): FinishReason | undefined {
    const generated = request.outputTokenIds.length;
    if (generated >= request.maxTokens) return 'length';
    const { probability, afterFraction } = this.options.stopPolicy;
    if (generated >= Math.max(1, afterFraction * request.maxTokens) && this.random.chance(probability)) return 'stop';
    return undefined;
  }

  private finish(request: EngineRequest): void {
    this.requests.delete(request.requestId);
    removeFrom(this.running, request);
    this.kvCache.free(request.numBlocks);
    request.numBlocks = 0;
  }

  /** The scheduler stats of this step, if this replica's 1 Hz gate lets them through. */
  private takeStatsIfDue(): ReturnType<typeof createSchedulerStats> | undefined {
    if (!this.statsDirty || !this.throttle.shouldEmit(this.throttleKey)) return undefined;
    const stats = createSchedulerStats({
      numRunningReqs: this.running.length,
      numWaitingReqs: this.waiting.length,
      stepCounter: this.stepCounter,
      kvCacheUsage: this.kvCache.usage,
      prefixCacheStats: this.prefixCacheStats,
    });
    this.prefixCacheStats = createPrefixCacheStats();
    this.statsDirty = false;
    return stats;
  }

  /** After going idle, one stats-only step once the gate reopens, so running/waiting read 0. */
  private armIdleStats(): void {
    if (!this.statsDirty || this.idleStatsTimer !== undefined) return;
    this.idleStatsTimer = setTimeout(() => {
      this.idleStatsTimer = undefined;
      if (!this.started || this.running.length > 0 || this.waiting.length > 0) return;
      const schedulerStats = this.takeStatsIfDue();
      if (schedulerStats !== undefined) this.buffered.push({ timestamp: this.clock(), outputs: [], schedulerStats });
      else this.armIdleStats();
    }, this.throttle.intervalSeconds * 1000);
    this.idleStatsTimer.unref();
  }
}

function removeFrom<T>(list: T[], item: T): void {
  const index = list.indexOf(item);
  if (index >= 0) list.splice(index, 1);
}
