import type { SpanContext } from '@opentelemetry/api';
import { DEFAULT_AUDIO_SAMPLE_RATE, resolveAudioSampleRate } from '../audio/sample-rate';
import { audioChunkPcmBytes } from '../audio/frames';
import { OrchestratorAggregator, type ReplicaResolver } from '../recorders/orchestrator-aggregator';
import { waitingRequests } from '../recorders/pipeline-metrics';
import type { OmniRecorders } from '../recorders/recorders';
import { monotonicSeconds } from '../stats/clock';
import { LimitedWarning } from '../../views/common/diag-warnings';
import type { FailureReason } from '../../views/catalog/stage-service-families';
import type { ExemplarScope } from '../../views/store/exemplar-scope';
import type { StageReplicaMap } from '../../views/stage-replica-map';
import { EngineStatsFeed } from './engine-stats-feed';
import type { EngineCoreOutput, EngineCoreOutputs, OmniRequestOutput, ReceiveReceipt, StagePoolLike, StageRequest, TransferReceipt } from './host-contract';
import { RealtimeVadObserver } from './realtime-vad-observer';
import { activeTrace, requestTraceOf } from './request-trace';
import { observeFinishedStages } from './stage-finish';

/**
 * How a `generate` stream ended, as its consumer saw it; `unobserved`: the stream turned out to
 * be one the hooks cannot watch (its iterator refuses them), so its request is forgotten uncounted.
 */
export type GenerateOutcome = 'completed' | 'abandoned' | 'failed' | 'unobserved';

/** Per-stream serving state: lives from `generateStarted` to `generateEnded`, never longer. */
interface GenerateState {
  readonly requestId: string;
  /** Monotonic seconds; every interval below is measured on this one clock. */
  readonly start: number;
  /** Monotonic seconds of the last output (or the start): what the idle timeout measures. */
  lastActivity: number;
  /** Counted once: as a success at its finished output, or as a failure (abort, or the stream's end). */
  settled: 'open' | 'succeeded' | 'failed';
  /** Monotonic seconds of the request's first stage submit (`request_queue_wait_s`). */
  firstSubmit?: number;
  /** Monotonic seconds of the request's first output, text or audio (the `slo` option's first output). */
  firstOutput: number | undefined;
  /** Seconds from the start to the first audio packet, once one arrived. */
  audioTtfp: number | undefined;
  audioStage?: number;
  audioReplica?: number;
  readonly arrivals: number[];
  readonly bytes: number[];
  sampleRate?: number;
  /** The request's label values (`requestLabels`), read once at the start; undefined when the option is off. */
  labels: readonly string[] | undefined;
  /** With exemplars on, the request's sampled trace (read at the start, where the host's span is active), if it has one. */
  trace: SpanContext | undefined;
}

/** Something that knows the orchestrator's sticky bindings (the patched orchestrator instance). */
export interface BindingSource {
  readonly stagePools?: readonly StagePoolLike[];
}

export interface RequestLifetimeOptions {
  /** A request with no activity for this long is ended as an abort; default 10 minutes. */
  readonly requestIdleTimeoutMillis?: number;
  /** Requests tracked at once; past it the oldest is ended as an abort to make room. Default 100 000. */
  readonly maxTrackedRequests?: number;
}

export interface PipelineObserverOptions extends RequestLifetimeOptions {
  /**
   * The store's exemplar scope, when it keeps exemplars: a served request's records are made within
   * its trace (the span active where the host called `generate`, else its `traceparent`), however
   * its outputs arrive; an engine poll's within the span active around the poll.
   */
  readonly exemplarScope?: ExemplarScope;
}

export const DEFAULT_REQUEST_IDLE_TIMEOUT_MILLIS = 600_000;
export const DEFAULT_MAX_TRACKED_REQUESTS = 100_000;

/**
 * The call sites of the multi-stage design, independent of how they are reached (patched host
 * methods or diagnostics_channel messages): admission and cleanup (running / waiting), the final
 * output (success by reason, e2e, tokens, audio finalize), the audio stream (TTFP, underrun /
 * continuity), cross-stage transfers, and per-replica engine statistics.
 */
