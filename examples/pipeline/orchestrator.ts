import { performance } from 'node:perf_hooks';
import type { FinishReason, OrchestratorLike, ReceiveReceipt, StageRequest, TransferReceipt } from 'omni-otel-metrics';
import {
  CODE2WAV_STAGE,
  DIFFUSION_STAGE,
  TALKER_STAGE,
  THINKER_STAGE,
  type PipelineEvent,
  type PipelineRequest,
  type StageMetricsEntry,
  type StagePayload,
} from './pipeline-types';
import type { RequestStream } from './request-stream';
import { hashString, SeededRandom } from './seeded-random';
import type { OrchestrationProfile } from './simulation-profile';
import type { StageEngineOutput, StageEngineOutputs, StageInput } from './stage-engine';
import type { StagePool } from './stage-pool';

/** The simulated connector between stages, as vLLM-Omni names its shared-memory one. */
export const KV_CONNECTOR_TYPE = 'SharedMemoryConnector';

export interface OrchestratorOptions {
  /** [thinker, talker, code2wav], and the image stage when images are served. */
  readonly stagePools: readonly StagePool[];
  readonly orchestration: OrchestrationProfile;
  /** Seeds the simulated connector latency. */
  readonly seed: number;
}

/** A received hop: the contract's receipt plus the payload the next stage runs on. */
export interface ReceivedTransfer extends ReceiveReceipt {
  readonly payload: StagePayload;
}

interface StageProgress {
  readonly replicaId: number;
  /** performance.now() at submit; a stage's gen time counts from here (queueing included). */
  readonly submittedAtMs: number;
  tokensIn: number;
  tokensOut: number;
  audioFrames: number;
  genTimeMs?: number;
  /** The image stage's statistics, once it finished the request. */
  image?: StageEngineOutput['diffusion'];
}

interface LiveRequest {
  readonly request: PipelineRequest;
  readonly sink: RequestStream<PipelineEvent>;
  /** Thinker for text-only requests, code2wav when audio was asked for, the image stage for images. */
  readonly finalStage: number;
  readonly stages: Map<number, StageProgress>;
  readonly thinkerTokenIds: number[];
  /** Codec ids produced by the talker and not yet sent to the vocoder. */
  readonly codecBuffer: number[];
  codecChunksSent: number;
  thinkerFinishReason?: FinishReason;
  /** The final event was emitted or the request failed: later outputs are ignored. */
  done: boolean;
}

interface SentPayload {
  readonly bytes: Buffer;
  /** performance.now() when the sender finished; in-flight time runs from here. */
  readonly sentAtMs: number;
}

/**
 * Routes requests through thinker → talker → code2wav, or thinker → diffusion for images (the
 * thinker's tokens condition the image stage). Its polling loop calls `this.pollEngine`
 * for every replica of every stage, and every method of `OrchestratorLike` is reached through
 * `this`, so a patch on `Orchestrator.prototype` sees each call:
 *
 * - `addRequest` — once per request, from `AsyncOmni.generate`; submits to the thinker.
 * - `submitToStage` — once per (request, stage), when the request enters a replica.
 * - `pollEngine` — every loop tick for every replica, repeated until the replica has nothing buffered.
 * - `sendToNextStage` — per hop on the sender side (one thinker → talker hop, one talker → code2wav
 *   hop per codec chunk); the receiving replica is bound before the send.
 * - `receiveFromPreviousStage` — per hop on the receiver side, after the simulated connector latency.
 * - `cleanupRequest` — once per request, from `AsyncOmni.generate`'s `finally`; later calls are no-ops.
 * - `addReplica` / `removeReplica` — when a stage scales (the admin endpoint); a drained replica
 *   is removed by the polling loop once its last request is done.
 *
 * Replica bindings are kept until `cleanupRequest`, so `getBoundReplicaId` answers for both ends of
 * any hop while the request lives; transfer receipts also name both replicas (`fromReplica`, `toReplica`).
 */
export class Orchestrator implements OrchestratorLike {
  readonly stagePools: readonly StagePool[];
  private readonly orchestration: OrchestrationProfile;
  private readonly random: SeededRandom;
  private readonly live = new Map<string, LiveRequest>();
  /** Per (request, receiving stage): payloads sent and not yet received, in order. */
  private readonly connector = new Map<string, SentPayload[]>();
  private readonly deliveryTimers = new Set<NodeJS.Timeout>();
  private pollTimer: NodeJS.Timeout | undefined;
  private running = false;
  private admitted = 0;

