import type { LabelValue } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import { SeriesTable } from '../series-table';
import type { RecorderOptions } from './pipeline-metrics';

/**
 * Cross-stage transfer histograms (vLLM-Omni `OmniTransferMetrics`), one observation per physical
 * hop between a replica of one stage and a replica of the next. Values are observed as given
 * (seconds, bytes): no clamping, zero is a valid sample. Nothing here converts a value: labels and
 * values go to the series as given, which make text of any label and drop what is not a number.
 */
export class OmniTransferMetrics {
  private readonly logStats: boolean;
  private readonly size: SeriesTable;
  private readonly tx: SeriesTable;
  private readonly rx: SeriesTable;
  private readonly inFlight: SeriesTable;

  /** @internal */
  constructor(store: SeriesStore, options: RecorderOptions) {
    this.logStats = options.logStats;
    const model = [options.modelName];
    this.size = new SeriesTable(store, 'pipeline.transferSize', model);
    this.tx = new SeriesTable(store, 'pipeline.transferTx', model);
    this.rx = new SeriesTable(store, 'pipeline.transferRx', model);
    this.inFlight = new SeriesTable(store, 'pipeline.transferInFlight', model);
  }

  /** One hop's payload size, bytes (`transfer_size_bytes`). */
  observeSize(fromStage: LabelValue, fromReplica: LabelValue, toStage: LabelValue, toReplica: LabelValue, bytes: number): void {
    if (this.logStats) this.size.get(fromStage, fromReplica, toStage, toReplica).record(bytes);
  }

  /** One hop's sender-side time, serialize + submit, seconds (`transfer_tx_s`). */
  observeTxTime(fromStage: LabelValue, fromReplica: LabelValue, toStage: LabelValue, toReplica: LabelValue, seconds: number): void {
    if (this.logStats) this.tx.get(fromStage, fromReplica, toStage, toReplica).record(seconds);
  }

  /** One hop's receiver-side time, receive + deserialize, seconds (`transfer_rx_s`). */
  observeRxTime(fromStage: LabelValue, fromReplica: LabelValue, toStage: LabelValue, toReplica: LabelValue, seconds: number): void {
    if (this.logStats) this.rx.get(fromStage, fromReplica, toStage, toReplica).record(seconds);
  }

  /** One hop's in-flight time, TX done to RX start, seconds (`transfer_in_flight_s`). */
  observeInFlightTime(fromStage: LabelValue, fromReplica: LabelValue, toStage: LabelValue, toReplica: LabelValue, seconds: number): void {
    if (this.logStats) this.inFlight.get(fromStage, fromReplica, toStage, toReplica).record(seconds);
  }
}
