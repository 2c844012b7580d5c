/**
 * The contract a host implements so that `OmniInstrumentation` can observe it without any metric
 * call in the host's code. Names follow the multi-stage design (vLLM-Omni's orchestrator, stage
 * pools, engine-core outputs, `AsyncOmni.generate`), in camelCase. Every shape is duck-typed: the
 * host's classes need the listed methods, not a base class.
 *
 * Clock domains: `*Ts` values named "wall" are `Date.now() / 1000`; engine timestamps are one
 * engine's monotonic seconds (`performance.now() / 1000`) and are only ever compared with each other.
 */
import type { EngineCoreEvent, FinishReason, SchedulerStats } from '../stats/types';

export type { EngineCoreEvent, EngineCoreEventType } from '../stats/types';

/** One stage's replica pool, with the orchestrator's sticky request → replica binding. */
export interface StagePoolLike {
  readonly numReplicas: number;
  /** The replica serving `requestId` on this stage, or undefined/null once released or never bound. */
  getBoundReplicaId(requestId: string): number | null | undefined;
  /** Optional: requests currently routed to a replica (`stage_inflight_requests`), read after each poll. */
  inflight?(replicaId: number): number;
  /** Optional: completed outputs waiting in a replica's client queue (`stage_outputs_queue_size`). */
  outputsQueueSize?(replicaId: number): number;
}

/** A request as the orchestrator admits it. */
export interface OrchestratorRequest {
  readonly requestId: string;
}

/** A request submitted to one replica of one stage (vLLM's EngineCoreRequest, reduced). */
export interface StageRequest {
  readonly requestId: string;
  readonly stageId: number;
  readonly replicaId: number;
  /** Frontend wall-clock arrival, seconds (TTFT / e2e anchor for this stage). */
  readonly arrivalTime: number;
  readonly promptTokenCount: number;
  readonly maxTokens?: number | null;
  /** The `n` sampling parameter; default 1. */
  readonly n?: number;
}

/** One request's part of an engine step (vLLM's EngineCoreOutput). */
export interface EngineCoreOutput {
  readonly requestId: string;
  /** Tokens produced for this request in this step (may be 0 for a pure event). */
  readonly numNewTokens: number;
  /** Set when the request finished in this step. */
  readonly finishReason?: FinishReason | null;
  readonly events?: readonly EngineCoreEvent[];
  /** Prompt tokens served from the prefix cache, on the output that carries the first SCHEDULED event. */
  readonly numCachedTokens?: number;
  /**
   * A completed wait for KV blocks from another stage's connector (`vllm_omni:kv_wait_s`), on the
   * output where the wait ended; absent when the request waited for nothing.
   */
  readonly kvTransferParams?: { readonly kvWaitS?: number | null; readonly connectorType?: string | null } | null;
}

/** What one poll of one replica returns (vLLM's EngineCoreOutputs). */
export interface EngineCoreOutputs {
  /** Engine monotonic seconds at which the step's outputs were produced. */
  readonly timestamp: number;
  readonly outputs: readonly EngineCoreOutput[];
  /** Present when the replica's scheduler passed its stats gate this step (see `StatsThrottle`). */
  readonly schedulerStats?: SchedulerStats | null;
  /**
   * The replica's waiting-request snapshot when it has no vLLM scheduler statistics (a diffusion
   * stage); `schedulerStats.numWaitingReqs` is used when both are present.
   */
  readonly numWaitingRequests?: number;
}

/** Result of sending a request's payload from one stage to the next (sender side). */
export interface TransferReceipt {
  readonly requestId: string;
  readonly fromStage: number;
  readonly toStage: number;
  readonly sizeBytes: number;
  /** Serialize + submit, milliseconds. */
  readonly txTimeMs: number;
  readonly usedShm?: boolean;
  /** Replicas of the hop when the host knows them; otherwise the stage pools' sticky bindings are asked. */
  readonly fromReplica?: number;
  readonly toReplica?: number;
}

/** Result of receiving a payload on a stage (receiver side). */
export interface ReceiveReceipt {
  readonly requestId: string;
  readonly stageId: number;
  /** The sending stage; default `stageId - 1` (a linear pipeline). Set it where stages branch. */
  readonly fromStage?: number;
  readonly replicaId: number;
  readonly sizeBytes?: number;
  /** Receive + deserialize, milliseconds. */
  readonly rxDecodeTimeMs: number;
  /** TX done → RX start, milliseconds. */
  readonly inFlightTimeMs: number;
}

