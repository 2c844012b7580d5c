import { performance } from 'node:perf_hooks';
import { createSchedulerStats, type DiffusionStageMetrics, type SchedulerStats } from 'omni-otel-metrics';
import { solidPng } from './png-image';
import { hashString, SeededRandom } from './seeded-random';
import type { ImageSpec, StageEngineOutput, StageInput } from './stage-engine';
import { SteppedEngine, type SteppedEngineOptions } from './stepped-engine';

/** How long one replica of the image stage takes for each phase of a request, milliseconds. */
export interface DiffusionTiming {
  /** Receiving the thinker's conditioning KV. */
  readonly kvLoadMs: number;
  readonly preprocessMs: number;
  /** One denoising step of one image, drawn uniformly per step. */
  readonly stepMs: { readonly min: number; readonly max: number };
  /** Latents to pixels, per image. */
  readonly vaeDecodeMs: number;
  /** Encoding the images, per image. */
  readonly postprocessMs: number;
}

export interface DiffusionEngineOptions extends SteppedEngineOptions {
  readonly seed: number;
  readonly timing: DiffusionTiming;
  /** Chance that a request fails in the middle of its denoising loop (an accelerator error). */
  readonly errorProbability: number;
  /** Memory the model holds; each image adds its latents and activations. */
  readonly baseMemoryMb: number;
}

/** What a finished image request carries back to the orchestrator. */
export interface DiffusionResult {
  readonly images: readonly Buffer[];
  readonly imagePixels: number;
  readonly numInferenceSteps: number;
  /** Submit to the images being ready, milliseconds. */
  readonly firstImageMs: number;
  readonly peakMemoryMb: number;
  readonly metrics: DiffusionStageMetrics;
}

type Phase = 'kvLoad' | 'preprocess' | 'denoise' | 'vaeDecode' | 'postprocess';

interface ImageJob {
  readonly requestId: string;
  readonly spec: ImageSpec;
  readonly submittedAtMs: number;
  /** The denoising step that fails, when this request is one that does. */
  readonly failAtStep: number | undefined;
  admittedAtMs?: number;
  phase: Phase;
  stepsDone: number;
  /** Measured time per phase, milliseconds. */
  readonly spentMs: Record<Phase, number>;
}

interface PhaseEntry {
  readonly job: ImageJob;
  readonly startedAtMs: number;
}

const NEXT_PHASE: Readonly<Record<Exclude<Phase, 'denoise' | 'postprocess'>, Phase>> = {
  kvLoad: 'preprocess',
  preprocess: 'denoise',
  vaeDecode: 'postprocess',
};

/**
 * The image stage (a DiT diffusion model behind an AR thinker): one request at a time, in arrival
 * order, through KV load, preprocessing, `numInferenceSteps` denoising steps, VAE decode and
 * postprocessing, each phase a step of the engine's loop and each measured as it runs. It is not a
 * vLLM engine: no scheduler statistics, but a waiting-request snapshot with every step, and a
 * timing breakdown with the finished output, as vLLM-Omni's diffusion engine reports them.
 */
export class DiffusionEngine extends SteppedEngine<PhaseEntry> {
  private readonly options: DiffusionEngineOptions;
  private readonly random: SeededRandom;
  private readonly queue: ImageJob[] = [];

  constructor(options: DiffusionEngineOptions) {
    super(options);
    this.options = options;
    this.random = new SeededRandom(options.seed);
  }

  submit(input: StageInput): void {
    const spec = input.image;
    if (spec === undefined) throw new Error(`request ${input.requestId} reached the image stage without an image spec`);
    const failing = this.random.chance(this.options.errorProbability);
    this.queue.push({
      requestId: input.requestId,
      spec,
      submittedAtMs: performance.now(),
      failAtStep: failing ? Math.floor(new SeededRandom(hashString(input.requestId)).next() * spec.numInferenceSteps) : undefined,
      phase: 'kvLoad',
      stepsDone: 0,
      spentMs: { kvLoad: 0, preprocess: 0, denoise: 0, vaeDecode: 0, postprocess: 0 },
    });
    this.kick();
  }