export class PipelineObserver {
  /** Admitted requests and when (monotonic seconds); the orchestrator runs `admitted.size` of them. */
  private readonly admitted = new Map<string, number>();
  /**
   * One entry per `generate` call, keyed by the token `generateStarted` returned: calls that share
   * a request id are separate requests to their clients and are counted separately.
   */
  private readonly generating = new Map<object, GenerateState>();
  /** Open streams per request id, oldest first: what id-only callers (channels, the sweep) address. */
  private readonly streamsById = new Map<string, object[]>();
  /**
   * The token of the stream last started for each request object: while that stream is open, a
   * `generate` of the very same object is the host calling itself for the request, not a new one.
   * Weak, so that nothing here keeps a request (or a stream it references) alive.
   */
  private readonly servedRequests = new WeakMap<object, object>();
  private readonly idleTimeoutSeconds: number;
  private readonly maxTracked: number;
  private readonly exemplarScope: ExemplarScope | undefined;
  private readonly ended = new LimitedWarning();
  /** Streams whose lifetime object was collected while still tracked: nobody closed them. Ending an ended stream does nothing. */
  private readonly dropped = new FinalizationRegistry<object>((token) => this.generateEnded(token, 'abandoned'));
  /** Engine statistics feed only the upstream families: with logStats off there is nothing to build. */
  private readonly feed: EngineStatsFeed | undefined;
  /**
   * Transfers of every orchestrator: request ids are unique per handle (admissions are keyed by
   * them too), so one replica cache serves all; each call brings its orchestrator's bindings.
   */
  private readonly transfers: OrchestratorAggregator;
  private orchestratorSeen = false;
  /** The realtime sessions' server-side VAD. */
  readonly realtime: RealtimeVadObserver;

  constructor(
    private readonly recorders: OmniRecorders,
    stageReplicaMap: StageReplicaMap,
    options: PipelineObserverOptions = {},
  ) {
    this.idleTimeoutSeconds = (options.requestIdleTimeoutMillis ?? DEFAULT_REQUEST_IDLE_TIMEOUT_MILLIS) / 1000;
    this.maxTracked = options.maxTrackedRequests ?? DEFAULT_MAX_TRACKED_REQUESTS;
    this.exemplarScope = options.exemplarScope;
    this.feed = recorders.statLogger && new EngineStatsFeed(stageReplicaMap, recorders.statLogger);
    this.transfers = new OrchestratorAggregator({ transferEmitter: recorders.transfer });
    this.realtime = new RealtimeVadObserver(recorders, this.maxTracked);
  }

  // ---- orchestrator side ----

  requestAdded(requestId: string): void {
    this.orchestratorSeen = true;
    if (this.admitted.has(requestId)) return;
    if (this.admitted.size >= this.maxTracked) this.evictOldestAdmitted();
    this.admitted.set(requestId, monotonicSeconds());
    this.publishGauges();
  }

  /** Idempotent: only the first cleanup of an admitted request counts. */
  requestCleanedUp(requestId: string): void {
    this.feed?.released(requestId);
    this.transfers.onFinalizeRequest(requestId);
    if (!this.admitted.delete(requestId)) return;
    this.publishGauges();
  }

  stageSubmitted(request: StageRequest): void {
    // Entering a stage is activity: the idle timeout counts from the last one.
    if (this.admitted.has(request.requestId)) this.admitted.set(request.requestId, monotonicSeconds());
    const stream = this.streamOf(request.requestId);
    const state = stream === undefined ? undefined : this.generating.get(stream);
    if (state !== undefined) state.firstSubmit ??= monotonicSeconds();
    this.feed?.submitted(request);
  }

  enginePolled(stageId: number, replicaId: number, outputs: EngineCoreOutputs | undefined, source?: BindingSource): void {
    const scope = this.exemplarScope;
    if (scope === undefined) return this.applyPoll(stageId, replicaId, outputs, source);
    // One poll serves many requests: the span active around it is read once, not by each of its records.
    const previous = scope.enter(activeTrace());
    try {
      this.applyPoll(stageId, replicaId, outputs, source);
    } finally {
      scope.leave(previous);
    }
  }

  private applyPoll(stageId: number, replicaId: number, outputs: EngineCoreOutputs | undefined, source: BindingSource | undefined): void {
    const stageService = this.recorders.stageService;
    if (outputs) {
      this.feed?.polled(stageId, replicaId, outputs);
      const waiting = outputs.schedulerStats?.numWaitingReqs ?? outputs.numWaitingRequests;
      if (waiting !== undefined) stageService.setReplicaWaiting(stageId, replicaId, waiting);
      const list = outputs.outputs;
      for (let i = 0; i < list.length; i++) {
        const kv = (list[i] as EngineCoreOutput).kvTransferParams;
        // Present and not null: a host bridging Python's `None` sends null, which is no wait.
        if (kv?.kvWaitS !== undefined && kv.kvWaitS !== null) stageService.observeKvWait(kv.connectorType, kv.kvWaitS);
      }
    }
    const pool = source?.stagePools?.[stageId];
    if (pool?.inflight !== undefined && pool.outputsQueueSize !== undefined) {
      this.recorders.stageReplica.observe([
        { stage: stageId, replica: replicaId, inflight: pool.inflight(replicaId), outputsQueueSize: pool.outputsQueueSize(replicaId) },
      ]);
    }
  }