/**
 * The orchestrator: routes requests through stage pools. `OmniInstrumentation` wraps these
 * methods (each is optional; a missing one just yields no metrics from its call site).
 */
export interface OrchestratorLike {
  readonly stagePools: readonly StagePoolLike[];
  /** Admission: the request becomes running. */
  addRequest(request: OrchestratorRequest, ...rest: unknown[]): unknown;
  /** Cleanup after finish, abort or error; called once per request (extra calls are ignored). */
  cleanupRequest(requestId: string, ...rest: unknown[]): unknown;
  /** A request enters one replica of one stage. */
  submitToStage(request: StageRequest, ...rest: unknown[]): unknown;
  /** One poll of one replica's engine; the hook reads the returned (or resolved) outputs. */
  pollEngine(stageId: number, replicaId: number, ...rest: unknown[]): EngineCoreOutputs | undefined | Promise<EngineCoreOutputs | undefined>;
  /** Sender side of a cross-stage hop; the hook reads the returned (or resolved) receipt. */
  sendToNextStage(...args: unknown[]): TransferReceipt | undefined | Promise<TransferReceipt | undefined>;
  /** Receiver side of a cross-stage hop; the hook reads the returned (or resolved) receipt. */
  receiveFromPreviousStage(...args: unknown[]): ReceiveReceipt | undefined | Promise<ReceiveReceipt | undefined>;
  /**
   * Optional: a replica joins a stage while serving; returns (or resolves to) its replica id. Its
   * series appear at once. A restart is `removeReplica` then `addReplica` with the same id.
   */
  addReplica?(stageId: number, ...rest: unknown[]): number | Promise<number>;
  /** Optional: a replica leaves a stage; its series leave the next scrape and export. */
  removeReplica?(stageId: number, replicaId: number, ...rest: unknown[]): unknown;
}

/**
 * Timing breakdown a diffusion stage reports for one request, seconds (vLLM-Omni's
 * `diffusion_metrics`). Every field is optional: a missing one emits nothing, a measured zero is
 * recorded.
 */
export interface DiffusionStageMetrics {
  /** Core diffusion execution (`diffusion_exec_s`; per step when the step count is known). */
  readonly diffusionEngineExecTimeS?: number;
  readonly preprocessTimeS?: number;
  readonly postprocessTimeS?: number;
  readonly vaeDecodeTimeS?: number;
  /** Forward-only denoise loop, when the pipeline profiler is on (`diffusion_forward_s`, `denoise_step_latency_s`). */
  readonly forwardTimeS?: number;
  /** Receiving the upstream stage's KV (`diffusion_kv_load_s`). */
  readonly kvRecvTimeS?: number;
  /** Diffusion scheduler enqueue to first execution admission (`stage_in_queue_s`). */
  readonly schedulerQueueWaitS?: number;
  /** The per-step figures' count when the stage statistics carry no `numInferenceSteps` (not `num_inference_steps`, as upstream). */
  readonly numInferenceSteps?: number;
}

/** Per-stage request statistics reported with a final output (vLLM-Omni `StageRequestStats`). */
export interface StageOutputMetrics {
  /** Stage submit to output, milliseconds (`stage_gen_time_s`). */
  readonly stageGenTimeMs?: number;
  /** `llm` (default) or `diffusion`: the `stage_type` label, and what enables the diffusion step histogram. */
  readonly stageType?: string;
  /** The replica that served this stage; the final output's `replicaId` is used for the final stage. */
  readonly replicaId?: number;
  readonly audioGeneratedFrames?: number;
  readonly numTokensIn?: number;
  readonly numTokensOut?: number;
  /** What the stage produced: `text`, `audio`, `image`, `video`. Image outputs feed the image families. */
  readonly outputUnitType?: string;
  /** Outputs produced (images for an image stage). */
  readonly outputUnitCount?: number;
  /** Pixels of the images produced, summed. */
  readonly imagePixels?: number;
  readonly numInferenceSteps?: number;
  /** Stage submit to the first image materialized, milliseconds (`image_ttfp_s`). */
  readonly imageTimeToFirstOutputMs?: number;
  /** Peak accelerator memory during the stage's generation, MB; only positive values are recorded. */
  readonly peakMemoryMb?: number;
  readonly diffusionMetrics?: DiffusionStageMetrics | null;
}

