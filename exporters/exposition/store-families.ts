import type { FamilySeries } from '../../views/store/family-series';
import type { CounterSeries, GaugeSeries, HistogramSeries } from '../../views/store/series';
import type { NativeHistogramSeries } from '../../views/store/native-histogram-series';
import type { ExemplarCounterSeries } from '../../views/store/exemplar-series';
import type { SeriesStore } from '../../views/store/series-store';
import type { ExpositionFamily, ExpositionSeries, FamilyMeta, HistogramSeriesData, NumberSeries } from './model';
import { seriesView, sourceLabelsOf } from './series-views';

// The store's series are the model's series, read in place: these fail to compile if they drift apart.
type Satisfies<Model, Actual extends Model> = Actual;
export type StoreSeriesInTheModel = [
  Satisfies<NumberSeries, CounterSeries>,
  Satisfies<NumberSeries, GaugeSeries>,
  Satisfies<NumberSeries, ExemplarCounterSeries>,
  Satisfies<HistogramSeriesData, HistogramSeries>,
  Satisfies<HistogramSeriesData, NativeHistogramSeries>,
];

const metas = new WeakMap<FamilySeries, FamilyMeta>();

/** What a store family prints the same on every scrape (one object per family, so writers cache by it). */
export function storeFamilyMeta(family: FamilySeries): FamilyMeta {
  let meta = metas.get(family);
  if (meta === undefined) {
    const { name, type, help, unit, omitCreated } = family.family;
    meta = Object.freeze({ name, type, help, unit, ...(omitCreated === true ? { omitCreated: true } : {}) });
    metas.set(family, meta);
  }
  return meta;
}

/**
 * The store's families in catalog order, each with its series in creation order as the store
 * holds them now: a copy, which a rendering in slices reads while recording goes on (a replica
 * removed meanwhile still prints, one added does not). Every family is there, with or without
 * series (the text formats print HELP and TYPE for each, as prometheus_client does). The store's
 * collect hooks run first, so values read rather than recorded are current.
 */
export function storeFamilies(store: SeriesStore): ExpositionFamily[] {
  store.runCollectHooks();
  return store.families.map((family) => ({ meta: storeFamilyMeta(family), series: storeSeries(family) }));
}

function storeSeries(family: FamilySeries): ExpositionSeries[] {
  const series = family.seriesSnapshot() as readonly unknown[] as ExpositionSeries[];
  // The overflow series is the one whose labels the catalog did not name (`otel.metric.overflow`): the dots and values escapings print its source name.
  const overflow = family.overflowed;
  if (overflow === undefined) return series;
  const sourceLabels = sourceLabelsOf(overflow.attributes);
  const at = series.indexOf(overflow as unknown as ExpositionSeries);
  if (sourceLabels !== undefined && at >= 0) series[at] = seriesView(series[at] as ExpositionSeries, { sourceLabels });
  return series;
}
