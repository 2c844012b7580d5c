import type { FamilyKey } from '../../views/catalog/catalog';
import type { LabelValue } from '../../views/store/family-series';
import { NOOP_SERIES, type BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';

/**
 * The series bound at construction for a family's one label set (`model_name`), as vLLM-Omni binds
 * it; none when the family carries request labels (`requestLabels`), whose series are bound per
 * value instead, by `OmniRequestLabelledMetrics`.
 */
export function bindEager(store: SeriesStore, key: FamilyKey, values: readonly LabelValue[]): BoundSeries {
  const family = store.family(key);
  return family === undefined || family.family.labels.length !== values.length ? NOOP_SERIES : store.bind(key, values);
}
