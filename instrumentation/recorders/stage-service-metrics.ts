import type { LabelValue } from '../../views/store/family-series';
import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';
import type { StageReplicaMap } from '../../views/stage-replica-map';
import { FAILURE_REASONS, type FailureReason } from '../../views/catalog/stage-service-families';
import { SeriesTable } from '../series-table';
import { bindEager } from './eager-series';
import { WaitingSnapshots } from './waiting-snapshots';
import { clampedAtZero, isPositive, UnreadableInput } from './never-throw';
import type { RecorderOptions } from './pipeline-metrics';

/** What one stage reports when it finishes a request (vLLM-Omni `StageRequestStats`, reduced). */
export interface StageFinishInput {
  /** The stage (the `stage` label). */
  readonly stageId: LabelValue;
  /** `llm` when absent, as vLLM-Omni's stage default. */
  readonly stageType?: string | null;
  /** Stage submit to finished output, milliseconds; absent: no `stage_gen_time_s` sample. */
  readonly stageGenTimeMs?: number | null;
  /** What the stage produced (`text`, `audio`, `image`, `video`); only `image` records the image families. */
  readonly outputUnitType?: string | null;
  /** Outputs produced; for an image output, the images (`image_count`). */
  readonly outputUnitCount?: number | null;
  /** Pixels of the images produced, summed (`image_pixels`, image outputs only). */
  readonly imagePixels?: number | null;
  /** Diffusion steps the stage ran (`num_inference_steps`, diffusion stages only); only positive counts are recorded. */
  readonly numInferenceSteps?: number | null;
  /** Peak accelerator memory during the stage's generation, MB (`peak_memory_mb`); only positive values are recorded. */
  readonly peakMemoryMb?: number | null;
  /** Diffusion scheduler enqueue to first admission, seconds; a measured zero is recorded. */
  readonly schedulerQueueWaitS?: number | null;
}

/** A known failure reason, or `unknown`: the label stays bounded whatever the caller passes. */
export function normalizeFailureReason(reason: unknown): FailureReason {
  return FAILURE_REASONS.includes(reason as FailureReason) ? (reason as FailureReason) : 'unknown';
}

/**
 * Stage-service metrics (vLLM-Omni `OmniPrometheusMetrics`, its stage and image half): per-stage
 * generation time and queueing, the waiting snapshot summed over a stage's replicas, failures by
 * bounded reason, KV-transfer waits, and the image workload. Sparse: a measurement the host did
 * not report records nothing, while a reported zero is recorded where upstream keeps it.
 */
export class OmniStageServiceMetrics {
  private readonly logStats: boolean;
  private readonly queueWait: BoundSeries;
  private readonly inferenceSteps: BoundSeries;
  private readonly imageCount: BoundSeries;
  private readonly imagePixels: BoundSeries;
  private readonly stageGenTime: SeriesTable;
  private readonly stageWaiting: SeriesTable;
  private readonly peakMemory: SeriesTable;
  private readonly stageInQueue: SeriesTable;
  private readonly failed: SeriesTable;
  private readonly kvWait: SeriesTable;
  /** Latest waiting snapshot per replica, per stage: the gauge is their sum. */
  private readonly waiting = new WaitingSnapshots();
  private readonly unsubscribe: () => void;
  private readonly unreadable = new UnreadableInput('OmniStageServiceMetrics');

  /**
   * With `stageReplicaMap`, a replica that leaves drops out of its stage's waiting sum at once.
   * @internal
   */
  constructor(store: SeriesStore, options: RecorderOptions, stageReplicaMap?: StageReplicaMap) {
    this.logStats = options.logStats;
    const model = [options.modelName];
    this.queueWait = bindEager(store, 'pipeline.requestQueueWait', model);
    this.inferenceSteps = store.bind('pipeline.numInferenceSteps', model);
    this.imageCount = store.bind('pipeline.imageCount', model);
    this.imagePixels = store.bind('pipeline.imagePixels', model);
    this.stageGenTime = new SeriesTable(store, 'pipeline.stageGenTime', model);
    this.stageWaiting = new SeriesTable(store, 'pipeline.stageWaitingRequests', model);
    this.peakMemory = new SeriesTable(store, 'pipeline.peakMemory', model);
    this.stageInQueue = new SeriesTable(store, 'pipeline.stageInQueue', model);
    this.failed = new SeriesTable(store, 'pipeline.requestsFailed', model);
    this.kvWait = new SeriesTable(store, 'pipeline.kvWait', model);
    this.unsubscribe =
      stageReplicaMap?.onChange((change) => {
        if (change.kind === 'removed') this.forgetReplicaWaiting(change.stage, change.replica);
      }) ?? (() => undefined);
  }

  /** Negative times clamp to 0. */
  observeStageGenTime(stage: LabelValue, stageType: string, seconds: number): void {
    if (this.logStats) this.stageGenTime.get(stage, stageType).record(clampedAtZero(seconds));
  }

  /** Negative times clamp to 0; zero is the healthy baseline and is counted. */
  observeStageInQueue(stage: LabelValue, seconds: number): void {
    if (this.logStats) this.stageInQueue.get(stage).record(clampedAtZero(seconds));
  }

