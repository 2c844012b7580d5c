import {
  createPrefixCacheStats,
  createSchedulerStats,
  type EngineCoreEvent,
  type FinishReason,
  type PrefixCacheStats,
  type SchedulerStats,
} from 'omni-otel-metrics';
import { KvCacheManager } from './kv-cache-manager';
import { SeededRandom } from './seeded-random';
import type { StageEngineOutput, StageInput } from './stage-engine';
import { SteppedEngine, type SteppedEngineOptions } from './stepped-engine';

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

export interface SimulatedEngineOptions extends SteppedEngineOptions {
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
  /** The wait for the previous stage's KV, reported once with the first output (vLLM-Omni's kv_transfer_params). */
  kvWaitToReport?: StageInput['kvWait'];
}

interface ScheduledEntry {
  readonly request: EngineRequest;
  readonly kind: 'prefill' | 'decode';
  /** Tokens computed in this step. */
  readonly numTokens: number;
}

/**
 * A per-replica simulated LLM engine core (vLLM V1 reduced): a FIFO waiting queue and a running
 * batch, a KV block budget with recompute preemption (the newest running request is evicted back
 * to the front of the waiting queue), prefix caching of prompt blocks, prefill time that grows with
 * the computed prompt length, per-sequence decode time, and EOS (`stop`) vs `length` finishes.
 *
 * The step loop itself (timer, output buffer, 1 Hz stats gate, idle stats step) is `SteppedEngine`'s.
 */
export class SimulatedEngine extends SteppedEngine<ScheduledEntry> {
  readonly kvCache: KvCacheManager;
  private readonly options: SimulatedEngineOptions;
  private readonly random: SeededRandom;
  private readonly requests = new Map<string, EngineRequest>();
  private readonly waiting: EngineRequest[] = [];
  private readonly running: EngineRequest[] = [];
  private prefixCacheStats: PrefixCacheStats = createPrefixCacheStats();

  constructor(options: SimulatedEngineOptions) {
    if (!Number.isInteger(options.maxNumSeqs) || options.maxNumSeqs < 1) {
      throw new RangeError(`maxNumSeqs must be a positive integer; got ${options.maxNumSeqs}`);
    }
    super(options);
    this.options = options;
    this.kvCache = new KvCacheManager({ numBlocks: options.numKvBlocks, blockSize: KV_BLOCK_SIZE });
    this.random = new SeededRandom(options.seed);
  }

  get numWaiting(): number {
    return this.waiting.length;
  }

  get numRunning(): number {
    return this.running.length;
  }

  submit(input: StageInput): void {
    if (!input.final) throw new Error(`an LLM stage takes the whole prompt at once (request ${input.requestId})`);
    if (this.requests.has(input.requestId)) throw new Error(`request ${input.requestId} is already on replica ${this.throttleKey}`);
    if (input.tokenIds.length === 0) throw new RangeError(`request ${input.requestId} has an empty prompt`);
    if (!Number.isInteger(input.maxTokens) || input.maxTokens < 1) {
      throw new RangeError(`max_tokens must be a positive integer; got ${input.maxTokens}`);
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
      kvWaitToReport: input.kvWait,
    };
    this.requests.set(request.requestId, request);
    this.waiting.push(request);
    this.markStatsDirty();
    this.kick();
  }

  abort(requestId: string): void {
    const request = this.requests.get(requestId);
    if (request !== undefined) {
      this.requests.delete(requestId);
      removeFrom(this.waiting, request);
      removeFrom(this.running, request);
      this.kvCache.free(request.numBlocks);
      this.markStatsDirty();
    }
    this.dropBufferedOutputs(requestId);
    this.kick();
  }

  protected forgetAllWork(): void {
    this.requests.clear();
    this.waiting.length = 0;
    this.running.length = 0;
    this.kvCache.reset();
  }

  /** Idle without waiting or running requests; an empty plan with work pending (everything preempted) still takes a step. */
  protected planStep(): ScheduledEntry[] | undefined {
    if (this.waiting.length === 0 && this.running.length === 0) return undefined;
    return this.schedule();
  }

  protected stepDurationMs(entries: readonly ScheduledEntry[]): number {
    const { stepBaseMs, prefillMsPerToken, decodeMsPerSeq } = this.options.timing;
    let durationMs = stepBaseMs;
    for (const entry of entries) durationMs += entry.kind === 'prefill' ? entry.numTokens * prefillMsPerToken : decodeMsPerSeq;
    return durationMs;
  }

  private schedule(): ScheduledEntry[] {
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

    if (entries.length > 0 || preempted) this.markStatsDirty();
    return entries;
  }

  private preempt(request: EngineRequest, now: number): void {
    this.kvCache.free(request.numBlocks);
    request.numBlocks = 0;
    request.numComputedTokens = 0;
    request.numPreemptions += 1;
    request.pendingEvents.push({ type: 'PREEMPTED', timestamp: now });
    this.waiting.unshift(request);
  }

  protected runStep(entries: readonly ScheduledEntry[]): StageEngineOutput[] {
    const outputs: StageEngineOutput[] = [];
    for (const { request, kind, numTokens } of entries) {
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
        kvTransferParams: request.kvWaitToReport,
      });
      request.cachedTokensToReport = undefined;
      request.kvWaitToReport = undefined;
      if (finishReason !== undefined) this.finish(request);
    }
    return outputs;
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

  /** Prefix-cache counters cover the interval since the last snapshot, so they restart here. */
  protected schedulerStats(): SchedulerStats {
    const stats = createSchedulerStats({
      numRunningReqs: this.running.length,
      numWaitingReqs: this.waiting.length,
      stepCounter: this.stepCounter,
      kvCacheUsage: this.kvCache.usage,
      prefixCacheStats: this.prefixCacheStats,
    });
    this.prefixCacheStats = createPrefixCacheStats();
    return stats;
  }
}

function removeFrom<T>(list: T[], item: T): void {
  const index = list.indexOf(item);
  if (index >= 0) list.splice(index, 1);
}
