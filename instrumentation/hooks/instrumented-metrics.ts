import type { MeterProvider } from '@opentelemetry/api';
import type { StageReplicaMap } from '../../views/stage-replica-map';
import type { SeriesStore } from '../../views/store/series-store';
import type { OmniRecorders, RecorderSettings } from '../recorders/recorders';

/**
 * What the hooks need from a registered pipeline: its recorders, and what rebuilding them on
 * another provider takes. The handle `registerOmniMetrics` returns is one.
 */
export interface InstrumentedMetrics extends OmniRecorders {
  /**
   * Every series of the catalog's families.
   * @internal
   */
  readonly store: SeriesStore;
  /** @internal */
  readonly stageReplicaMap: StageReplicaMap;
  /** The provider the recorders' own instruments (the GenAI histograms) are created on. */
  readonly meterProvider: MeterProvider;
  /**
   * What the recorders were built with; `createRecorders(store, settings, provider)` rebuilds them elsewhere.
   * @internal
   */
  readonly settings: RecorderSettings;
  /** Adds a replica to a stage while serving; returns the replica id. */
  addReplica(stage: number, replica?: number): number;
  /** Removes a replica and every series labelled with it; false when there was none. */
  removeReplica(stage: number, replica: number): boolean;
}
