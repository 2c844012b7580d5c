import type { FinishReason, OrchestratorRequest, StageOutputMetrics } from 'omni-otel-metrics';
import type { ImageSpec } from './stage-engine';

/**
 * The stages of the reference pipeline, in order: the three of the speech path (vLLM engines),
 * then the image stage (a diffusion model fed by the thinker, not a vLLM engine).
 */
export const THINKER_STAGE = 0;
export const TALKER_STAGE = 1;
export const CODE2WAV_STAGE = 2;
export const DIFFUSION_STAGE = 3;
export const STAGE_NAMES: readonly string[] = Object.freeze(['thinker', 'talker', 'code2wav', 'diffusion']);
/** The stages that are vLLM engines, and so what the metrics' `stagePools` lists. */
export const ENGINE_STAGE_COUNT = 3;

export type OutputModality = 'text' | 'audio' | 'image';

/** A request as `AsyncOmni` admits it into the orchestrator. */
export interface PipelineRequest extends OrchestratorRequest {
  /** Frontend wall-clock arrival, seconds. */
  readonly arrivalTime: number;
  readonly promptTokenIds: readonly number[];
  /** The thinker's `max_tokens`. */
  readonly maxTokens: number;
  readonly modalities: readonly OutputModality[];
  readonly voice: string;
  /** What the image stage makes, for an image request. */
  readonly image?: ImageSpec;
}

/** One stage's statistics for a request, as reported on its finished output. */
export interface StageMetricsEntry extends StageOutputMetrics {
  readonly stageId: number;
}

/** What the orchestrator tells a request's consumer. */
export interface PipelineEvent {
  readonly kind: 'text' | 'audio' | 'image';
  readonly stageId: number;
  readonly replicaId: number;
  /** New text ids (text events). */
  readonly tokenIds: readonly number[];
  /** New PCM16 samples (audio events); empty when the vocoder lost the audio. */
  readonly audio?: Int16Array;
  /** The generated images, PNG (image events). */
  readonly images?: readonly Buffer[];
  /** Last event of the request's final stage. */
  readonly finished: boolean;
  readonly finishReason?: FinishReason;
  /** Every stage the request passed; on the finished event only. */
  readonly stageMetrics?: readonly StageMetricsEntry[];
}

/** What crosses a stage boundary; `sendToNextStage` serializes it, `receiveFromPreviousStage` restores it. */
export interface StagePayload {
  readonly requestId: string;
  readonly fromStage: number;
  readonly toStage: number;
  /** Position of this chunk on the edge; thinker → talker and thinker → diffusion send one, talker → code2wav several. */
  readonly chunkIndex: number;
  /** No more chunks follow on this edge. */
  readonly final: boolean;
  readonly tokenIds: readonly number[];
}
