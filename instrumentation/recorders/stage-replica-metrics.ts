import type { LabelValue } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import { SeriesTable } from '../series-table';
import { UnreadableInput } from './never-throw';

/** One replica's queue and in-flight counts, as `OmniStageReplicaMetrics.observe` takes them. */
export interface StageReplicaSample {
  /** The stage (the `stage` label). */
  readonly stage: LabelValue;
  /** The replica (the `replica` label). */
  readonly replica: LabelValue;
  /** Completed stage outputs waiting in the replica client's queue. */
  readonly outputsQueueSize: number;
  /** Requests currently routed to the replica. */
  readonly inflight: number;
}

/**
 * Per-replica queue gauges (newer vLLM-Omni `OmniStageReplicaMetrics`). Like upstream, not gated
 * by `logStats`: they describe routing state, not request statistics.
 */
export class OmniStageReplicaMetrics {
  private readonly queueSize: SeriesTable;
  private readonly inflight: SeriesTable;
  private readonly unreadable = new UnreadableInput('OmniStageReplicaMetrics');

  /** @internal */
  constructor(store: SeriesStore, modelName: string) {
    this.queueSize = new SeriesTable(store, 'pipeline.stageOutputsQueueSize', [modelName]);
    this.inflight = new SeriesTable(store, 'pipeline.stageInflightRequests', [modelName]);
  }

  /** The samples are the caller's iterable and objects: a read of them that throws drops the rest of the call. */
  observe(samples: Iterable<StageReplicaSample>): void {
    try {
      for (const sample of samples) {
        const { stage, replica } = sample;
        this.queueSize.get(stage, replica).record(sample.outputsQueueSize);
        this.inflight.get(stage, replica).record(sample.inflight);
      }
    } catch {
      this.unreadable.dropped('observe');
    }
  }
}
