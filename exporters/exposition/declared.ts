import type { Attributes } from '@opentelemetry/api';
import type { DeclaredFamily } from '../../views/declared-families';
import { WarnOnce } from '../../views/common/diag-warnings';
import { prometheusLabelName } from '../../views/catalog/names';
import { attributeText, readLabelValue, renderLabelText } from '../../views/store/label-text';
import type { ExpositionFamily, ExpositionSeries, FamilyMeta, HistogramSeriesData } from './model';

const typeClashes = new WarnOnce();

/**
 * Declared families first, in declaration order, with the series of the family of the same name
 * and, when none of them carries its eager labels, its zero series; then every other family, in
 * the order given. A family of another type than the one declared under its name is left out,
 * with one warning.
 */
export function withDeclared(families: readonly ExpositionFamily[], declared: readonly DeclaredFamily[]): ExpositionFamily[] {
  if (declared.length === 0) return [...families];
  const byName = new Map(families.map((family) => [family.meta.name, family]));
  const out: ExpositionFamily[] = [];
  const taken = new Set<string>();
  for (const one of declared) {
    const meta: FamilyMeta = { name: one.name, type: one.type, help: one.help, ...(one.omitCreated === true ? { omitCreated: true } : {}) };
    const found = byName.get(one.name);
    taken.add(one.name);
    let series: readonly ExpositionSeries[] = [];
    if (found !== undefined && found.meta.type !== one.type) {
      typeClashes.warn(
        `${one.name} ${found.meta.type}`,
        `${one.name} was collected as a ${found.meta.type} but is declared a ${one.type}; the ${found.meta.type} is left out of /metrics`,
      );
    } else if (found !== undefined) series = found.series;
    out.push({ meta: found?.meta.unit === undefined ? meta : { ...meta, unit: found.meta.unit }, series: withEagerSeries(one, series) });
  }
  for (const family of families) if (!taken.has(family.meta.name)) out.push(family);
  return out;
}

/**
 * The declared zero series, unless a series carries its labels, alone or with more (the workers'
 * per-tenant series of a family whose `{model_name}` series request labels replaced). A
 * placeholder has no creation time of its own, so no `_created`.
 */
function withEagerSeries(family: DeclaredFamily, series: readonly ExpositionSeries[]): readonly ExpositionSeries[] {
  const eager = family.eagerAttributes;
  if (eager === undefined || series.some((one) => carriesLabels(one, eager))) return series;
  const labels = renderLabelText(eager);
  const placeholder: ExpositionSeries =
    family.type === 'histogram' ? zeroHistogram(labels.plain, labels.leOffset, family.buckets ?? []) : { plain: labels.plain, created: undefined, value: 0 };
  return [...series, placeholder];
}

function zeroHistogram(plain: string, leOffset: number, bounds: readonly number[]): HistogramSeriesData {
  return { plain, leOffset, created: undefined, bounds, bucketCount: () => 0, count: 0, sum: 0 };
}

function carriesLabels(series: ExpositionSeries, wanted: Attributes): boolean {
  return Object.keys(wanted).every((key) => {
    const value = wanted[key];
    return value !== undefined && readLabelValue(series.plain, prometheusLabelName(key)) === attributeText(value);
  });
}