  constructor({ stagePools, orchestration, seed }: OrchestratorOptions) {
    if (stagePools.length !== 3 && stagePools.length !== 4) {
      throw new RangeError(`the pipeline needs 3 stage pools, or 4 with the image stage; got ${stagePools.length}`);
    }
    this.stagePools = stagePools;
    this.orchestration = orchestration;
    this.random = new SeededRandom(hashString(`connector/${seed}`));
  }

  /** Requests admitted and not yet cleaned up. */
  get numLiveRequests(): number {
    return this.live.size;
  }

  /** Requests admitted since start. */
  get numAdmittedRequests(): number {
    return this.admitted;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const pool of this.stagePools) pool.startAll();
    this.pollTimer = setInterval(() => this.pollAll(), this.orchestration.pollIntervalMs);
    this.pollTimer.unref();
  }

  /** Stops polling and every engine; live requests fail so their consumers wake up and clean up. */
  stop(): void {
    this.running = false;
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    for (const timer of this.deliveryTimers) clearTimeout(timer);
    this.deliveryTimers.clear();
    this.connector.clear();
    for (const live of this.live.values()) {
      live.done = true;
      live.sink.fail(new Error('the pipeline is shutting down'));
    }
    for (const pool of this.stagePools) pool.stopAll();
  }

  /** Admits a request (it is now running) and submits it to a thinker replica. */
  addRequest(request: PipelineRequest, sink: RequestStream<PipelineEvent>): void {
    if (!this.running) throw new Error('the pipeline is not running (stopped or shutting down)');
    if (this.live.has(request.requestId)) throw new Error(`request ${request.requestId} is already running`);
    const wantsImage = request.image !== undefined;
    if (wantsImage && this.stagePools[DIFFUSION_STAGE] === undefined) throw new Error('this pipeline has no image stage');
    this.live.set(request.requestId, {
      request,
      sink,
      finalStage: wantsImage ? DIFFUSION_STAGE : request.modalities.includes('audio') ? CODE2WAV_STAGE : THINKER_STAGE,
      stages: new Map(),
      thinkerTokenIds: [],
      codecBuffer: [],
      codecChunksSent: 0,
      done: false,
    });
    this.admitted += 1;
    const replicaId = this.stagePools[THINKER_STAGE].bind(request.requestId);
    this.submitToStage(
      {
        requestId: request.requestId,
        stageId: THINKER_STAGE,
        replicaId,
        arrivalTime: request.arrivalTime,
        promptTokenCount: request.promptTokenIds.length,
        maxTokens: request.maxTokens,
        n: 1,
      },
      { requestId: request.requestId, tokenIds: request.promptTokenIds, maxTokens: request.maxTokens, final: true },
    );
  }

  /**
   * Ends a request however it went (finished, aborted, failed): aborts it on every replica it is
   * bound to, drops its bindings and undelivered payloads, and closes its stream. True the first time.
   */
  cleanupRequest(requestId: string): boolean {
    const live = this.live.get(requestId);
    if (live === undefined) return false;
    this.live.delete(requestId);
    live.done = true;
    for (const pool of this.stagePools) {
      const replicaId = pool.getBoundReplicaId(requestId);
      if (replicaId === undefined) continue;
      pool.engine(replicaId).abort(requestId);
      pool.release(requestId);
    }
    for (const stageId of [TALKER_STAGE, CODE2WAV_STAGE, DIFFUSION_STAGE]) this.connector.delete(connectorKey(requestId, stageId));
    live.sink.close();
    return true;
  }

  /** The request enters `request.replicaId` of `request.stageId` with its first input. */
  submitToStage(request: StageRequest, input: StageInput): void {
    const live = this.live.get(request.requestId);
    if (live === undefined) throw new Error(`request ${request.requestId} is not running`);
    live.stages.set(request.stageId, {
      replicaId: request.replicaId,
      submittedAtMs: performance.now(),
      tokensIn: input.tokenIds.length,
      tokensOut: 0,
      audioFrames: 0,
    });
    this.stagePools[request.stageId].engine(request.replicaId).submit(input);
  }

  /** One step of one replica's outputs, or undefined when it has none buffered. */
  pollEngine(stageId: number, replicaId: number): StageEngineOutputs | undefined {
    return this.stagePools[stageId].engine(replicaId).poll();
  }

  /** Sender side of a hop: serializes the payload and hands it to the (simulated) connector. */
  sendToNextStage(payload: StagePayload): TransferReceipt {
    const startMs = performance.now();
    const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
    const key = connectorKey(payload.requestId, payload.toStage);
    let queue = this.connector.get(key);
    if (queue === undefined) this.connector.set(key, (queue = []));
    const sentAtMs = performance.now();
    queue.push({ bytes, sentAtMs });
    this.scheduleDelivery(payload.requestId, payload.toStage);
    return {
      requestId: payload.requestId,
      fromStage: payload.fromStage,
      toStage: payload.toStage,
      sizeBytes: bytes.length,
      txTimeMs: sentAtMs - startMs,
      usedShm: false,
      fromReplica: this.stagePools[payload.fromStage].getBoundReplicaId(payload.requestId),
      toReplica: this.stagePools[payload.toStage].getBoundReplicaId(payload.requestId),
    };
  }

  /** Receiver side of a hop: takes the oldest payload for (request, stage) and deserializes it. */
  receiveFromPreviousStage(requestId: string, stageId: number): ReceivedTransfer | undefined {
    const sent = this.connector.get(connectorKey(requestId, stageId))?.shift();
    if (sent === undefined) return undefined;
    const rxStartMs = performance.now();
    const payload = parsePayload(sent.bytes);
    const rxDoneMs = performance.now();
    const replicaId = this.stagePools[stageId].getBoundReplicaId(requestId);
    if (replicaId === undefined) return undefined;
    return {
      requestId,
      stageId,
      fromStage: payload.fromStage,
      replicaId,
      sizeBytes: sent.bytes.length,
      rxDecodeTimeMs: rxDoneMs - rxStartMs,
      inFlightTimeMs: rxStartMs - sent.sentAtMs,
      payload,
    };
  }

  private pollAll(): void {
    for (const pool of this.stagePools) {
      for (const replicaId of pool.replicaIds()) {
        for (let step = this.pollEngine(pool.stageId, replicaId); step !== undefined; step = this.pollEngine(pool.stageId, replicaId)) {
          for (const output of step.outputs) this.dispatch(pool.stageId, replicaId, output);
        }
        // A drained replica leaves once its last output has been taken.
        if (pool.isDrained(replicaId)) this.removeReplica(pool.stageId, replicaId);
      }
    }
  }

  /** A replica joins a stage while serving (scale-up); returns its id. */
  addReplica(stageId: number): number {
    return this.poolOf(stageId).addReplica();
  }

  /**
   * Graceful scale-down: the replica takes no new request and leaves through `removeReplica` once
   * its requests are done. False when there is no such replica, it is draining already, or it is
   * the last one of its stage taking requests.
   */
  drainReplica(stageId: number, replicaId: number): boolean {
    return this.poolOf(stageId).drain(replicaId);
  }

  /** A replica leaves now (a crash, or the end of a drain); requests still on it fail. False when there was none. */
  removeReplica(stageId: number, replicaId: number): boolean {
    const pool = this.poolOf(stageId);
    if (!pool.replicaIds().includes(replicaId)) return false;
    for (const requestId of pool.removeReplica(replicaId)) {
      const live = this.live.get(requestId);
      if (live !== undefined && !live.done) this.fail(live, new Error(`stage ${stageId} replica ${replicaId} was removed`));
    }
    return true;
  }

  private poolOf(stageId: number): StagePool {
    const pool = this.stagePools[stageId];
    if (pool === undefined) throw new RangeError(`the pipeline has no stage ${stageId}`);
    return pool;
  }

  private dispatch(stageId: number, replicaId: number, output: StageEngineOutput): void {
    const live = this.live.get(output.requestId);
    if (live === undefined || live.done) return;
    try {
      if (stageId === THINKER_STAGE) this.onThinkerOutput(live, replicaId, output);
      else if (stageId === TALKER_STAGE) this.onTalkerOutput(live, output);
      else if (stageId === CODE2WAV_STAGE) this.onCode2WavOutput(live, replicaId, output);
      else this.onImageOutput(live, replicaId, output);
    } catch (error) {
      this.fail(live, error);
    }
  }

  private onThinkerOutput(live: LiveRequest, replicaId: number, output: StageEngineOutput): void {
    live.thinkerTokenIds.push(...output.newTokenIds);
    const finished = this.advance(live, THINKER_STAGE, output);
    if (finished) live.thinkerFinishReason = output.finishReason ?? 'stop';
    const finalHere = finished && live.finalStage === THINKER_STAGE;
    const wantsText = live.finalStage !== DIFFUSION_STAGE;
    if ((output.newTokenIds.length > 0 && wantsText) || finalHere) {
      this.emit(live, {
        kind: 'text',
        stageId: THINKER_STAGE,
        replicaId,
        tokenIds: output.newTokenIds,
        finished: finalHere,
        finishReason: finalHere ? live.thinkerFinishReason : undefined,
        stageMetrics: finalHere ? this.stageMetrics(live) : undefined,
      });
    }
    if (finished && live.finalStage === DIFFUSION_STAGE) this.handOff(live, THINKER_STAGE, live.thinkerTokenIds, true, 0, DIFFUSION_STAGE);
    else if (finished && !finalHere) this.handOff(live, THINKER_STAGE, this.talkerPrompt(live), true, 0);
  }

  /** The image stage's one output: the images, or the error that ends the request. */
  private onImageOutput(live: LiveRequest, replicaId: number, output: StageEngineOutput): void {
    if (output.error !== undefined) throw new Error(`image stage replica ${replicaId}: ${output.error}`);
    const finished = this.advance(live, DIFFUSION_STAGE, output);
    const progress = live.stages.get(DIFFUSION_STAGE);
    if (progress !== undefined) progress.image = output.diffusion;
    this.emit(live, {
      kind: 'image',
      stageId: DIFFUSION_STAGE,
      replicaId,
      tokenIds: [],
      images: output.diffusion?.images ?? [],
      finished,
      finishReason: finished ? 'stop' : undefined,
      stageMetrics: finished ? this.stageMetrics(live) : undefined,
    });
  }

  private onTalkerOutput(live: LiveRequest, output: StageEngineOutput): void {
    live.codecBuffer.push(...output.newTokenIds);
    const finished = this.advance(live, TALKER_STAGE, output);
    const chunk = this.orchestration.codecChunkFrames;
    while (live.codecBuffer.length >= chunk && !(finished && live.codecBuffer.length === chunk)) {
      this.handOff(live, TALKER_STAGE, live.codecBuffer.splice(0, chunk), false, live.codecChunksSent++);
    }
    if (finished) this.handOff(live, TALKER_STAGE, live.codecBuffer.splice(0), true, live.codecChunksSent++);
  }

  private onCode2WavOutput(live: LiveRequest, replicaId: number, output: StageEngineOutput): void {
    const audio = output.audio ?? new Int16Array(0);
    const progress = live.stages.get(CODE2WAV_STAGE);
    if (progress !== undefined) progress.audioFrames += audio.length;
    const finished = this.advance(live, CODE2WAV_STAGE, output);
    // Empty chunks are not news to a listener; only the last one is sent, to carry the finish.
    if (audio.length === 0 && !finished) return;
    this.emit(live, {
      kind: 'audio',
      stageId: CODE2WAV_STAGE,
      replicaId,
      tokenIds: [],
      audio,
      finished,
      // The response's reason is the text's: `length` tells the client its answer was cut short.
      finishReason: finished ? (live.thinkerFinishReason ?? 'stop') : undefined,
      stageMetrics: finished ? this.stageMetrics(live) : undefined,
    });
  }

  /** Counts a stage's output; true when it finished the request on that stage. */
  private advance(live: LiveRequest, stageId: number, output: StageEngineOutput): boolean {
    const progress = live.stages.get(stageId);
    if (progress === undefined) throw new Error(`stage ${stageId} reported request ${live.request.requestId} it was never given`);
    progress.tokensOut += output.numNewTokens;
    if (output.finishReason === undefined || output.finishReason === null) return false;
    progress.genTimeMs = performance.now() - progress.submittedAtMs;
    this.stagePools[stageId].markDone(live.request.requestId);
    return true;
  }

  /** Binds the receiving replica first, so both ends of the hop resolve while it is in flight. */
  private handOff(live: LiveRequest, fromStage: number, tokenIds: readonly number[], final: boolean, chunkIndex: number, toStage = fromStage + 1): void {
    this.stagePools[toStage].bind(live.request.requestId);
    this.sendToNextStage({ requestId: live.request.requestId, fromStage, toStage, chunkIndex, final, tokenIds });
  }

  private scheduleDelivery(requestId: string, toStage: number): void {
    const { min, max } = this.orchestration.transferLatencyMs;
    const timer = setTimeout(
      () => {
        this.deliveryTimers.delete(timer);
        this.deliver(requestId, toStage);
      },
      this.random.between(min, max),
    );
    timer.unref();
    this.deliveryTimers.add(timer);
  }

  private deliver(requestId: string, toStage: number): void {
    const live = this.live.get(requestId);
    if (live === undefined || live.done) return;
    try {
      const received = this.receiveFromPreviousStage(requestId, toStage);
      if (received === undefined) return;
      // The hop's connector time is what the receiving stage waited for the sender's KV.
      const kvWait = { kvWaitS: received.inFlightTimeMs / 1000, connectorType: KV_CONNECTOR_TYPE };
      const input = { ...this.stageInputFor(live, received.payload), ...(toStage === TALKER_STAGE ? { kvWait } : {}) };
      const progress = live.stages.get(toStage);
      if (progress === undefined) {
        this.submitToStage(
          {
            requestId,
            stageId: toStage,
            replicaId: received.replicaId,
            arrivalTime: Date.now() / 1000,
            promptTokenCount: input.tokenIds.length,
            maxTokens: toStage === TALKER_STAGE ? input.maxTokens : null,
            n: toStage === DIFFUSION_STAGE ? (live.request.image?.n ?? 1) : 1,
          },
          input,
        );
      } else {
        progress.tokensIn += input.tokenIds.length;
        this.stagePools[toStage].engine(progress.replicaId).submit(input);
      }
    } catch (error) {
      this.fail(live, error);
    }
  }

  private stageInputFor(live: LiveRequest, payload: StagePayload): StageInput {
    if (payload.toStage === DIFFUSION_STAGE) {
      return { requestId: payload.requestId, tokenIds: payload.tokenIds, maxTokens: 0, final: true, image: live.request.image };
    }
    if (payload.toStage !== TALKER_STAGE) {
      return { requestId: payload.requestId, tokenIds: payload.tokenIds, maxTokens: 0, final: payload.final };
    }
    const { framesPerTextToken, maxAudioFrames } = this.orchestration;
    const textTokens = live.thinkerTokenIds.length;
    const maxTokens = Math.max(1, Math.min(maxAudioFrames, Math.ceil(textTokens * framesPerTextToken)));
    return { requestId: payload.requestId, tokenIds: payload.tokenIds, maxTokens, final: true };
  }

  /** The talker's prompt: the voice's speaker tokens (shared, so prefix-cached), then the thinker's text. */
  private talkerPrompt(live: LiveRequest): number[] {
    const voiceTokens = Array.from({ length: this.orchestration.voicePromptTokens }, (_, i) => hashString(`${live.request.voice}/${i}`) % 30000);
    return [...voiceTokens, ...live.thinkerTokenIds];
  }

  private stageMetrics(live: LiveRequest): StageMetricsEntry[] {
    const now = performance.now();
    return [...live.stages].map(([stageId, progress]) => ({
      stageId,
      replicaId: progress.replicaId,
      stageType: stageId === DIFFUSION_STAGE ? 'diffusion' : 'llm',
      stageGenTimeMs: progress.genTimeMs ?? now - progress.submittedAtMs,
      numTokensIn: progress.tokensIn,
      numTokensOut: progress.tokensOut,
      ...(stageId === CODE2WAV_STAGE ? { audioGeneratedFrames: progress.audioFrames } : {}),
      ...(progress.image ? imageStageMetrics(progress.image) : {}),
    }));
  }

  /** The finished event also ends the stream; the consumer's cleanup comes after it has read it. */
  private emit(live: LiveRequest, event: PipelineEvent): void {
    live.sink.push(event);
    if (!event.finished) return;
    live.done = true;
    live.sink.close();
  }

  private fail(live: LiveRequest, error: unknown): void {
    live.done = true;
    live.sink.fail(error);
  }
}

function connectorKey(requestId: string, toStage: number): string {
  return `${requestId}\u0000${toStage}`;
}

function parsePayload(bytes: Buffer): StagePayload {
  const value = JSON.parse(bytes.toString('utf8')) as Partial<StagePayload>;
  if (
    typeof value.requestId !== 'string' ||
    typeof value.fromStage !== 'number' ||
    typeof value.toStage !== 'number' ||
    typeof value.chunkIndex !== 'number' ||
    typeof value.final !== 'boolean' ||
    !Array.isArray(value.tokenIds)
  ) {
    throw new Error('malformed stage payload');
  }
  return value as StagePayload;
}

/** The image stage's part of a finished request's statistics. */
function imageStageMetrics(image: NonNullable<StageEngineOutput['diffusion']>): Partial<StageMetricsEntry> {
  return {
    outputUnitType: 'image',
    outputUnitCount: image.images.length,
    imagePixels: image.imagePixels,
    numInferenceSteps: image.numInferenceSteps,
    imageTimeToFirstOutputMs: image.firstImageMs,
    peakMemoryMb: image.peakMemoryMb,
    diffusionMetrics: image.metrics,
  };
}