  transferSent(receipt: TransferReceipt | undefined, source?: BindingSource): void {
    if (!receipt) return;
    if (receipt.fromReplica !== undefined) this.transfers.cacheReplica(receipt.fromStage, receipt.requestId, receipt.fromReplica);
    if (receipt.toReplica !== undefined) this.transfers.cacheReplica(receipt.toStage, receipt.requestId, receipt.toReplica);
    this.transfers.recordTransferTx(receipt, bindingsOf(source));
  }

  transferReceived(receipt: ReceiveReceipt | undefined, source?: BindingSource): void {
    if (!receipt) return;
    this.transfers.recordTransferRx(
      {
        stageId: receipt.stageId,
        fromStage: receipt.fromStage,
        requestId: receipt.requestId,
        replicaId: receipt.replicaId,
        rxDecodeTimeMs: receipt.rxDecodeTimeMs,
        rxInFlightTimeMs: receipt.inFlightTimeMs,
      },
      bindingsOf(source),
    );
  }

  // ---- serving side ----

  /**
   * Starts tracking one served stream; returns the token its later calls name it by. `request` is
   * what the host passed to `generate`: with `requestLabels`, the request's label values are read
   * from it here, once, and with exemplars on, its trace. The very request object of a stream
   * still open is the host calling `generate` again for that request (directly, from inside its
   * stream, or from a label source): the token returned then tracks nothing, and the request is
   * counted once, by the stream started first.
   */
  generateStarted(requestId: string, request?: unknown): object {
    const token = {};
    const requestObject = typeof request === 'object' && request !== null ? request : undefined;
    if (requestObject !== undefined) {
      const open = this.servedRequests.get(requestObject);
      if (open !== undefined && this.generating.has(open)) return token;
      this.servedRequests.set(requestObject, token);
    }
    if (this.generating.size >= this.maxTracked) this.evictOldestGenerating();
    const now = monotonicSeconds();
    const state: GenerateState = {
      requestId,
      start: now,
      lastActivity: now,
      settled: 'open',
      firstOutput: undefined,
      audioTtfp: undefined,
      arrivals: [],
      bytes: [],
      labels: undefined,
      trace: undefined,
    };
    // Tracked before the label sources run: one that calls back into `generate` finds the request served.
    this.generating.set(token, state);
    state.labels = this.recorders.requestLabelled?.labeler.valuesOf(request);
    state.trace = this.exemplarScope !== undefined ? requestTraceOf(request) : undefined;
    const open = this.streamsById.get(requestId);
    if (open === undefined) this.streamsById.set(requestId, [token]);
    else open.push(token);
    this.publishGauges();
    return token;
  }

  /**
   * The stream `token` names ends, as abandoned, when `lifetime` is garbage-collected, if it is
   * still tracked then. `lifetime` should be a small object only the stream holds: V8's
   * young-generation collections keep a registered object, and all it references, alive.
   */
  endWhenCollected(lifetime: object, token: object): void {
    this.dropped.register(lifetime, token);
  }

  /** The newest open stream of a request id, for callers that know only the id. */
  streamOf(requestId: string): object | undefined {
    const open = this.streamsById.get(requestId);
    return open?.[open.length - 1];
  }

  generateOutput(token: object, output: OmniRequestOutput): void {
    const state = this.generating.get(token);
    if (state === undefined) return;
    // Its outputs arrive from the engine loop, outside the request's own context: its trace is named for their records.
    if (this.exemplarScope === undefined) return this.applyOutput(state, output);
    this.inRequestTrace(state, () => this.applyOutput(state, output));
  }

