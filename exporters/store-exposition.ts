import { formatGoFloat } from '../views/go-float';
import type { FamilySeries } from '../views/store/family-series';
import { bucketLabelParts } from '../views/store/label-text';
import type { CounterSeries, GaugeSeries, HistogramSeries } from '../views/store/series';
import type { SeriesStore } from '../views/store/series-store';
import { createdHeader, familyHeader, familyStem, hasCreatedSeries, omitsCountAndSum, type ExpositionFormat } from './exposition-text';

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
 * Text is concatenated in small pieces and encoded a chunk at a time: a string built by `+=`
 * is a tree of pieces that must be copied flat before it can be sent, and one tree of a whole
 * large scrape stays alive through many young-generation collections, which then copy it over
 * and over. Chunks of this size die young.
 */
const CHUNK_CHARACTERS = 16_384;

class ChunkedBytes {
  private readonly chunks: Buffer[] = [];
  text = '';

  /** Encodes what has been written when it is a chunk's worth. */
  checkpoint(): void {
    if (this.text.length >= CHUNK_CHARACTERS) this.flush();
  }

  bytes(): Buffer {
    this.flush();
    return this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
  }

  private flush(): void {
    if (this.text.length === 0) return;
    this.chunks.push(Buffer.from(this.text, 'utf8'));
    this.text = '';
  }
}

/**
 * The store's families in the byte shape of vLLM's `/metrics` (prometheus_client), as UTF-8:
 * every family in catalog order, HELP/TYPE even without series, series in creation order. Label
 * blocks come pre-rendered from the store and the constant parts of each family from a
 * per-family cache, so a scrape formats numbers and concatenates strings, nothing more. The
 * store's collect hooks run first, so values read rather than recorded are current.
 */
export function renderStore(store: SeriesStore, options: StoreExpositionOptions): Buffer {
  store.runCollectHooks();
  const openMetrics = options.format === 'openmetrics';
  const out = new ChunkedBytes();
  for (const family of store.families) {
    const text = familyText(family);
    const created = options.createdSeries && hasCreatedSeries(family.family.type) && family.family.omitCreated !== true;
    out.text += openMetrics ? text.openMetricsHeader : text.textHeader;
    if (family.family.type === 'histogram') {
      for (const series of family.series as HistogramSeries[]) {
        out.text += histogramLines(text, series, openMetrics);
        if (created && openMetrics) out.text += `${text.created}${series.plain} ${series.createdText}\n`;
        out.checkpoint();
      }
    } else {
      for (const series of family.series as Array<CounterSeries | GaugeSeries>) {
        out.text += `${text.sample}${series.plain} ${formatGoFloat(series.value)}\n`;
        if (created && openMetrics) out.text += `${text.created}${series.plain} ${series.createdText}\n`;
        out.checkpoint();
      }
    }
    if (created && !openMetrics && family.series.length > 0) {
      out.text += text.createdHeader;
      for (const series of family.series) {
        out.text += `${text.created}${series.plain} ${series.createdText}\n`;
        out.checkpoint();
      }
    }
  }
  return out.bytes();
}

function histogramLines(text: FamilyText, series: HistogramSeries, openMetrics: boolean): string {
  const { before, after } = bucketLabelParts(series);
  const plain = series.plain;
  let out = '';
  let cumulative = 0;
  for (let i = 0; i < text.le.length; i++) {
    cumulative += series.bucketCount(i);
    out += `${text.bucket}${before}${text.le[i]}${after} ${formatGoFloat(cumulative)}\n`;
  }
  if (omitsCountAndSum(series.sum, openMetrics)) return out;
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
