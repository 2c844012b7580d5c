import { formatGoFloat } from '../views/go-float';
import type { FamilySeries } from '../views/store/family-series';
import { bucketLabelParts } from '../views/store/label-text';
import type { CounterSeries, GaugeSeries, HistogramSeries, StoredSeries } from '../views/store/series';
import { exemplarsOf } from '../views/store/exemplar-series';
import { exemplarText } from './exemplar-text';
import type { SeriesStore } from '../views/store/series-store';
import type { FamilyType } from '../views/family-definition';
import type { SeriesLines } from './prometheus-serializer';
import { createdHeader, familyHeader, familyStem, hasCreatedSeries, omitsCountAndSum, PIECE_CHARACTERS, type ExpositionFormat } from './exposition-text';

export interface StoreExpositionOptions {
  readonly format: ExpositionFormat;
  /** Print `_created` companions of counters and histograms. */
  readonly createdSeries: boolean;
}

/**
 * Series of another source printed in the store's family blocks (pulled engines'), and the store's
 * own series they stand for.
 */
export interface JoinedSeries {
  /** Whether a store series of a family that carries vLLM's `engine` label is left out (its replica's engine is pulled). */
  readonly replaced: (series: StoredSeries) => boolean;
  /** The other source's lines of a family (of the store family's type), printed after the store's own series. */
  lines(familyName: string, type: FamilyType): SeriesLines | undefined;
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
 * The store's families in the byte shape of vLLM's `/metrics` (prometheus_client): every family in
 * catalog order, HELP/TYPE even without series, series in creation order. Label blocks come
 * pre-rendered from the store and the constant parts of each family from a per-family cache, so a
 * scrape formats numbers and concatenates strings, nothing more. The store's collect hooks run
 * first, so values read rather than recorded are current.
 *
 * Produced lazily, one piece of about `PIECE_CHARACTERS` at a time, so a caller can stop between
 * pieces and let the event loop run. Each series is read within one piece, so its samples agree
 * with each other (a histogram's buckets, count and sum); series are taken as the store held them
 * when the rendering began (a replica removed meanwhile still prints, one added does not).
 */
export function* storeExposition(store: SeriesStore, options: StoreExpositionOptions, joined?: JoinedSeries): Generator<string, void, undefined> {
  store.runCollectHooks();
  const openMetrics = options.format === 'openmetrics';
  const families = store.families.map((family) => [family, family.seriesSnapshot()] as const);
  let out = '';
  for (const [family, series] of families) {
    const text = familyText(family);
    const created = options.createdSeries && hasCreatedSeries(family.family.type) && family.family.omitCreated !== true;
    out += openMetrics ? text.openMetricsHeader : text.textHeader;
    const histogram = family.family.type === 'histogram';
    const replaced = joined !== undefined && family.family.engineLabel ? joined.replaced : undefined;
    // Exemplars are an OpenMetrics feature: the 0.0.4 text never carries them.
    const exemplars = openMetrics && family.exemplars;
    let printed = 0;
    for (let i = 0; i < series.length; i++) {
      const one = series[i] as StoredSeries;
      if (replaced?.(one) === true) continue;
      printed++;
      out += histogram
        ? histogramLines(text, one as HistogramSeries, openMetrics, exemplars)
        : `${text.sample}${one.plain} ${formatGoFloat((one as CounterSeries | GaugeSeries).value)}${exemplars ? exemplarText(exemplarsOf(one)?.at(0)) : ''}\n`;
      if (created && openMetrics) out += `${text.created}${one.plain} ${one.created.exposition}\n`;
      if (out.length >= PIECE_CHARACTERS) {
        yield out;
        out = '';
      }
    }
    const lines = joined?.lines(family.family.name, family.family.type);
    if (lines !== undefined) out += openMetrics ? (created ? lines.openMetrics : lines.openMetricsWithoutCreated) : lines.text;
    if (created && !openMetrics && (printed > 0 || (lines !== undefined && lines.textCreated !== ''))) {
      out += text.createdHeader;
      for (let i = 0; i < series.length; i++) {
        const one = series[i] as StoredSeries;
        if (replaced?.(one) === true) continue;
        out += `${text.created}${one.plain} ${one.created.exposition}\n`;
        if (out.length >= PIECE_CHARACTERS) {
          yield out;
          out = '';
        }
      }
      if (lines !== undefined) out += lines.textCreated;
    }
  }
  if (out !== '') yield out;
}

/** The whole rendering at once, as UTF-8 (for callers that need no slicing: tests, small stores). */
export function renderStore(store: SeriesStore, options: StoreExpositionOptions): Buffer {
  return Buffer.concat(Array.from(storeExposition(store, options), (piece) => Buffer.from(piece, 'utf8')));
}

function histogramLines(text: FamilyText, series: HistogramSeries, openMetrics: boolean, exemplars: boolean): string {
  const { before, after } = bucketLabelParts(series);
  const plain = series.plain;
  const slots = exemplars ? exemplarsOf(series) : undefined;
  let out = '';
  let cumulative = 0;
  for (let i = 0; i < text.le.length; i++) {
    cumulative += series.bucketCount(i);
    out += `${text.bucket}${before}${text.le[i]}${after} ${formatGoFloat(cumulative)}${slots === undefined ? '' : exemplarText(slots.at(i))}\n`;
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