  private applyOutput(state: GenerateState, output: OmniRequestOutput): void {
    const now = monotonicSeconds();
    this.exemplarScope?.shareClockReading(now);
    state.lastActivity = now;
    // An aborted request's later outputs are the abort's aftermath, not its result.
    if (state.settled === 'failed') return;
    state.firstOutput ??= now;
    const recorders = this.recorders;
    const { audio, pipeline } = recorders;
    const mmOut = output.multimodalOutput;
    if (output.finalOutputType === 'audio' && mmOut?.audio !== undefined && mmOut.audio !== null) {
      if (state.audioReplica === undefined) {
        // First audio packet: TTFP once per request, on the replica that produced it.
        state.audioStage = output.stageId;
        state.audioReplica = output.replicaId;
        state.audioTtfp = now - state.start;
        const labelled = recorders.requestLabelled;
        if (labelled !== undefined && state.labels !== undefined) labelled.observeAudioTtfp(state.labels, output.stageId, output.replicaId, state.audioTtfp);
        else audio.observeAudioFirstPacket({ stageId: output.stageId, replicaId: output.replicaId, arrivalTs: state.start, nowTs: now });
      }
      const bytes = audioChunkPcmBytes(mmOut);
      if (bytes > 0) {
        state.arrivals.push(Math.max(now - state.start, 0));
        state.bytes.push(bytes);
        state.sampleRate ??= resolveAudioSampleRate(mmOut);
      }
    }
    if (output.finished && state.settled === 'open') {
      state.settled = 'succeeded';
      const e2e = now - state.start;
      const finishReason = output.finishReason || 'stop';
      const labelled = state.labels === undefined ? undefined : recorders.requestLabelled;
      if (labelled !== undefined) labelled.requestSucceeded(state.labels as readonly string[], e2e, finishReason);
      else pipeline.requestSucceeded(e2e, finishReason);
      let promptTokens = 0;
      let generationTokens = 0;
      // The first stage's own: the tokens of the answer's text, which an OpenAI `usage` reports (what `slo` divides by).
      let answerTokens = 0;
      for (const stage of output.stageMetrics ?? []) {
        if (stage.stageId === 0) {
          promptTokens += stage.numTokensIn ?? 0;
          answerTokens += stage.numTokensOut ?? 0;
        }
        generationTokens += stage.numTokensOut ?? 0;
      }
      if (labelled !== undefined) labelled.observeTokens(state.labels as readonly string[], promptTokens, generationTokens);
      else pipeline.observeTokens(promptTokens, generationTokens);
      const audioRtf = audio.observeModalityAtFinalize({
        outputType: output.finalOutputType,
        stageId: output.stageId,
        replicaId: output.replicaId,
        stageMetrics: output.stageMetrics?.find((stage) => stage.stageId === output.stageId),
        multimodalOutput: mmOut,
      });
      // Judged on the very values recorded above: the e2e sample, the audio TTFP and RTF.
      recorders.slo?.requestFinished(state.labels, finishReason, {
        firstOutputSeconds: state.firstOutput - state.start,
        e2eSeconds: e2e,
        outputTokens: answerTokens,
        audioTtfpSeconds: state.audioTtfp,
        audioRtf,
      });
      observeFinishedStages(recorders, output);
      if (state.firstSubmit !== undefined) {
        const queueWait = state.firstSubmit - state.start;
        if (labelled !== undefined) labelled.observeQueueWait(state.labels as readonly string[], queueWait);
        else recorders.stageService.observeQueueWait(queueWait);
      }
    }
  }

  /**
   * The host aborted a request: each of its open streams counts as failed (`client_abort`) now,
   * whatever ends the stream later.
   */
  requestAborted(requestId: string): void {
    for (const token of this.streamsById.get(requestId) ?? []) {
      const state = this.generating.get(token);
      if (state !== undefined && state.settled === 'open') this.inRequestTrace(state, () => this.countFailure(state, 'client_abort'));
    }
  }

  /**
   * The stream is over. A request that never produced its final output counts as aborted, once,
   * whatever ended it, with the failure reason the end implies (`reason` overrides it).
   */
  generateEnded(token: object, outcome: GenerateOutcome, reason?: FailureReason): void {
    const state = this.generating.get(token);
    if (state === undefined) return;
    this.generating.delete(token);
    this.forgetStream(state.requestId, token);
    if (outcome === 'unobserved') return this.publishGauges();
    this.inRequestTrace(state, () => this.endStream(state, outcome, reason));
    this.publishGauges();
  }

  private endStream(state: GenerateState, outcome: GenerateOutcome, reason: FailureReason | undefined): void {
    if (state.settled === 'open') this.countFailure(state, reason ?? failureReasonOf(outcome));
    // Upstream finalizes the stream after its loop ends normally: a stream run to its end, or left
    // by the consumer after the final output. A disconnect mid-stream or a host error skips it.
    const endedNormally = outcome === 'completed' || (outcome === 'abandoned' && state.settled === 'succeeded');
    const { audio } = this.recorders;
    if (endedNormally && state.arrivals.length > 0 && state.audioReplica !== undefined) {
      audio.observeAudioStreamingFinalize({
        stageId: state.audioStage ?? 0,
        replicaId: state.audioReplica,
        chunkArrivalTimesS: state.arrivals,
        chunkBytes: state.bytes,
        sampleRate: state.sampleRate ?? DEFAULT_AUDIO_SAMPLE_RATE,
      });
    }
  }

