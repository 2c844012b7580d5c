import type { ResolvedFamily } from '../../views/catalog/catalog';
import type { FamilySeries } from '../../views/store/family-series';
import { CounterSeries, GaugeSeries, HistogramSeries, type StoredSeries } from '../../views/store/series';
import { replicaKey } from '../../views/stage-replica-map';

/** What one check learned of one family by comparing the store's totals with the previous check's. */
export interface FamilyActivity {
  /** Some series received an observation since the previous check. */
  readonly fed: boolean;
  /** `stage\0replica` of the fed series that carry both labels. */
  readonly fedReplicas: readonly string[];
  /** `stage` label values of the fed counter and histogram series: the stages requests reached. */
  readonly fedStages: readonly string[];
  /** Each series' total now (counter value, histogram count, gauge value): the next check's baseline. */
  readonly totals: Map<StoredSeries, number>;
}

/**
 * Families whose series exist before any observation: the eager pipeline series and the upstream
 * series bound per engine at start (or when a replica joins). A series of any other family exists
 * only because something was recorded into it.
 */
export function boundBeforeRecords(family: ResolvedFamily): boolean {
  return family.eager || (family.group !== 'pipeline' && family.group !== 'custom' && family.engineLabel);
}

/**
 * Compares a family's per-series totals with the previous check's: a counter's value or a
 * histogram's count that grew means observations arrived. Nothing is kept on the record path;
 * this reads, at check time, what the store keeps anyway. A gauge counts as fed when its value
 * changed since the previous check, or when a series appears that only a record creates (a gauge
 * set to the value it held looks the same as one never set; such families are not reported, see
 * `Expectation`). Series that left (a removed replica) drop out of the baseline.
 */
export function familyActivity(family: FamilySeries, previous: ReadonlyMap<StoredSeries, number>): FamilyActivity {
  const totals = new Map<StoredSeries, number>();
  const fedReplicas: string[] = [];
  const fedStages: string[] = [];
  const createdByRecords = !boundBeforeRecords(family.family);
  let fed = false;
  for (const series of family.series) {
    const total = seriesTotal(series);
    totals.set(series, total);
    const before = previous.get(series);
    let grew: boolean;
    if (series instanceof CounterSeries || series instanceof HistogramSeries) grew = total > (before ?? 0);
    else grew = before === undefined ? createdByRecords || total !== 0 : total !== before;
    if (!grew) continue;
    fed = true;
    const stage = series.labelValue('stage');
    const replica = series.labelValue('replica');
    if (stage !== undefined && replica !== undefined) fedReplicas.push(replicaKey(stage, replica));
    // A gauge changes with an engine's idle polls too; only counts and observations follow requests.
    if (stage !== undefined && !(series instanceof GaugeSeries)) fedStages.push(stage);
  }
  return { fed, fedReplicas, fedStages, totals };
}

/**
 * The first baseline, of the store as registration left it (eager zeros, engines reported awake):
 * only what `familyActivity` cannot tell from a missing entry, which it reads as a total of zero
 * for a series bound before records. So registration keeps no entry for each of the thousands of
 * zero series a large pipeline binds.
 */
export function registrationBaseline(family: FamilySeries): Map<StoredSeries, number> {
  const baseline = new Map<StoredSeries, number>();
  const createdByRecords = !boundBeforeRecords(family.family);
  for (const series of family.series) {
    const total = seriesTotal(series);
    if (total !== 0 || createdByRecords) baseline.set(series, total);
  }
  return baseline;
}

/** A counter's value, a histogram's count, a gauge's value. */
function seriesTotal(series: StoredSeries): number {
  return series instanceof HistogramSeries ? series.count : series instanceof CounterSeries || series instanceof GaugeSeries ? series.value : 0;
}
