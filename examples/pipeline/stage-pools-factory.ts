import { StatsThrottle } from 'omni-otel-metrics';
import { Code2WavEngine } from './code2wav-engine';
import { DiffusionEngine } from './diffusion-engine';
import { CODE2WAV_STAGE, DIFFUSION_STAGE, ENGINE_STAGE_COUNT, STAGE_NAMES, TALKER_STAGE, THINKER_STAGE } from './pipeline-types';
import { replicaSeed } from './seeded-random';
import { SimulatedEngine } from './simulated-engine';
import type { LlmStageProfile, SimulationProfile } from './simulation-profile';
import { StagePool, type ReplicaFactory } from './stage-pool';
import type { ToyTokenizer } from './toy-tokenizer';

/** Distinct codec ids of the simulated talker (one codebook). */
const CODEC_VOCABULARY_SIZE = 4096;

export interface StagePoolsOptions {
  /** Replicas per stage: [thinker, talker, code2wav]. */
  readonly replicas: readonly number[];
  /** Replicas of the image stage; 0 (the default) builds none. */
  readonly imageReplicas?: number;
  readonly profile: SimulationProfile;
  readonly seed: number;
  readonly tokenizer: ToyTokenizer;
}

/** Builds the stage pools: each makes one seeded engine per replica, now and when it scales up; one stats gate per replica. */
export function createStagePools({ replicas, imageReplicas = 0, profile, seed, tokenizer }: StagePoolsOptions): StagePool[] {
  if (replicas.length !== ENGINE_STAGE_COUNT) {
    throw new RangeError(
      `the reference pipeline has ${ENGINE_STAGE_COUNT} engine stages (${STAGE_NAMES.slice(0, ENGINE_STAGE_COUNT).join(', ')}); got ${replicas.length} replica counts`,
    );
  }
  // One throttle, keyed per (stage, replica) by each engine: replicas never silence each other.
  const statsThrottle = new StatsThrottle();
  const llm =
    (stageId: number, stage: LlmStageProfile, sampleToken: (u: number, previousIds: readonly number[]) => number): ReplicaFactory =>
    (replicaId) =>
      new SimulatedEngine({ stageId, replicaId, seed: replicaSeed(seed, stageId, replicaId), ...stage, sampleToken, statsThrottle });
  const code2wav: ReplicaFactory = (replicaId) => {
    const { rtfByReplica, maxBatch, malformedProbability, ...timing } = profile.code2wav;
    return new Code2WavEngine({
      stageId: CODE2WAV_STAGE,
      replicaId,
      seed: replicaSeed(seed, CODE2WAV_STAGE, replicaId),
      timing: { ...timing, rtf: rtfByReplica[replicaId % rtfByReplica.length] },
      framesPerStep: profile.orchestration.codecChunkFrames,
      maxBatch,
      malformedProbability,
      statsThrottle,
    });
  };
  const pools = [
    new StagePool(
      THINKER_STAGE,
      llm(THINKER_STAGE, profile.thinker, (u, previousIds) => tokenizer.sampleOutputId(u, previousIds)),
      replicas[THINKER_STAGE],
    ),
    new StagePool(
      TALKER_STAGE,
      llm(TALKER_STAGE, profile.talker, (u) => Math.floor(u * CODEC_VOCABULARY_SIZE)),
      replicas[TALKER_STAGE],
    ),
    new StagePool(CODE2WAV_STAGE, code2wav, replicas[CODE2WAV_STAGE]),
  ];
  if (imageReplicas > 0) {
    const { timing, errorProbability, baseMemoryMb } = profile.diffusion;
    const diffusion: ReplicaFactory = (replicaId) =>
      new DiffusionEngine({ stageId: DIFFUSION_STAGE, replicaId, seed: replicaSeed(seed, DIFFUSION_STAGE, replicaId), timing, errorProbability, baseMemoryMb });
    pools.push(new StagePool(DIFFUSION_STAGE, diffusion, imageReplicas));
  }
  return pools;
}
