import { parseExposition } from '../../exporters/engine-pull/exposition-parser';
import type { ExpositionFamily, ExpositionSeries, HistogramSeriesData } from '../../exporters/exposition/model';
import { renderLabelText } from '../../views/store/label-text';

/**
 * A 0.0.4 text exposition read back into the exposition model (without `_created`): what a test
 * writes in another format to check that every format carries the same families, series and
 * values. Families, series and samples keep the text's order.
 */
export function familiesFromText(text: string): ExpositionFamily[] {
  return parseExposition(text).map((family) => {
    if (family.type !== 'histogram') {
      const type = family.type === 'counter' ? 'counter' : 'gauge';
      const series = family.samples.map((sample): ExpositionSeries => ({
        plain: renderLabelText(sample.labels).plain,
        created: undefined,
        value: sample.value,
      }));
      return { meta: { name: family.name, type, help: family.help }, series };
    }
    const byLabels = new Map<string, { labels: Record<string, string>; buckets: Array<[number, number]>; count: number; sum: number }>();
    for (const sample of family.samples) {
      const { le, ...labels } = sample.labels;
      const key = renderLabelText(labels).plain;
      let entry = byLabels.get(key);
      if (entry === undefined) byLabels.set(key, (entry = { labels, buckets: [], count: 0, sum: 0 }));
      if (le !== undefined) entry.buckets.push([le === '+Inf' ? Infinity : Number(le), sample.value]);
      else if (sample.name.endsWith('_count')) entry.count = sample.value;
      else entry.sum = sample.value;
    }
    const series = [...byLabels.values()].map(({ labels, buckets, count, sum }): HistogramSeriesData => {
      const text = renderLabelText(labels);
      const bounds = buckets.filter(([bound]) => bound !== Infinity).map(([bound]) => bound);
      const counts = buckets.map(([, cumulative], i) => cumulative - (i === 0 ? 0 : (buckets[i - 1] as [number, number])[1]));
      return { plain: text.plain, leOffset: text.leOffset, created: undefined, bounds, bucketCount: (i) => counts[i] ?? 0, count, sum };
    });
    return { meta: { name: family.name, type: 'histogram', help: family.help }, series };
  });
}
