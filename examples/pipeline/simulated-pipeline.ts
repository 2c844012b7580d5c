import { AsyncOmni } from './async-omni';
import { Orchestrator } from './orchestrator';
import { resolveProfile, type SimulationOverrides, type SimulationProfile } from './simulation-profile';
import { createStagePools } from './stage-pools-factory';
import { ToyTokenizer } from './toy-tokenizer';

export interface SimulatedPipelineOptions {
  /** Replicas per stage: [thinker, talker, code2wav]. */
  readonly replicas: readonly number[];
  /** Replicas of the image stage; 0 (the default) serves no images. */
  readonly imageReplicas?: number;
  readonly profile: SimulationProfile;
  readonly overrides?: SimulationOverrides;
  readonly seed: number;
  readonly maxModelLen: number;
}

export interface SimulatedPipeline {
  readonly orchestrator: Orchestrator;
  readonly omni: AsyncOmni;
  /** Starts the engines' step loops and the orchestrator's polling loop. */
  start(): void;
  /** Stops every loop; live requests fail with a shutdown error. */
  stop(): void;
}

/** Assembles engines, pools, orchestrator and the serving entry point; nothing runs until `start()`. */
export function createSimulatedPipeline(options: SimulatedPipelineOptions): SimulatedPipeline {
  const profile = resolveProfile(options.profile, options.overrides);
  const tokenizer = new ToyTokenizer();
  const stagePools = createStagePools({ replicas: options.replicas, imageReplicas: options.imageReplicas, profile, seed: options.seed, tokenizer });
  const orchestrator = new Orchestrator({ stagePools, orchestration: profile.orchestration, seed: options.seed });
  const omni = new AsyncOmni(orchestrator, { maxModelLen: options.maxModelLen, tokenizer, defaultInferenceSteps: profile.diffusion.defaultSteps });
  return {
    orchestrator,
    omni,
    start: () => orchestrator.start(),
    stop: () => orchestrator.stop(),
  };
}
