import { wallClockSeconds } from './clock';
import {
  type EngineCoreEvent,
  type EngineCoreEventType,
  type FinishReason,
  type FinishedRequestStats,
  type PrefillStats,
  PromptTokenStats,
  type RequestStateStats,
} from './types';

/** One request's part of a batch of engine-core outputs (vLLM's `EngineCoreOutput` plus what the frontend knows). */
export interface EngineCoreOutputUpdate {
  /** `len(output.new_token_ids)`; with speculative decoding one output can carry several tokens. */
  numNewTokens: number;
  /** Engine-core monotonic seconds of the output batch. */
  engineCoreTimestamp: number;
  /** The frontend has not processed an output of this request yet: this output carries its first token. */
  isPrefilling: boolean;
  promptLen: number;
  /** Where the prompt tokens came from. Without it, the whole prompt counts as computed (vLLM v0.11 behaviour). */
  prefillStats?: PrefillStats | null;
  /** Lifecycle events the engine attached to this output. */
  events?: readonly EngineCoreEvent[] | null;
  /** Only hosts that compute NaNs in logits (`VLLM_COMPUTE_NANS_IN_LOGITS`) report it. */
  numNansInLogits?: number;
}

export interface FinishedRequestInput {
  finishReason: FinishReason;
  numPromptTokens: number;
  maxTokensParam?: number | null;
  numCachedTokens?: number;
  requestId?: string | null;
}

export interface IterationStatsOptions {
  /**
   * Frontend wall clock seconds of this iteration. Without it, the wall clock is read when a TTFT or an e2e
   * latency first needs it: a step of decode tokens only never reads the clock.
   */
  iterationTimestamp?: number;
}

/**
 * vLLM's `IterationStats`: what the frontend learned from one batch of engine-core outputs.
 *
 * Two clock domains, never mixed: TTFT and e2e latency are frontend wall clock (`iterationTimestamp` minus the
 * request's `arrivalTime`); ITL and the queued / prefill / decode / inference intervals are differences of
 * engine-core monotonic timestamps.
 */
export class IterationStats {
  /** The iteration's wall clock seconds once given or read; undefined until then. */
  private stamp: number | undefined;
  numGenerationTokens = 0;
  readonly promptTokenStats = new PromptTokenStats();
  numPreemptedReqs = 0;
  finishedRequests: FinishedRequestStats[] = [];
  /** One entry per finished parent request: its (largest child's) generation token count. */
  maxNumGenerationTokensIter: number[] = [];
  /** One entry per finished parent request: its `n` sampling parameter. */
  nParamsIter: number[] = [];
  timeToFirstTokensIter: number[] = [];
  /** One entry per non-first output (not per token). */
  interTokenLatenciesIter: number[] = [];
  numCorruptedReqs = 0;

  constructor({ iterationTimestamp }: IterationStatsOptions = {}) {
    this.stamp = iterationTimestamp;
  }

  /**
   * Frontend wall clock seconds of this iteration (vLLM's `iteration_timestamp`): as given, else read from
   * the wall clock on first use and kept. Reading it lazily is vLLM's stamp taken a few microseconds later,
   * within the same step; it saves a clock read per decode step, which needs none.
   */
  get iterationTimestamp(): number {
    return (this.stamp ??= wallClockSeconds());
  }

  set iterationTimestamp(seconds: number) {
    this.stamp = seconds;
  }

  /**
   * Empties this object for a new iteration, stamped `iterationTimestamp` or, without it, when first needed,
   * so one object can serve every poll of a caller that is done with the previous contents (nothing may
   * still hold it).
   * @internal
   */
  restart(iterationTimestamp?: number): this {
    this.stamp = iterationTimestamp;
    this.numGenerationTokens = 0;
    const prompt = this.promptTokenStats;
    prompt.computed = prompt.localCacheHit = prompt.externalKvTransfer = prompt.cachedTokens = prompt.total = 0;
    this.numPreemptedReqs = 0;
    emptyInPlace(this.finishedRequests);
    emptyInPlace(this.maxNumGenerationTokensIter);
    emptyInPlace(this.nParamsIter);
    emptyInPlace(this.timeToFirstTokensIter);
    emptyInPlace(this.interTokenLatenciesIter);
    this.numCorruptedReqs = 0;
    return this;
  }

  /** All prompt tokens of the requests that started producing output in this iteration. */
  get numPromptTokens(): number {
    return this.promptTokenStats.total;
  }

  private timeSince(startWallSeconds: number): number {
    return this.iterationTimestamp - startWallSeconds;
  }

