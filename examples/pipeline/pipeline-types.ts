import type { OrchestratorRequest, StageOutputMetrics } from '../../instrumentation/hooks/host-contract';
import type { FinishReason } from '../../instrumentation/stats/types';

/** The three stages of the reference pipeline, in order. */
export const THINKER_STAGE = 0;
export const TALKER_STAGE = 1;
export const CODE2WAV_STAGE = 2;
export const STAGE_NAMES: readonly string[] = Object.freeze(['thinker', 'talker', 'code2wav']);

export type OutputModality = 'text' | 'audio';

/** A request as `AsyncOmni` admits it into the orchestrator. */
export interface PipelineRequest extends OrchestratorRequest {
  /** Frontend wall-clock arrival, seconds. */
  readonly arrivalTime: number;
  readonly promptTokenIds: readonly number[];
  /** The thinker's `max_tokens`. */
  readonly maxTokens: number;
  readonly modalities: readonly OutputModality[];
  readonly voice: string;
}

/** One stage's statistics for a request, as reported on its finished output. */
export interface StageMetricsEntry extends StageOutputMetrics {
  readonly stageId: number;
}

/** What the orchestrator tells a request's consumer. */
export interface PipelineEvent {
  readonly kind: 'text' | 'audio';
  readonly stageId: number;
  readonly replicaId: number;
  /** New text ids (text events). */
  readonly tokenIds: readonly number[];
  /** New PCM16 samples (audio events); empty when the vocoder lost the audio. */
  readonly audio?: Int16Array;
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
  /** Position of this chunk on the edge; the thinker → talker edge sends one, talker → code2wav several. */
  readonly chunkIndex: number;
  /** No more chunks follow on this edge. */
  readonly final: boolean;
  readonly tokenIds: readonly number[];
}
