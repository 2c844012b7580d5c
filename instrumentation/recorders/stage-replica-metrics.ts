import type { LabelValue } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import { SeriesTable } from '../series-table';
import { neverThrow } from './never-throw';

export interface StageReplicaSample {
  readonly stage: LabelValue;
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

  constructor(store: SeriesStore, modelName: string) {
    this.queueSize = new SeriesTable(store, 'pipeline.stageOutputsQueueSize', [modelName]);
    this.inflight = new SeriesTable(store, 'pipeline.stageInflightRequests', [modelName]);
    neverThrow(this, 'OmniStageReplicaMetrics', ['observe']);
  }

  observe(samples: Iterable<StageReplicaSample>): void {
    for (const sample of samples) {
      this.queueSize.get(sample.stage, sample.replica).record(sample.outputsQueueSize);
      this.inflight.get(sample.stage, sample.replica).record(sample.inflight);
    }
  }
}