  abort(requestId: string): void {
    const at = this.queue.findIndex((job) => job.requestId === requestId);
    if (at >= 0) this.queue.splice(at, 1);
    this.dropBufferedOutputs(requestId);
  }

  protected forgetAllWork(): void {
    this.queue.length = 0;
  }

  /** The oldest request's next phase; the rest wait. */
  protected planStep(): PhaseEntry[] | undefined {
    const job = this.queue[0];
    if (job === undefined) return undefined;
    const now = performance.now();
    job.admittedAtMs ??= now;
    return [{ job, startedAtMs: now }];
  }

  protected stepDurationMs([entry]: readonly PhaseEntry[]): number {
    const { timing } = this.options;
    const images = entry?.job.spec.n ?? 1;
    switch (entry?.job.phase) {
      case 'kvLoad':
        return timing.kvLoadMs;
      case 'preprocess':
        return timing.preprocessMs;
      case 'denoise':
        return this.random.between(timing.stepMs.min, timing.stepMs.max) * images;
      case 'vaeDecode':
        return timing.vaeDecodeMs * images;
      default:
        return timing.postprocessMs * images;
    }
  }

  protected runStep([entry]: readonly PhaseEntry[]): StageEngineOutput[] {
    if (entry === undefined || this.queue[0] !== entry.job) return [];
    const job = entry.job;
    job.spentMs[job.phase] += performance.now() - entry.startedAtMs;
    if (job.phase === 'denoise') {
      if (job.failAtStep === job.stepsDone) return [this.finish(job, { error: `denoising step ${job.stepsDone} failed on the accelerator` })];
      job.stepsDone += 1;
      if (job.stepsDone === job.spec.numInferenceSteps) job.phase = 'vaeDecode';
      return [];
    }
    if (job.phase === 'postprocess') return [this.finish(job, { result: this.result(job) })];
    job.phase = NEXT_PHASE[job.phase];
    return [];
  }

  /** Requests queued behind the one running. */
  protected override waitingSnapshot(): number {
    return Math.max(0, this.queue.length - 1);
  }

  /** Not a vLLM engine: its gauges come from the waiting snapshot instead. */
  protected schedulerStats(): SchedulerStats {
    return createSchedulerStats();
  }

  private finish(job: ImageJob, outcome: { error: string } | { result: DiffusionResult }): StageEngineOutput {
    this.queue.shift();
    const done = { requestId: job.requestId, numNewTokens: 0, newTokenIds: [] };
    return 'error' in outcome ? { ...done, finishReason: 'error', error: outcome.error } : { ...done, finishReason: 'stop', diffusion: outcome.result };
  }

  private result(job: ImageJob): DiffusionResult {
    const { width, height, n, numInferenceSteps } = job.spec;
    const shade = hashString(job.requestId) % 200;
    const images = Array.from({ length: n }, (_, i) => solidPng(width, height, [shade, (shade + 40 * i) % 256, 128]));
    const spent = job.spentMs;
    const seconds = (ms: number): number => ms / 1000;
    return {
      images,
      imagePixels: n * width * height,
      numInferenceSteps,
      firstImageMs: performance.now() - job.submittedAtMs,
      peakMemoryMb: this.options.baseMemoryMb + (n * width * height * 4) / 2 ** 20,
      metrics: {
        diffusionEngineExecTimeS: seconds(spent.denoise + spent.vaeDecode),
        preprocessTimeS: seconds(spent.preprocess),
        postprocessTimeS: seconds(spent.postprocess),
        vaeDecodeTimeS: seconds(spent.vaeDecode),
        forwardTimeS: seconds(spent.denoise),
        kvRecvTimeS: seconds(spent.kvLoad),
        schedulerQueueWaitS: seconds((job.admittedAtMs ?? job.submittedAtMs) - job.submittedAtMs),
        numInferenceSteps,
      },
    };
  }
}