  /** Arrival to the first stage submit; negative clamps to 0, zero is counted. */
  observeQueueWait(seconds: number): void {
    if (this.logStats) this.queueWait.record(clampedAtZero(seconds));
  }

  /**
   * One replica's latest waiting count, stored as a whole non-negative number (vLLM-Omni keeps
   * `max(int(n_waiting), 0)`); the stage's gauge becomes the sum over its replicas. Stage and replica ids
   * are numbers (they index arrays); any other id is dropped.
   */
  setReplicaWaiting(stage: number, replica: number, waiting: number): void {
    // The same count again (most polls): the gauge holds the stage total already (its series has
    // no replica label, so no replica's removal takes it away). Ids index arrays: what is no
    // number (whose conversion to a key could throw) is never used as one.
    if (typeof stage === 'number' && typeof replica === 'number' && this.waiting.holds(stage, replica, waiting)) return;
    this.setChangedReplicaWaiting(stage, replica, waiting);
  }

  private setChangedReplicaWaiting(stage: number, replica: number, waiting: number): void {
    if (!this.logStats || typeof stage !== 'number' || typeof replica !== 'number' || typeof waiting !== 'number' || !Number.isFinite(waiting)) return;
    const count = Math.max(Math.trunc(waiting), 0);
    if (this.waiting.holds(stage, replica, count)) return;
    this.stageWaiting.get(stage).record(this.waiting.set(stage, replica, count));
  }

  /**
   * A replica left: its snapshot no longer counts toward its stage's sum, and the stage total is
   * published again even when that replica never reported (as vLLM-Omni's eviction does).
   */
  forgetReplicaWaiting(stage: number, replica: number): void {
    // Ids index arrays: what is no number (whose conversion to a key could throw) names no replica.
    if (!this.logStats || typeof stage !== 'number' || typeof replica !== 'number') return;
    this.stageWaiting.get(stage).record(this.waiting.delete(stage, replica));
  }

  /** Stops following replica changes (the recorder set is being replaced or shut down). */
  stop(): void {
    this.unsubscribe();
  }

  /** Zero or negative step counts (a text stage) are skipped. */
  observeNumInferenceSteps(steps: number): void {
    if (this.logStats && isPositive(steps)) this.inferenceSteps.record(steps);
  }

  /** Adds `images` produced images (`image_count`); zero or negative counts are skipped. */
  incImageCount(images: number): void {
    if (this.logStats && isPositive(images)) this.imageCount.record(images);
  }

  /** One request's image pixel count (`image_pixels`); zero or negative counts are skipped. */
  observeImagePixels(pixels: number): void {
    if (this.logStats && isPositive(pixels)) this.imagePixels.record(pixels);
  }

  /** Only a positive peak is a measurement: zero means the engine did not report one. */
  setPeakMemory(stage: LabelValue, megabytes: number): void {
    if (this.logStats && isPositive(megabytes)) this.peakMemory.get(stage).record(megabytes);
  }

  /** One failed request; a reason outside the bounded set is recorded as `unknown`. */
  incRequestsFailed(reason: unknown): void {
    if (this.logStats) this.failed.get(normalizeFailureReason(reason)).record(1);
  }

  /** A completed KV-transfer wait; negative or missing (`null`) waits are skipped, a missing connector is `unknown`. */
  observeKvWait(connectorType: string | null | undefined, seconds: number | null | undefined): void {
    if (!this.logStats || typeof seconds !== 'number' || !(seconds >= 0)) return;
    this.kvWait.get(connectorType || 'unknown').record(seconds);
  }

  /**
   * A stage finished a request: its generation time by stage type, the diffusion step count
   * (diffusion stages only), the image workload (image outputs only), the diffusion scheduler's
   * queue wait and the peak memory, each only when reported.
   */
  observeStageFinished(input: StageFinishInput): void {
    if (!this.logStats) return;
    let finished: StageFinishInput;
    try {
      const { stageId, stageType, stageGenTimeMs, numInferenceSteps, outputUnitType, imagePixels, outputUnitCount, schedulerQueueWaitS, peakMemoryMb } = input;
      finished = { stageId, stageType, stageGenTimeMs, numInferenceSteps, outputUnitType, imagePixels, outputUnitCount, schedulerQueueWaitS, peakMemoryMb };
    } catch {
      return this.unreadable.dropped('observeStageFinished');
    }
    const stageType = finished.stageType || 'llm';
    if (typeof finished.stageGenTimeMs === 'number') this.observeStageGenTime(finished.stageId, stageType, finished.stageGenTimeMs / 1000);
    if (stageType === 'diffusion') this.observeNumInferenceSteps(finished.numInferenceSteps ?? 0);
    if (finished.outputUnitType === 'image') {
      this.observeImagePixels(finished.imagePixels ?? 0);
      this.incImageCount(finished.outputUnitCount ?? 0);
    }
    if (typeof finished.schedulerQueueWaitS === 'number') this.observeStageInQueue(finished.stageId, finished.schedulerQueueWaitS);
    this.setPeakMemory(finished.stageId, finished.peakMemoryMb ?? 0);
  }
}
