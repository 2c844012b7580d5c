import type { Attributes } from '@opentelemetry/api';
import type { ResolvedFamily } from '../views/catalog/catalog';
import type { StageReplica } from '../views/stage-replica-map';
import type { SeriesStore } from '../views/store/series-store';

/** What every series of the scrape benchmark records: the same for every contender. */
export const COUNTER_INCREMENT = 3;
export const GAUGE_VALUE = 0.5;
export const HISTOGRAM_VALUES = [0.01, 0.5, 5] as const;

/**
 * Gives every family of the store series for every (stage, replica) it can carry — eager engine
 * series already exist; pipeline families get one series per replica (transfer hops replica r of
 * one stage to replica r of the next) — and records into every series. Returns each series'
 * attributes with its family, in store order, so another library can be given the same series.
 */
export function populateAllSeries(store: SeriesStore, engines: readonly StageReplica[]): Array<{ family: ResolvedFamily; attributes: Attributes }> {
  const lastStage = String(Math.max(...engines.map((engine) => Number(engine.stage))));
  for (const family of store.families) {
    // Process and runtime families are read at each scrape, not recorded: the collector fills them.
    if (family.series.length > 0 || family.family.group === 'process') continue;
    const perReplica = family.family.labels.some((name) => name === 'stage' || name === 'from_stage');
    for (const engine of perReplica ? engines : engines.slice(0, 1)) {
      if (family.family.labels.includes('from_stage') && engine.stage === lastStage) continue;
      family.bind(family.family.labels.map((name) => labelValue(name, engine)));
    }
  }
  const populated: Array<{ family: ResolvedFamily; attributes: Attributes }> = [];
  for (const family of store.families) {
    if (family.family.group === 'process') continue;
    for (const series of family.series) {
      if (family.family.type === 'histogram') for (const value of HISTOGRAM_VALUES) series.record(value);
      else series.record(family.family.type === 'counter' ? COUNTER_INCREMENT : GAUGE_VALUE);
      populated.push({ family: family.family, attributes: series.attributes });
    }
  }
  return populated;
}

function labelValue(name: string, engine: StageReplica): string {
  switch (name) {
    case 'model_name':
      return 'm';
    case 'stage':
    case 'from_stage':
      return engine.stage;
    case 'replica':
    case 'from_replica':
    case 'to_replica':
      return engine.replica;
    case 'to_stage':
      return String(Number(engine.stage) + 1);
    case 'finished_reason':
      return 'stop';
    case 'threshold_ms':
      return '200';
    default:
      return `${name}_value`;
  }
}
