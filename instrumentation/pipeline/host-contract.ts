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
  /** Replicas in this stage's pool. */
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
  /** The request's id: it counts as running from its admission to its `cleanupRequest`. */
  readonly requestId: string;
}

/** A request submitted to one replica of one stage (vLLM's EngineCoreRequest, reduced). */
export interface StageRequest {
  /** The request's id, as its admission and its `generate` call name it. */
  readonly requestId: string;
  /** The stage the request enters, its index in `stagePools`. */
  readonly stageId: number;
  /** The replica of that stage that serves the request. */
  readonly replicaId: number;
  /** Frontend wall-clock arrival, seconds (TTFT / e2e anchor for this stage). */
  readonly arrivalTime: number;
  /** The request's prompt length on this stage, tokens (vLLM's `num_prompt_tokens`). */
  readonly promptTokenCount: number;
  /** The request's `max_tokens` sampling parameter, if it set one (`request_params_max_tokens`). */
  readonly maxTokens?: number | null;
  /** The `n` sampling parameter; default 1. */
  readonly n?: number;
}

/** One request's part of an engine step (vLLM's EngineCoreOutput). */
export interface EngineCoreOutput {
  /** The request this output belongs to. */
  readonly requestId: string;
  /** Tokens produced for this request in this step (may be 0 for a pure event). */
  readonly numNewTokens: number;
  /** Set when the request finished in this step. */
  readonly finishReason?: FinishReason | null;
  /** The request's lifecycle events in this step (queued, scheduled, preempted), with engine timestamps. */
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
  /** The step's outputs, one per request with new tokens, events or a finish. */
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
  /** The request whose payload was sent. */
  readonly requestId: string;
  /** The sending stage (the `from_stage` label). */
  readonly fromStage: number;
  /** The receiving stage (the `to_stage` label). */
  readonly toStage: number;
  /** Payload size, bytes (`transfer_size_bytes`). */
  readonly sizeBytes: number;
  /** Serialize + submit, milliseconds. */
  readonly txTimeMs: number;
  /** The payload went through shared memory; accepted as hosts report it, no family records it. */
  readonly usedShm?: boolean;
  /** Replicas of the hop when the host knows them; otherwise the stage pools' sticky bindings are asked. */
  readonly fromReplica?: number;
  /** The receiving replica when the host knows it (the `to_replica` label); otherwise the stage pool is asked. */
  readonly toReplica?: number;
}

/** Result of receiving a payload on a stage (receiver side). */
export interface ReceiveReceipt {
  /** The request whose payload was received. */
  readonly requestId: string;
  /** The receiving stage (the `to_stage` label); stage 0 has no inbound hop, so its receipts record nothing. */
  readonly stageId: number;
  /** The sending stage; default `stageId - 1` (a linear pipeline). Set it where stages branch. */
  readonly fromStage?: number;
  /** The receiving replica (the `to_replica` label). */
  readonly replicaId: number;
  /** Payload size, bytes; accepted as hosts report it, the size family is recorded on the sending side only. */
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
  /** One pool per stage, by stage id: the replica bindings transfers are resolved with, and the per-replica gauges read after a poll. */
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
  /** Input preprocessing (`diffusion_preprocess_s`). */
  readonly preprocessTimeS?: number;
  /** Output postprocessing (`diffusion_postprocess_s`). */
  readonly postprocessTimeS?: number;
  /** VAE decode, latents to pixels, audio or video (`vae_decode_s`). */
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
  /**
   * Audio frames the stage generated for the request; the final stage's feed `audio_frames`, `audio_duration_s` and
   * `audio_rtf` (counted from the audio chunks when absent).
   */
  readonly audioGeneratedFrames?: number;
  /** Prompt tokens the stage took in; stage 0's count toward the pipeline's `prompt_tokens`. */
  readonly numTokensIn?: number;
  /** Tokens the stage generated; every stage's count toward the pipeline's `generation_tokens`. */
  readonly numTokensOut?: number;
  /** What the stage produced: `text`, `audio`, `image`, `video`. Image outputs feed the image families. */
  readonly outputUnitType?: string;
  /** Outputs produced (images for an image stage). */
  readonly outputUnitCount?: number;
  /** Pixels of the images produced, summed. */
  readonly imagePixels?: number;
  /** Diffusion steps the stage ran (`num_inference_steps`, diffusion stages only); also the step count of the per-step diffusion figures. */
  readonly numInferenceSteps?: number;
  /** Stage submit to the first image materialized, milliseconds (`image_ttfp_s`). */
  readonly imageTimeToFirstOutputMs?: number;
  /** Peak accelerator memory during the stage's generation, MB; only positive values are recorded. */
  readonly peakMemoryMb?: number;
  /** The diffusion stage's timing breakdown: its scheduler queue wait is recorded for every stage, the rest for the final stage. */
  readonly diffusionMetrics?: DiffusionStageMetrics | null;
}

