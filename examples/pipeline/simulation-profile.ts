import type { Code2WavTiming } from './code2wav-engine';
import type { DiffusionTiming } from './diffusion-engine';
import type { LlmStepTiming, StopPolicy } from './simulated-engine';

export interface LlmStageProfile {
  readonly timing: LlmStepTiming;
  readonly numKvBlocks: number;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly stopPolicy: StopPolicy;
}

export interface Code2WavStageProfile extends Omit<Code2WavTiming, 'rtf'> {
  /** Real-time factor of replica i is `rtfByReplica[i % length]`: replicas need not be equally fast. */
  readonly rtfByReplica: readonly number[];
  readonly maxBatch: number;
  readonly malformedProbability: number;
}

export interface DiffusionStageProfile {
  readonly timing: DiffusionTiming;
  /** Chance that a request fails on the image stage (the API answers 500). */
  readonly errorProbability: number;
  /** Accelerator memory the model holds before any request. */
  readonly baseMemoryMb: number;
  /** Denoising steps when a request names none. */
  readonly defaultSteps: number;
}

export interface OrchestrationProfile {
  /** Period of the orchestrator's loop that polls every replica. */
  readonly pollIntervalMs: number;
  /** Simulated connector latency of one cross-stage hop, drawn uniformly per hop. */
  readonly transferLatencyMs: { readonly min: number; readonly max: number };
  /** Codec frames per talker → code2wav chunk (and per vocoder step). */
  readonly codecChunkFrames: number;
  /** Talker budget: codec frames per thinker text token (speech is slower than text). */
  readonly framesPerTextToken: number;
  /** Talker budget cap, codec frames (80 ms each). */
  readonly maxAudioFrames: number;
  /** Speaker-prompt tokens put before the text on the talker (shared per voice: prefix-cache hits). */
  readonly voicePromptTokens: number;
}

export interface SimulationProfile {
  readonly thinker: LlmStageProfile;
  readonly talker: LlmStageProfile;
  readonly code2wav: Code2WavStageProfile;
  readonly diffusion: DiffusionStageProfile;
  readonly orchestration: OrchestrationProfile;
}

/** Overrides per section; anything left out keeps the base profile's value. */
export interface SimulationOverrides {
  readonly thinker?: Partial<LlmStageProfile>;
  readonly talker?: Partial<LlmStageProfile>;
  readonly code2wav?: Partial<Code2WavStageProfile>;
  readonly diffusion?: Partial<DiffusionStageProfile>;
  readonly orchestration?: Partial<OrchestrationProfile>;
}

/**
 * Roughly a 30B-A3B MoE thinker (which also conditions a DiT image model of ~50 ms steps) and a small talker on one GPU each: ~15 ms decode steps, a KV
 * budget that preempts under heavy concurrency, and vocoder replicas of unequal speed (the third
 * one cannot keep up with playback, so its streams underrun).
 */
export const REALISTIC_PROFILE: SimulationProfile = Object.freeze({
  thinker: {
    timing: { stepBaseMs: 14, prefillMsPerToken: 0.08, decodeMsPerSeq: 0.3 },
    numKvBlocks: 512,
    maxNumSeqs: 64,
    maxNumBatchedTokens: 8192,
    stopPolicy: { probability: 0.015, afterFraction: 0.1 },
  },
  talker: {
    timing: { stepBaseMs: 9, prefillMsPerToken: 0.03, decodeMsPerSeq: 0.15 },
    numKvBlocks: 2048,
    maxNumSeqs: 64,
    maxNumBatchedTokens: 8192,
    stopPolicy: { probability: 0.02, afterFraction: 0.8 },
  },
  code2wav: {
    rtfByReplica: [0.35, 0.8, 1.3],
    batchSlowdown: 0.12,
    rtfJitter: 0.3,
    stallProbability: 0.02,
    stallFactor: 4,
    stepOverheadMs: 4,
    maxBatch: 16,
    malformedProbability: 0.03,
  },
  diffusion: {
    timing: { kvLoadMs: 8, preprocessMs: 15, stepMs: { min: 45, max: 60 }, vaeDecodeMs: 120, postprocessMs: 20 },
    errorProbability: 0.02,
    baseMemoryMb: 18432,
    defaultSteps: 20,
  },
  orchestration: {
    pollIntervalMs: 2,
    transferLatencyMs: { min: 0.2, max: 2 },
    codecChunkFrames: 12,
    framesPerTextToken: 2.5,
    maxAudioFrames: 1500,
    voicePromptTokens: 32,
  },
});

/** Millisecond steps and tiny vocoder RTFs: a whole audio request takes tens of milliseconds (tests). */
export const FAST_PROFILE: SimulationProfile = Object.freeze({
  thinker: {
    timing: { stepBaseMs: 1, prefillMsPerToken: 0.002, decodeMsPerSeq: 0.02 },
    numKvBlocks: 512,
    maxNumSeqs: 32,
    maxNumBatchedTokens: 8192,
    stopPolicy: { probability: 0.03, afterFraction: 0.25 },
  },
  talker: {
    timing: { stepBaseMs: 1, prefillMsPerToken: 0.002, decodeMsPerSeq: 0.02 },
    numKvBlocks: 512,
    maxNumSeqs: 32,
    maxNumBatchedTokens: 8192,
    stopPolicy: { probability: 0.05, afterFraction: 0.8 },
  },
  code2wav: {
    rtfByReplica: [0.01, 0.02],
    batchSlowdown: 0.1,
    rtfJitter: 0.2,
    stallProbability: 0,
    stallFactor: 1,
    stepOverheadMs: 0.5,
    maxBatch: 8,
    malformedProbability: 0.03,
  },
  diffusion: {
    timing: { kvLoadMs: 0.5, preprocessMs: 0.5, stepMs: { min: 0.2, max: 0.5 }, vaeDecodeMs: 1, postprocessMs: 0.5 },
    errorProbability: 0,
    baseMemoryMb: 2048,
    defaultSteps: 8,
  },
  orchestration: {
    pollIntervalMs: 1,
    transferLatencyMs: { min: 0, max: 0.5 },
    codecChunkFrames: 8,
    framesPerTextToken: 1,
    maxAudioFrames: 64,
    voicePromptTokens: 16,
  },
});

export function resolveProfile(base: SimulationProfile, overrides: SimulationOverrides = {}): SimulationProfile {
  return {
    thinker: { ...base.thinker, ...overrides.thinker },
    talker: { ...base.talker, ...overrides.talker },
    code2wav: { ...base.code2wav, ...overrides.code2wav },
    diffusion: { ...base.diffusion, ...overrides.diffusion },
    orchestration: { ...base.orchestration, ...overrides.orchestration },
  };
}
