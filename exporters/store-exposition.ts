import { formatGoFloat } from '../views/go-float';
import type { FamilySeries } from '../views/store/family-series';
import type { CounterSeries, GaugeSeries, HistogramSeries } from '../views/store/series';
import type { SeriesStore } from '../views/store/series-store';
import { createdHeader, familyHeader, familyStem, hasCreatedSeries, type ExpositionFormat } from './exposition-text';

export interface StoreExpositionOptions {
  readonly format: ExpositionFormat;
  /** Print `_created` companions of counters and histograms. */
  readonly createdSeries: boolean;
}

/** What a family prints the same on every scrape, rendered once per family. */
interface FamilyText {
  readonly textHeader: string;
  readonly openMetricsHeader: string;
  readonly createdHeader: string;
  readonly sample: string;
  readonly bucket: string;
  readonly count: string;
  readonly sum: string;
  readonly created: string;
  /** Bucket bounds as `le` prints them, `+Inf` last. */
  readonly le: readonly string[];
}

const familyTexts = new WeakMap<FamilySeries, FamilyText>();

/**
 * The store's families in the byte shape of vLLM's `/metrics` (prometheus_client): every family
 * in catalog order, HELP/TYPE even without series, series in creation order. Label blocks come
 * pre-rendered from the store and the constant parts of each family from a per-family cache, so a
 * scrape formats numbers and concatenates strings, nothing more.
 */
export function renderStore(store: SeriesStore, options: StoreExpositionOptions): string {
  const openMetrics = options.format === 'openmetrics';
  let out = '';
  for (const family of store.families) {
    const text = familyText(family);
    const created = options.createdSeries && hasCreatedSeries(family.family.type);
    out += openMetrics ? text.openMetricsHeader : text.textHeader;
    if (family.family.type === 'histogram') {
      for (const series of family.series as HistogramSeries[]) {
        out += histogramLines(text, series);
        if (created && openMetrics) out += `${text.created}${series.labels.plain} ${series.createdText}\n`;
      }
    } else {
      for (const series of family.series as Array<CounterSeries | GaugeSeries>) {
        out += `${text.sample}${series.labels.plain} ${formatGoFloat(series.value)}\n`;
        if (created && openMetrics) out += `${text.created}${series.labels.plain} ${series.createdText}\n`;
      }
    }
    if (created && !openMetrics && family.series.length > 0) {
      out += text.createdHeader;
      for (const series of family.series) out += `${text.created}${series.labels.plain} ${series.createdText}\n`;
    }
  }
  return out;
}

function histogramLines(text: FamilyText, series: HistogramSeries): string {
  const { beforeLe, afterLe, plain } = series.labels;
  const counts = series.counts;
  let out = '';
  let cumulative = 0;
  for (let i = 0; i < counts.length; i++) {
    cumulative += counts[i];
    out += `${text.bucket}${beforeLe}${text.le[i]}${afterLe} ${formatGoFloat(cumulative)}\n`;
  }
  return `${out}${text.count}${plain} ${formatGoFloat(series.count)}\n${text.sum}${plain} ${formatGoFloat(series.sum)}\n`;
}

function familyText(family: FamilySeries): FamilyText {
  let text = familyTexts.get(family);
  if (text === undefined) {
    const { name, type, help } = family.family;
    text = {
      textHeader: familyHeader(name, type, help, false),
      openMetricsHeader: familyHeader(name, type, help, true),
      createdHeader: createdHeader(name, type, help),
      sample: name,
      bucket: `${name}_bucket`,
      count: `${name}_count`,
      sum: `${name}_sum`,
      created: `${familyStem(name, type)}_created`,
      le: [...Array.from(family.bounds, formatGoFloat), '+Inf'],
    };
    familyTexts.set(family, text);
  }
  return text;
}
