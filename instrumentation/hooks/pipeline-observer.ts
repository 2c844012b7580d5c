import { DEFAULT_AUDIO_SAMPLE_RATE, resolveAudioSampleRate } from '../audio/sample-rate';
import { audioChunkPcmBytes } from '../audio/frames';
import { OrchestratorAggregator, type TransferEmitter } from '../recorders/orchestrator-aggregator';
import { OmniRequestCounter, waitingRequests } from '../recorders/pipeline-metrics';
import type { OmniRecorders } from '../recorders/recorders';
import { monotonicSeconds } from '../stats/clock';
import type { StageReplicaMap } from '../../views/stage-replica-map';
import { EngineStatsFeed } from './engine-stats-feed';
import type { EngineCoreOutputs, OmniRequestOutput, ReceiveReceipt, StagePoolLike, StageRequest, TransferReceipt } from './host-contract';

/**
 * How a `generate` stream ended, as its consumer saw it; `unobserved`: the stream turned out to
 * be one the hooks cannot watch (its iterator refuses them), so its request is forgotten uncounted.
 */
export type GenerateOutcome = 'completed' | 'abandoned' | 'failed' | 'unobserved';

/** Per-request serving state: lives from `generateStarted` to `generateEnded`, never longer. */
interface GenerateState {
  /** Monotonic seconds; every interval below is measured on this one clock. */
  readonly start: number;
  finalized: boolean;
  audioStage?: number;
  audioReplica?: number;
  readonly arrivals: number[];
  readonly bytes: number[];
  sampleRate?: number;
}

/** Something that knows the orchestrator's sticky bindings (the patched orchestrator instance). */
export interface BindingSource {
  readonly stagePools?: readonly StagePoolLike[];
}

/** Requests tracked at once; beyond it new requests are not observed (memory stays bounded). */
const MAX_TRACKED_REQUESTS = 100_000;

/**
 * The call sites of the multi-stage design, independent of how they are reached (patched host
 * methods or diagnostics_channel messages): admission and cleanup (running / waiting), the final
 * output (success by reason, e2e, tokens, audio finalize), the audio stream (TTFP, underrun /
 * continuity), cross-stage transfers, and per-replica engine statistics.
 */
export class PipelineObserver {
  private readonly running = new OmniRequestCounter();
  private readonly admitted = new Set<string>();
  private readonly generating = new Map<string, GenerateState>();
  private readonly feed: EngineStatsFeed;
  private readonly aggregators = new WeakMap<object, OrchestratorAggregator>();
  private readonly unboundAggregator: OrchestratorAggregator;
  /** Forwards to the current recorders, so a rebuilt recorder set is used at once. */
  private readonly transferEmitter: TransferEmitter;
  private orchestratorSeen = false;

  constructor(
    private readonly recorders: () => OmniRecorders,
    stageReplicaMap: StageReplicaMap,
  ) {
    this.feed = new EngineStatsFeed(stageReplicaMap);
    this.transferEmitter = {
      observeSize: (fs, fr, ts, tr, bytes) => this.recorders().transfer.observeSize(fs, fr, ts, tr, bytes),
      observeTxTime: (fs, fr, ts, tr, seconds) => this.recorders().transfer.observeTxTime(fs, fr, ts, tr, seconds),
      observeRxTime: (fs, fr, ts, tr, seconds) => this.recorders().transfer.observeRxTime(fs, fr, ts, tr, seconds),
      observeInFlightTime: (fs, fr, ts, tr, seconds) => this.recorders().transfer.observeInFlightTime(fs, fr, ts, tr, seconds),
    };
    this.unboundAggregator = this.createAggregator(undefined);
  }

  // ---- orchestrator side ----

  requestAdded(requestId: string): void {
    this.orchestratorSeen = true;
    if (this.admitted.has(requestId) || this.admitted.size >= MAX_TRACKED_REQUESTS) return;
    this.admitted.add(requestId);
    this.running.increment();
    this.publishGauges();
  }

  /** Idempotent: only the first cleanup of an admitted request counts. */
  requestCleanedUp(requestId: string, source?: BindingSource): void {
    this.feed.released(requestId);
    this.aggregator(source).onFinalizeRequest(requestId);
    if (!this.admitted.delete(requestId)) return;
    this.running.decrement();
    this.publishGauges();
  }

  // Engine statistics feed only the upstream families: with logStats off there is nothing to build.
  stageSubmitted(request: StageRequest): void {
    if (this.recorders().statLogger) this.feed.submitted(request);
  }

  enginePolled(stageId: number, replicaId: number, outputs: EngineCoreOutputs | undefined, source?: BindingSource): void {
    const statLogger = this.recorders().statLogger;
    if (outputs && statLogger) this.feed.polled(stageId, replicaId, outputs, statLogger);
    const pool = source?.stagePools?.[stageId];
    if (pool?.inflight !== undefined && pool.outputsQueueSize !== undefined) {
      this.recorders().stageReplica.observe([
        { stage: stageId, replica: replicaId, inflight: pool.inflight(replicaId), outputsQueueSize: pool.outputsQueueSize(replicaId) },
      ]);
    }
  }