  /** Runs `work` within the request's trace when exemplars are on. */
  private inRequestTrace(state: GenerateState, work: () => void): void {
    const scope = this.exemplarScope;
    if (scope === undefined) return work();
    scope.within(state.trace, work);
  }

  /**
   * Ends what has been idle longer than the idle timeout: a stream nobody iterates or closes is
   * counted as an abort, an admission never cleaned up is released. Called periodically by the
   * instrumentation; `now` is monotonic seconds.
   */
  sweep(now: number = monotonicSeconds()): void {
    const cutoff = now - this.idleTimeoutSeconds;
    let endedStreams = 0;
    for (const [token, state] of this.generating) {
      if (state.lastActivity > cutoff) continue;
      this.generateEnded(token, 'abandoned', 'unknown');
      endedStreams++;
    }
    let released = 0;
    for (const [requestId, admittedAt] of this.admitted) {
      if (admittedAt > cutoff || this.streamsById.has(requestId)) continue;
      this.requestCleanedUp(requestId);
      released++;
    }
    if (endedStreams + released > 0) {
      this.ended.warn(
        `${endedStreams} request stream(s) and ${released} admission(s) idle for over ${this.idleTimeoutSeconds} s were ended (streams counted as aborts)`,
      );
    }
  }

  /** Forgets every request in flight without counting it (the instrumentation is being disabled): gauges return to 0. */
  settle(): void {
    for (const requestId of this.admitted.keys()) this.requestCleanedUp(requestId);
    this.generating.clear();
    this.streamsById.clear();
    this.feed?.stop();
    this.realtime.settle();
    this.publishGauges();
  }

  /** Replicas whose engine statistics are being built (for tests and debugging): live replicas only. */
  get trackedEngines(): number {
    return this.feed?.trackedEngines ?? 0;
  }

  /** Requests currently observed (for tests and debugging). */
  get trackedRequests(): { admitted: number; generating: number } {
    return { admitted: this.admitted.size, generating: this.generating.size };
  }

  /** `requests_success_total{finished_reason="abort"}` and `requests_failed_total{reason}`, as upstream pairs them. */
  private countFailure(state: GenerateState, reason: FailureReason): void {
    state.settled = 'failed';
    const { pipeline, stageService, requestLabelled } = this.recorders;
    if (requestLabelled !== undefined && state.labels !== undefined) return requestLabelled.requestFailed(state.labels, reason);
    pipeline.requestFailed();
    stageService.incRequestsFailed(reason);
  }

  private forgetStream(requestId: string, token: object): void {
    const open = this.streamsById.get(requestId);
    if (open === undefined) return;
    const at = open.indexOf(token);
    if (at >= 0) open.splice(at, 1);
    if (open.length === 0) this.streamsById.delete(requestId);
  }

  private evictOldestGenerating(): void {
    const oldest = this.generating.keys().next();
    if (oldest.done) return;
    this.generateEnded(oldest.value, 'abandoned', 'unknown');
    this.ended.warn(`more than ${this.maxTracked} requests in flight: the oldest is ended as an abort to make room`);
  }

  private evictOldestAdmitted(): void {
    const oldest = this.admitted.keys().next();
    if (oldest.done) return;
    this.requestCleanedUp(oldest.value);
    this.ended.warn(`more than ${this.maxTracked} admitted requests: the oldest is released to make room`);
  }

  /**
   * Running = the orchestrator's admitted requests (or, without an orchestrator hook, the streams
   * being served); waiting = served but not yet admitted, never below 0.
   */
  private publishGauges(): void {
    const tracked = this.generating.size;
    const running = this.orchestratorSeen ? this.admitted.size : tracked;
    const { pipeline } = this.recorders;
    pipeline.setRunning(running);
    pipeline.setWaiting(waitingRequests(tracked, running));
  }
}

/** The sticky replica bindings of the orchestrator a transfer came from (none when a channel reported it). */
function bindingsOf(source: BindingSource | undefined): ReplicaResolver | undefined {
  return source === undefined ? undefined : (stageId, requestId) => source.stagePools?.[stageId]?.getBoundReplicaId(requestId);
}

/** What a stream's end says about why its request failed. */
function failureReasonOf(outcome: GenerateOutcome): FailureReason {
  switch (outcome) {
    case 'abandoned':
      return 'client_disconnect';
    case 'failed':
      return 'stage_error';
    default:
      // A stream that ran out without its finished output: vLLM-Omni's cleanup default.
      return 'stage_error';
  }
}
