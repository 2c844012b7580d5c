import type { LabelValue } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import { SeriesTable } from '../series-table';
import { isPositive, UnreadableInput } from './never-throw';
import type { RecorderOptions } from './pipeline-metrics';

/** A diffusion stage's timing breakdown for one request, seconds (vLLM-Omni `diffusion_metrics`). */
export interface DiffusionBreakdown {
  /** Core diffusion execution (`diffusion_exec_s`; `diffusion_exec_per_step_s` with a step count). */
  readonly diffusionEngineExecTimeS?: number | null;
  /** Input preprocessing (`diffusion_preprocess_s`). */
  readonly preprocessTimeS?: number | null;
  /** Output postprocessing (`diffusion_postprocess_s`). */
  readonly postprocessTimeS?: number | null;
  /** VAE decode (`vae_decode_s`); a negative value is skipped. */
  readonly vaeDecodeTimeS?: number | null;
  /** Forward-only denoise loop (`diffusion_forward_s`; per step, `denoise_step_latency_s` for image outputs); a negative value is skipped. */
  readonly forwardTimeS?: number | null;
  /** Receiving the upstream stage's KV (`diffusion_kv_load_s`); a negative value is skipped. */
  readonly kvRecvTimeS?: number | null;
  /** Denoising steps, for the per-step figures when the input's own `numInferenceSteps` is absent or zero. */
  readonly numInferenceSteps?: number | null;
}

/** A finished diffusion stage, as `OmniDiffusionMetrics.observeDiffusionFinalize` takes it. */
export interface DiffusionFinalizeInput {
  /** The stage (the `stage` label). */
  readonly stageId: LabelValue;
  /** The replica that ran it (the `replica` label); null or undefined records nothing. */
  readonly replicaId: LabelValue | null | undefined;
  /** The stage's timing breakdown; null or undefined records nothing. */
  readonly breakdown: DiffusionBreakdown | null | undefined;
  /** The stage's step count; the breakdown's own is used when this is absent or zero. */
  readonly numInferenceSteps?: number | null;
  /** Only `image` outputs record the mean denoise step latency. */
  readonly outputUnitType?: string | null;
}

/**
 * Diffusion timing breakdowns per (stage, replica) (vLLM-Omni `OmniModalityMetrics`, its
 * diffusion half). Each family is recorded only when the stage reported its measurement.
 */
export class OmniDiffusionMetrics {
  private readonly logStats: boolean;
  private readonly exec: SeriesTable;
  private readonly execPerStep: SeriesTable;
  private readonly preprocess: SeriesTable;
  private readonly postprocess: SeriesTable;
  private readonly vaeDecode: SeriesTable;
  private readonly forward: SeriesTable;
  private readonly kvLoad: SeriesTable;
  private readonly imageTtfp: SeriesTable;
  private readonly denoiseStep: SeriesTable;
  private readonly unreadable = new UnreadableInput('OmniDiffusionMetrics');

  /** @internal */
  constructor(store: SeriesStore, options: RecorderOptions) {
    this.logStats = options.logStats;
    const model = [options.modelName];
    this.exec = new SeriesTable(store, 'pipeline.diffusionExec', model);
    this.execPerStep = new SeriesTable(store, 'pipeline.diffusionExecPerStep', model);
    this.preprocess = new SeriesTable(store, 'pipeline.diffusionPreprocess', model);
    this.postprocess = new SeriesTable(store, 'pipeline.diffusionPostprocess', model);
    this.vaeDecode = new SeriesTable(store, 'pipeline.vaeDecode', model);
    this.forward = new SeriesTable(store, 'pipeline.diffusionForward', model);
    this.kvLoad = new SeriesTable(store, 'pipeline.diffusionKvLoad', model);
    this.imageTtfp = new SeriesTable(store, 'pipeline.imageTtfp', model);
    this.denoiseStep = new SeriesTable(store, 'pipeline.denoiseStepLatency', model);
  }

  /** Stage submit to the first image; negative (and NaN) values are skipped. */
  observeImageTtfp(stage: LabelValue, replica: LabelValue, seconds: number): void {
    if (!this.logStats || (typeof seconds === 'number' && !(seconds >= 0))) return;
    this.imageTtfp.get(stage, replica).record(seconds);
  }

  /**
   * A diffusion stage's breakdown at request finalize. Execution, preprocess and postprocess are
   * recorded as reported; VAE decode, forward and KV load skip negatives; the per-step figures need
   * a positive step count, and the denoise step latency an image output.
   */
  observeDiffusionFinalize(input: DiffusionFinalizeInput): void {
    if (!this.logStats) return;
    let stage: LabelValue, replica: LabelValue, breakdown: DiffusionBreakdown, stepsReported: unknown, outputUnitType: unknown;
    try {
      const replicaId = input.replicaId;
      const reported = input.breakdown;
      if (replicaId === null || replicaId === undefined || !reported) return;
      const { diffusionEngineExecTimeS, preprocessTimeS, postprocessTimeS, vaeDecodeTimeS, forwardTimeS, kvRecvTimeS, numInferenceSteps } = reported;
      breakdown = { diffusionEngineExecTimeS, preprocessTimeS, postprocessTimeS, vaeDecodeTimeS, forwardTimeS, kvRecvTimeS };
      stage = input.stageId;
      replica = replicaId;
      stepsReported = input.numInferenceSteps || numInferenceSteps;
      outputUnitType = input.outputUnitType;
    } catch {
      return this.unreadable.dropped('observeDiffusionFinalize');
    }
    // A whole step count, as vLLM-Omni's `int(...)` makes it before dividing (2.9 steps are 2).
    const steps = isPositive(stepsReported) ? Math.trunc(stepsReported) : 0;
    const exec = breakdown.diffusionEngineExecTimeS;
    if (typeof exec === 'number') {
      this.exec.get(stage, replica).record(exec);
      if (steps > 0) this.execPerStep.get(stage, replica).record(exec / steps);
    }
    if (typeof breakdown.preprocessTimeS === 'number') this.preprocess.get(stage, replica).record(breakdown.preprocessTimeS);
    if (typeof breakdown.postprocessTimeS === 'number') this.postprocess.get(stage, replica).record(breakdown.postprocessTimeS);
    if (isMeasured(breakdown.vaeDecodeTimeS)) this.vaeDecode.get(stage, replica).record(breakdown.vaeDecodeTimeS);
    const forward = breakdown.forwardTimeS;
    if (isMeasured(forward)) {
      this.forward.get(stage, replica).record(forward);
      const perStep = steps > 0 ? forward / steps : 0;
      if (outputUnitType === 'image' && perStep > 0) this.denoiseStep.get(stage, replica).record(perStep);
    }
    if (isMeasured(breakdown.kvRecvTimeS)) this.kvLoad.get(stage, replica).record(breakdown.kvRecvTimeS);
  }
}

/** A reported duration that is not negative (zero counts). */
function isMeasured(value: number | null | undefined): value is number {
  return typeof value === 'number' && value >= 0;
}
