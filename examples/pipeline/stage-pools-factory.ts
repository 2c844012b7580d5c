import { StatsThrottle } from '../../instrumentation/stats/stats-throttle';
import { Code2WavEngine } from './code2wav-engine';
import { CODE2WAV_STAGE, STAGE_NAMES, TALKER_STAGE, THINKER_STAGE } from './pipeline-types';
import { replicaSeed } from './seeded-random';
import { SimulatedEngine } from './simulated-engine';
import type { LlmStageProfile, SimulationProfile } from './simulation-profile';
import type { StageEngine } from './stage-engine';
import { StagePool } from './stage-pool';
import type { ToyTokenizer } from './toy-tokenizer';

/** Distinct codec ids of the simulated talker (one codebook). */
const CODEC_VOCABULARY_SIZE = 4096;

export interface StagePoolsOptions {
  /** Replicas per stage: [thinker, talker, code2wav]. */
  readonly replicas: readonly number[];
  readonly profile: SimulationProfile;
  readonly seed: number;
  readonly tokenizer: ToyTokenizer;
}

/** Builds the three stage pools, one seeded engine per replica and one stats gate per replica. */
export function createStagePools({ replicas, profile, seed, tokenizer }: StagePoolsOptions): StagePool[] {
  if (replicas.length !== STAGE_NAMES.length) {
    throw new RangeError(`the reference pipeline has ${STAGE_NAMES.length} stages (${STAGE_NAMES.join(', ')}), got ${replicas.length} replica counts`);
  }
  // One throttle, keyed per (stage, replica) by each engine: replicas never silence each other.
  const statsThrottle = new StatsThrottle();
  const llm = (stageId: number, stage: LlmStageProfile, sampleToken: (u: number, previousIds: readonly number[]) => number) =>
    replicaIds(replicas[stageId]).map(
      (replicaId): StageEngine =>
        new SimulatedEngine({ stageId, replicaId, seed: replicaSeed(seed, stageId, replicaId), ...stage, sampleToken, statsThrottle }),
    );
  const code2wav = replicaIds(replicas[CODE2WAV_STAGE]).map((replicaId): StageEngine => {
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
  });
  return [
    new StagePool(THINKER_STAGE, llm(THINKER_STAGE, profile.thinker, (u, previousIds) => tokenizer.sampleOutputId(u, previousIds))),
    new StagePool(TALKER_STAGE, llm(TALKER_STAGE, profile.talker, (u) => Math.floor(u * CODEC_VOCABULARY_SIZE))),
    new StagePool(CODE2WAV_STAGE, code2wav),
  ];
}

function replicaIds(count: number): number[] {
  return Array.from({ length: count }, (_, replicaId) => replicaId);
}