/** One item a pipeline request yields to the serving layer (vLLM-Omni `OmniRequestOutput`). */
export interface OmniRequestOutput {
  readonly requestId: string;
  readonly stageId: number;
  readonly replicaId: number;
  /** The stage whose outputs are the response ("text" from the thinker, "audio" from code2wav, "image" from a diffusion stage). */
  readonly finalOutputType: 'text' | 'audio' | 'image' | string;
  /** True on the last output of the final stage. */
  readonly finished: boolean;
  readonly finishReason?: string | null;
  /** `{ audio: Int16Array | Int16Array[], sample_rate: 24000 }` for audio outputs. */
  readonly multimodalOutput?: { readonly audio?: unknown; readonly [key: string]: unknown } | null;
  /** Cumulative statistics of every stage this request passed, on the finished output. */
  readonly stageMetrics?: readonly (StageOutputMetrics & { readonly stageId: number })[];
  readonly text?: string;
}

/**
 * The serving entry point (vLLM-Omni `AsyncOmni`): `generate` yields a request's outputs as an
 * async iterable; a consumer that stops early (client disconnect) calls the iterator's `return()`.
 * Pipeline e2e and TTFP are measured from the `generate` call (the request's arrival at the
 * serving layer). Each audio output carries the newest chunk; the finished output's
 * `stageMetrics[].audioGeneratedFrames` carries the request's total frames.
 *
 * A request that never yields its finished output is counted as failed, with the reason
 * `client_disconnect` when the consumer leaves the stream early, `stage_error` when the stream
 * throws or ends without its finished output, `client_abort` when the host's `abort` named it
 * first, and `unknown` when the idle timeout or the tracking limit ended it.
 */
export interface OmniServingLike {
  generate(request: { readonly requestId: string; readonly [key: string]: unknown }, ...rest: unknown[]): AsyncIterable<OmniRequestOutput>;
  /**
   * Optional: the host aborts requests (an API `abort`, a cancel endpoint). Each open stream of a
   * named request counts as failed with reason `client_abort` at once; its later outputs are not counted.
   */
  abort?(requestId: string | readonly string[], ...rest: unknown[]): unknown;
}

/** A realtime session as the serving layer opens it (vLLM-Omni's `/v1/realtime` connection). */
export interface RealtimeSessionRequest {
  readonly sessionId: string;
  /** The session's turn detection; `{ type: 'server_vad' }` runs the server-side VAD, null or absent leaves turns to the client. */
  readonly turnDetection?: { readonly type?: string | null } | null;
}

/** The server VAD's decision for one detector frame (vLLM-Omni `SpeechEndpointDecision`). */
export interface ServerVadDecision {
  readonly speechStarted?: boolean;
  readonly speechStopped?: boolean;
  /** Trailing silence the detector waited before committing the endpoint, milliseconds; set when `speechStopped`. */
  readonly endpointDelayMs?: number | null;
}

/** What one appended audio batch yields (vLLM-Omni `ServerVADBatch`). */
export interface ServerVadBatch {
  /** Time the detector spent on this batch, milliseconds. */
  readonly inferenceMs: number;
  readonly frames: readonly { readonly decision: ServerVadDecision }[];
}

/**
 * Realtime audio sessions with server-side VAD, on the serving class next to `generate` (each
 * method optional). A session counts as active from `openRealtimeSession` with `server_vad` to its
 * `closeRealtimeSession`; each `appendRealtimeAudio` to such a session reports its batch's inference
 * time and the delay of every frame that stopped speech (`speechStopped`); appends to other sessions
 * are not observed. An append that throws or rejects counts one VAD error, with the
 * reason its error carries in a string `reason` property (`input_overflow`, …), else `error`.
 */
export interface OmniRealtimeLike {
  openRealtimeSession?(session: RealtimeSessionRequest, ...rest: unknown[]): unknown;
  closeRealtimeSession?(sessionId: string, ...rest: unknown[]): unknown;
  appendRealtimeAudio?(sessionId: string, ...rest: unknown[]): ServerVadBatch | undefined | Promise<ServerVadBatch | undefined>;
}