/** One item a pipeline request yields to the serving layer (vLLM-Omni `OmniRequestOutput`). */
export interface OmniRequestOutput {
  /** The request this output belongs to. */
  readonly requestId: string;
  /** The stage that produced the output (the `stage` label of the audio families). */
  readonly stageId: number;
  /** The replica that produced the output (the `replica` label of the audio families). */
  readonly replicaId: number;
  /** The stage whose outputs are the response ("text" from the thinker, "audio" from code2wav, "image" from a diffusion stage). */
  readonly finalOutputType: 'text' | 'audio' | 'image' | string;
  /** True on the last output of the final stage. */
  readonly finished: boolean;
  /** Why the request finished, on the finished output (the `finished_reason` label of `requests_success`); `stop` when empty. */
  readonly finishReason?: string | null;
  /** `{ audio: Int16Array | Int16Array[], sample_rate: 24000 }` for audio outputs. */
  readonly multimodalOutput?: { readonly audio?: unknown; readonly [key: string]: unknown } | null;
  /** Cumulative statistics of every stage this request passed, on the finished output. */
  readonly stageMetrics?: readonly (StageOutputMetrics & { readonly stageId: number })[];
  /** The output's text; accepted as hosts report it, no family records it. */
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
  /** Serves one request: its outputs as an async iterable, which the hooks follow without replacing it. */
  generate(request: { readonly requestId: string; readonly [key: string]: unknown }, ...rest: unknown[]): AsyncIterable<OmniRequestOutput>;
  /**
   * Optional: the host aborts requests (an API `abort`, a cancel endpoint). Each open stream of a
   * named request counts as failed with reason `client_abort` at once; its later outputs are not counted.
   */
  abort?(requestId: string | readonly string[], ...rest: unknown[]): unknown;
}

/** A realtime session as the serving layer opens it (vLLM-Omni's `/v1/realtime` connection). */
export interface RealtimeSessionRequest {
  /** The session's id, which its close and appends name it by. */
  readonly sessionId: string;
  /** The session's turn detection; `{ type: 'server_vad' }` runs the server-side VAD, null or absent leaves turns to the client. */
  readonly turnDetection?: { readonly type?: string | null } | null;
}

/** The server VAD's decision for one detector frame (vLLM-Omni `SpeechEndpointDecision`). */
export interface ServerVadDecision {
  /** The detector found speech starting in this frame; not recorded. */
  readonly speechStarted?: boolean;
  /** The detector committed the end of speech in this frame: its `endpointDelayMs` is recorded (`realtime_vad_endpoint_delay_s`). */
  readonly speechStopped?: boolean;
  /** Trailing silence the detector waited before committing the endpoint, milliseconds; set when `speechStopped`. */
  readonly endpointDelayMs?: number | null;
}

/** What one appended audio batch yields (vLLM-Omni `ServerVADBatch`). */
export interface ServerVadBatch {
  /** Time the detector spent on this batch, milliseconds. */
  readonly inferenceMs: number;
  /** The batch's detector frames, each with the VAD's decision. */
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
  /** Opens a session; with `server_vad` turn detection it counts as active once the call returns (or its promise fulfils). */
  openRealtimeSession?(session: RealtimeSessionRequest, ...rest: unknown[]): unknown;
  /** Closes a session; an active server-VAD session stops counting, even when the call throws. */
  closeRealtimeSession?(sessionId: string, ...rest: unknown[]): unknown;
  /** Appends audio to a session; the returned (or resolved) batch feeds the VAD's inference time and endpoint delays. */
  appendRealtimeAudio?(sessionId: string, ...rest: unknown[]): ServerVadBatch | undefined | Promise<ServerVadBatch | undefined>;
}
