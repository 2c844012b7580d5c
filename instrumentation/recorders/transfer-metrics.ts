import type { FamilyInstruments } from '../family-instruments';
import { SeriesTable, type LabelValue } from '../series-table';
import type { RecorderOptions } from './pipeline-metrics';

const EDGE_LABELS = ['from_stage', 'from_replica', 'to_stage', 'to_replica'] as const;

/**
 * Cross-stage transfer histograms (vLLM-Omni `OmniTransferMetrics`), one observation per physical
 * hop between a replica of one stage and a replica of the next. Values are observed as given
 * (seconds, bytes): no clamping, zero is a valid sample.
 */
export class OmniTransferMetrics {
  private readonly logStats: boolean;
  private readonly size: SeriesTable;
  private readonly tx: SeriesTable;
  private readonly rx: SeriesTable;
  private readonly inFlight: SeriesTable;

  constructor(instruments: FamilyInstruments, options: RecorderOptions) {
    this.logStats = options.logStats;
    const model = { model_name: options.modelName };
    this.size = new SeriesTable(instruments, 'pipeline.transferSize', model, EDGE_LABELS);
    this.tx = new SeriesTable(instruments, 'pipeline.transferTx', model, EDGE_LABELS);
    this.rx = new SeriesTable(instruments, 'pipeline.transferRx', model, EDGE_LABELS);
    this.inFlight = new SeriesTable(instruments, 'pipeline.transferInFlight', model, EDGE_LABELS);
  }

  observeSize(fromStage: LabelValue, fromReplica: LabelValue, toStage: LabelValue, toReplica: LabelValue, bytes: number): void {
    if (this.logStats) this.size.get(fromStage, fromReplica, toStage, toReplica).record(bytes);
  }

  observeTxTime(fromStage: LabelValue, fromReplica: LabelValue, toStage: LabelValue, toReplica: LabelValue, seconds: number): void {
    if (this.logStats) this.tx.get(fromStage, fromReplica, toStage, toReplica).record(seconds);
  }

  observeRxTime(fromStage: LabelValue, fromReplica: LabelValue, toStage: LabelValue, toReplica: LabelValue, seconds: number): void {
    if (this.logStats) this.rx.get(fromStage, fromReplica, toStage, toReplica).record(seconds);
  }

  observeInFlightTime(
    fromStage: LabelValue,
    fromReplica: LabelValue,
    toStage: LabelValue,
    toReplica: LabelValue,
    seconds: number,
  ): void {
    if (this.logStats) this.inFlight.get(fromStage, fromReplica, toStage, toReplica).record(seconds);
  }
}