  transferSent(receipt: TransferReceipt | undefined, source?: BindingSource): void {
    if (!receipt) return;
    const aggregator = this.aggregator(source);
    if (receipt.fromReplica !== undefined) aggregator.cacheReplica(receipt.fromStage, receipt.requestId, receipt.fromReplica);
    if (receipt.toReplica !== undefined) aggregator.cacheReplica(receipt.toStage, receipt.requestId, receipt.toReplica);
    aggregator.recordTransferTx(receipt);
  }

  transferReceived(receipt: ReceiveReceipt | undefined, source?: BindingSource): void {
    if (!receipt) return;
    this.aggregator(source).recordTransferRx({
      stageId: receipt.stageId,
      requestId: receipt.requestId,
      replicaId: receipt.replicaId,
      rxTransferBytes: receipt.sizeBytes,
      rxDecodeTimeMs: receipt.rxDecodeTimeMs,
      rxInFlightTimeMs: receipt.inFlightTimeMs,
    });
  }

  // ---- serving side ----

  generateStarted(requestId: string): void {
    if (this.generating.has(requestId) || this.generating.size >= MAX_TRACKED_REQUESTS) return;
    this.generating.set(requestId, { start: monotonicSeconds(), finalized: false, arrivals: [], bytes: [] });
    this.publishGauges();
  }

  generateOutput(requestId: string, output: OmniRequestOutput): void {
    const state = this.generating.get(requestId);
    if (state === undefined) return;
    const now = monotonicSeconds();
    const { audio, pipeline } = this.recorders();
    const mmOut = output.multimodalOutput;
    if (output.finalOutputType === 'audio' && mmOut?.audio !== undefined && mmOut.audio !== null) {
      if (state.audioReplica === undefined) {
        // First audio packet: TTFP once per request, on the replica that produced it.
        state.audioStage = output.stageId;
        state.audioReplica = output.replicaId;
        audio.observeAudioFirstPacket({ stageId: output.stageId, replicaId: output.replicaId, arrivalTs: state.start, nowTs: now });
      }
      const bytes = audioChunkPcmBytes(mmOut);
      if (bytes > 0) {
        state.arrivals.push(Math.max(now - state.start, 0));
        state.bytes.push(bytes);
        state.sampleRate ??= resolveAudioSampleRate(mmOut);
      }
    }
    if (output.finished && !state.finalized) {
      state.finalized = true;
      pipeline.requestSucceeded(now - state.start, output.finishReason || 'stop');
      let promptTokens = 0;
      let generationTokens = 0;
      for (const stage of output.stageMetrics ?? []) {
        if (stage.stageId === 0) promptTokens += stage.numTokensIn ?? 0;
        generationTokens += stage.numTokensOut ?? 0;
      }
      pipeline.observeTokens(promptTokens, generationTokens);
      audio.observeModalityAtFinalize({
        outputType: output.finalOutputType,
        stageId: output.stageId,
        replicaId: output.replicaId,
        stageMetrics: output.stageMetrics?.find((stage) => stage.stageId === output.stageId),
        multimodalOutput: mmOut,
      });
    }
  }

  /**
   * The stream is over. A request that never produced its final output counts as aborted, once,
   * whatever ended it (client disconnect, cancellation, host error, or a stream that just stopped).
   */
  generateEnded(requestId: string, outcome: GenerateOutcome): void {
    const state = this.generating.get(requestId);
    if (state === undefined) return;
    this.generating.delete(requestId);
    if (outcome === 'unobserved') return this.publishGauges();
    const { audio, pipeline } = this.recorders();
    if (!state.finalized) pipeline.requestFailed();
    // Upstream finalizes the stream after its loop ends normally: a stream run to its end, or left
    // by the consumer after the final output. A disconnect mid-stream or a host error skips it.
    const endedNormally = outcome === 'completed' || (outcome === 'abandoned' && state.finalized);
    if (endedNormally && state.arrivals.length > 0 && state.audioReplica !== undefined) {
      audio.observeAudioStreamingFinalize({
        stageId: state.audioStage ?? 0,
        replicaId: state.audioReplica,
        chunkArrivalTimesS: state.arrivals,
        chunkBytes: state.bytes,
        sampleRate: state.sampleRate ?? DEFAULT_AUDIO_SAMPLE_RATE,
      });
    }
    this.publishGauges();
  }

  /** Requests currently observed (for tests and debugging). */
  get trackedRequests(): { admitted: number; generating: number } {
    return { admitted: this.admitted.size, generating: this.generating.size };
  }

  /**
   * Running = the orchestrator's admitted requests (or, without an orchestrator hook, the requests
   * being served); waiting = served but not yet admitted, never below 0.
   */
  private publishGauges(): void {
    const tracked = this.generating.size;
    const running = this.orchestratorSeen ? this.running.value : tracked;
    const { pipeline } = this.recorders();
    pipeline.setRunning(running);
    pipeline.setWaiting(waitingRequests(tracked, running));
  }

  private aggregator(source: BindingSource | undefined): OrchestratorAggregator {
    if (source === undefined) return this.unboundAggregator;
    let aggregator = this.aggregators.get(source);
    if (aggregator === undefined) {
      aggregator = this.createAggregator(source);
      this.aggregators.set(source, aggregator);
    }
    return aggregator;
  }

  private createAggregator(source: BindingSource | undefined): OrchestratorAggregator {
    return new OrchestratorAggregator({
      transferEmitter: this.transferEmitter,
      replicaResolver: source ? (stageId, requestId) => source.stagePools?.[stageId]?.getBoundReplicaId(requestId) : undefined,
    });
  }
}