  /** @internal */
  updateFromOutput(output: EngineCoreOutputUpdate, reqStats: RequestStateStats): void {
    this.updateFromNewTokens(output.numNewTokens, output.isPrefilling, output.promptLen, output.prefillStats, reqStats);
    if (!reqStats.isCorrupted && (output.numNansInLogits ?? 0) > 0) {
      reqStats.isCorrupted = true;
    }
    if (output.events) {
      this.updateFromEvents(output.events, reqStats);
    }
    this.updateTokenTimestamps(output.engineCoreTimestamp, output.isPrefilling, reqStats);
  }

  /**
   * The token part of `updateFromOutput`, from plain values: the path that applies each output as it
   * arrives allocates no update object per token. Call `updateTokenTimestamps` after it (after the
   * output's events, when it has some).
   * @internal
   */
  updateFromNewTokens(
    numNewTokens: number,
    isPrefilling: boolean,
    promptLen: number,
    prefillStats: PrefillStats | null | undefined,
    reqStats: RequestStateStats,
  ): void {
    this.numGenerationTokens += numNewTokens;
    if (isPrefilling) {
      if (prefillStats) {
        this.promptTokenStats.updateFromOutput(prefillStats);
      } else {
        // vLLM v0.11 counted the whole prompt; newer engines attach PrefillStats with the cached part split off.
        this.promptTokenStats.computed += promptLen;
        this.promptTokenStats.total += promptLen;
      }
      const firstTokenLatency = this.timeSince(reqStats.arrivalTime);
      this.timeToFirstTokensIter.push(firstTokenLatency);
      reqStats.firstTokenLatency = firstTokenLatency;
    }
    reqStats.numGenerationTokens += numNewTokens;
  }

  /**
   * The batch-level "new tokens" event: a re-prefill after a preemption is not a new first token, because
   * isPrefilling is the frontend's per-request flag and is already false by then.
   * @internal
   */
  updateTokenTimestamps(engineCoreTimestamp: number, isPrefilling: boolean, reqStats: RequestStateStats): void {
    if (isPrefilling) {
      reqStats.firstTokenTs = engineCoreTimestamp;
    } else {
      this.interTokenLatenciesIter.push(engineCoreTimestamp - reqStats.lastTokenTs);
    }
    reqStats.lastTokenTs = engineCoreTimestamp;
  }

  /** @internal */
  updateFromEvents(events: readonly EngineCoreEvent[], reqStats: RequestStateStats): void {
    for (const event of events) this.updateFromEvent(event.type, event.timestamp, reqStats);
  }

  /**
   * One lifecycle event of a request, as `updateFromEvents` applies each.
   * @internal
   */
  updateFromEvent(type: EngineCoreEventType, timestamp: number, reqStats: RequestStateStats): void {
    switch (type) {
      case 'QUEUED':
        reqStats.queuedTs = timestamp;
        break;
      case 'SCHEDULED':
        // Only the first scheduling counts: time spent re-queued after a preemption belongs to prefill/decode.
        if (reqStats.scheduledTs === 0) reqStats.scheduledTs = timestamp;
        break;
      case 'PREEMPTED':
        this.numPreemptedReqs += 1;
        reqStats.numPreemptions += 1;
        break;
    }
  }

  /** @internal */
  updateFromFinishedRequest(finished: FinishedRequestInput, reqStats: RequestStateStats): void {
    const e2eLatency = this.timeSince(reqStats.arrivalTime);
    const queuedTime = reqStats.scheduledTs - reqStats.queuedTs;
    const prefillTime = reqStats.firstTokenTs - reqStats.scheduledTs;
    const decodeTime = reqStats.lastTokenTs - reqStats.firstTokenTs;
    const inferenceTime = reqStats.lastTokenTs - reqStats.scheduledTs;
    // The prefill's token is not an "output token" of the decode phase.
    const meanTimePerOutputToken = reqStats.numGenerationTokens - 1 > 0 ? decodeTime / (reqStats.numGenerationTokens - 1) : 0;

    this.finishedRequests.push({
      finishReason: finished.finishReason,
      requestId: finished.requestId ?? null,
      e2eLatency,
      numPromptTokens: finished.numPromptTokens,
      numPreemptions: reqStats.numPreemptions,
      numGenerationTokens: reqStats.numGenerationTokens,
      maxTokensParam: finished.maxTokensParam ?? null,
      queuedTime,
      prefillTime,
      inferenceTime,
      decodeTime,
      meanTimePerOutputToken,
      isCorrupted: reqStats.isCorrupted,
      numCachedTokens: finished.numCachedTokens ?? 0,
    });

    if (reqStats.isCorrupted) this.numCorruptedReqs += 1;
  }
}

/**
 * Empties a list and keeps its storage for the next iteration: a decode step's first push into a
 * fresh list allocates its backing store again (about 150 bytes for one output), and
 * `length = 0` is a runtime call that costs more than the pops V8 inlines.
 */
function emptyInPlace(list: unknown[]): void {
  while (list.length !== 0) list.pop();
}
