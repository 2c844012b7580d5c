import type { EngineCoreOutput, EngineCoreOutputs } from 'omni-otel-metrics';
import type { DiffusionResult } from './diffusion-engine';

/** What an image request asks the diffusion stage for. */
export interface ImageSpec {
  readonly width: number;
  readonly height: number;
  /** Images to generate. */
  readonly n: number;
  readonly numInferenceSteps: number;
}

/** What the orchestrator hands one replica of one stage. */
export interface StageInput {
  readonly requestId: string;
  /** Prompt ids for an LLM stage; one chunk of codec ids for the vocoder. */
  readonly tokenIds: readonly number[];
  /** Generation budget of an LLM stage (vLLM's `max_tokens`); ignored by the vocoder. */
  readonly maxTokens: number;
  /** No more input follows for this request (always true for an LLM stage). */
  readonly final: boolean;
  /** The image stage's request. */
  readonly image?: ImageSpec;
  /** How long the request waited for the previous stage's KV, and over which connector. */
  readonly kvWait?: { readonly kvWaitS: number; readonly connectorType: string };
}

/** One request's part of a step, with the payload the contract's counts describe. */
export interface StageEngineOutput extends EngineCoreOutput {
  /** The ids behind `numNewTokens` (text or codec ids); empty for the vocoder. */
  readonly newTokenIds: readonly number[];
  /** PCM16 mono samples produced in this step (vocoder only); empty on silent loss. */
  readonly audio?: Int16Array;
  /** The images and their statistics (image stage, on the finished output). */
  readonly diffusion?: DiffusionResult;
  /** Why the request failed on this replica (with finish reason `error`). */
  readonly error?: string;
}

export interface StageEngineOutputs extends EngineCoreOutputs {
  readonly outputs: readonly StageEngineOutput[];
}

/**
 * One replica of one stage, as the orchestrator drives it: input goes in with `submit`, each step's
 * results are buffered until `poll` drains them one step at a time (vLLM's engine-core output queue).
 */
export interface StageEngine {
  readonly stageId: number;
  readonly replicaId: number;
  /** Starts the replica's step loop; steps run only while there is work. */
  start(): void;
  /** Stops the loop and drops every request and buffered output. */
  stop(): void;
  submit(input: StageInput): void;
  /** Drops a request wherever it is (queue, batch, output buffer); unknown ids are ignored. */
  abort(requestId: string): void;
  /** The oldest buffered step, or undefined when none is waiting. */
  poll(): StageEngineOutputs | undefined;
  /** Steps produced but not yet polled. */
  readonly bufferedSteps: number;
}
