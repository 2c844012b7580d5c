import type { FamilyInstruments } from '../family-instruments';
import { SeriesTable, type LabelValue } from '../series-table';

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

  constructor(instruments: FamilyInstruments, modelName: string) {
    const model = { model_name: modelName };
    this.queueSize = new SeriesTable(instruments, 'pipeline.stageOutputsQueueSize', model, ['stage', 'replica']);
    this.inflight = new SeriesTable(instruments, 'pipeline.stageInflightRequests', model, ['stage', 'replica']);
  }

  observe(samples: Iterable<StageReplicaSample>): void {
    for (const sample of samples) {
      this.queueSize.get(sample.stage, sample.replica).record(sample.outputsQueueSize);
      this.inflight.get(sample.stage, sample.replica).record(sample.inflight);
    }
  }
}
