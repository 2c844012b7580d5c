import { formatGoFloat } from '../../views/common/go-float';
import { bucketLabelParts, renderLabelText, type LabelText } from '../../views/store/label-text';
import type { Attributes } from '@opentelemetry/api';
import { exemplarText } from './exemplar-text';
import { familyStem, hasCreatedSeries, PIECE_CHARACTERS, type ExpositionFormat } from './exposition-text';
import type { ExpositionFamily, ExpositionType, FamilyMeta, HistogramSeriesData, NumberSeries, SeriesIdentity } from './model';
import { escapedLabelName, escapedMetricName, type NameEscaping } from './name-escaping';

export interface TextWriteOptions {
  readonly format: ExpositionFormat;
  /** Print `_created` companions of counters and histograms. */
  readonly createdSeries: boolean;
  /** How names that are not legacy Prometheus names print; default `underscores`. */
  readonly escaping?: NameEscaping;
}

/** What a family prints the same on every scrape, derived once per family (and escaping). */
interface FamilyText {
  readonly textHeader: string;
  readonly openMetricsHeader: string;
  /** The 0.0.4 text's separate gauge family of `_created` samples. */
  readonly createdHeader: string;
  readonly sample: string;
  readonly bucket: string;
  readonly count: string;
  readonly sum: string;
  readonly created: string;
}

const familyTexts = new WeakMap<FamilyMeta, Map<NameEscaping, FamilyText>>();
/** Bucket bounds as `le` prints them, `+Inf` last: once per bounds array (a store family shares one among its series). */
const leTexts = new WeakMap<object, readonly string[]>();

/**
 * The families in the byte shape of vLLM's `/metrics` (Python prometheus_client), in the 0.0.4
 * text format or OpenMetrics 1.0: HELP then TYPE once per family, even without series; counters
 * under their `_total` name (OpenMetrics: the family under its stem); Go-style numbers;
 * cumulative buckets in increasing `le` ending at `+Inf`; `_created` when asked (OpenMetrics:
 * after each series; the 0.0.4 text: a gauge family of its own after the family's samples);
 * exemplars (OpenMetrics only) after the bucket or counter sample they belong to; `# EOF` last in
 * OpenMetrics.
 *
 * Produced lazily, one piece of about `PIECE_CHARACTERS` at a time, so a caller can stop between
 * pieces and let the event loop run. Each series is read within one piece, so its samples agree
 * with each other (a histogram's buckets, count and sum).
 */
export function* textExposition(families: Iterable<ExpositionFamily>, options: TextWriteOptions): Generator<string, void, undefined> {
  const openMetrics = options.format === 'openmetrics';
  const escaping = options.escaping ?? 'underscores';
  let out = '';
  for (const { meta, series } of families) {
    const text = familyText(meta, escaping);
    const created = options.createdSeries && hasCreatedSeries(meta.type) && meta.omitCreated !== true;
    const histogram = meta.type === 'histogram';
    const infoValue = openMetrics && meta.openMetricsInfo === true;
    out += openMetrics ? text.openMetricsHeader : text.textHeader;
    let createdCount = 0;
    for (let i = 0; i < series.length; i++) {
      const one = series[i] as NumberSeries | HistogramSeriesData;
      const labels = labelsOf(one, escaping);
      if (histogram) out += histogramLines(text, one as HistogramSeriesData, labels, openMetrics);
      else {
        const value = infoValue ? '1' : formatGoFloat((one as NumberSeries).value);
        const exemplar = openMetrics ? exemplarText(one.exemplars?.at(0)) : '';
        out += `${text.sample}${labels.plain} ${value}${exemplar}\n`;
      }
      if (created && one.created !== undefined) {
        createdCount++;
        if (openMetrics) out += `${text.created}${labels.plain} ${one.created.exposition}\n`;
      }
      if (out.length >= PIECE_CHARACTERS) {
        yield out;
        out = '';
      }
    }
    if (createdCount > 0 && !openMetrics) {
      out += text.createdHeader;
      for (let i = 0; i < series.length; i++) {
        const one = series[i] as SeriesIdentity;
        if (one.created === undefined) continue;
        out += `${text.created}${labelsOf(one, escaping).plain} ${one.created.exposition}\n`;
        if (out.length >= PIECE_CHARACTERS) {
          yield out;
          out = '';
        }
      }
    }
  }
  if (openMetrics) out += '# EOF\n';
  if (out !== '') yield out;
}

/** The whole text at once (for callers that need no slicing: tests, small expositions). */
export function writeText(families: Iterable<ExpositionFamily>, options: TextWriteOptions): string {
  return Array.from(textExposition(families, options)).join('');
}

function histogramLines(text: FamilyText, series: HistogramSeriesData, labels: LabelText, openMetrics: boolean): string {
  const { before, after } = bucketLabelParts(labels);
  const le = leTextsOf(series.bounds);
  const exemplars = openMetrics ? series.exemplars : undefined;
  let out = '';
  let cumulative = 0;
  for (let i = 0; i < le.length; i++) {
    cumulative += series.bucketCount(i);
    out += `${text.bucket}${before}${le[i]}${after} ${formatGoFloat(cumulative)}${exemplars === undefined ? '' : exemplarText(exemplars.at(i))}\n`;
  }
  if (omitsCountAndSum(series.sum, openMetrics)) return out;
  return `${out}${text.count}${labels.plain} ${formatGoFloat(series.count)}\n${text.sum}${labels.plain} ${formatGoFloat(series.sum)}\n`;
}

/**
 * OpenMetrics treats a histogram's `_sum` as a counter that must not be negative, and has `_count`
 * and `_sum` appear together: a histogram whose sum is negative (negative observations) carries
 * neither, its `+Inf` bucket still counting everything. The 0.0.4 text format prints both either
 * way, as prometheus_client does.
 */
function omitsCountAndSum(sum: number, openMetrics: boolean): boolean {
  return openMetrics && sum < 0;
}

/** The series' label text under `escaping`: its own, unless a label name needs the scheme's escaping. */
function labelsOf(series: SeriesIdentity, escaping: NameEscaping): LabelText {
  const source = series.sourceLabels;
  if (escaping === 'underscores' || source === undefined) return series as SeriesIdentity & LabelText;
  const escaped: Attributes = {};
  for (const key of Object.keys(source)) escaped[escapedLabelName(key, escaping)] = source[key];
  return renderLabelText(escaped);
}

function leTextsOf(bounds: ArrayLike<number>): readonly string[] {
  let texts = leTexts.get(bounds);
  if (texts === undefined) {
    texts = [...Array.from(bounds, formatGoFloat), '+Inf'];
    leTexts.set(bounds, texts);
  }
  return texts;
}

function familyText(meta: FamilyMeta, escaping: NameEscaping): FamilyText {
  // A legacy name prints the same under every scheme: one entry serves them all.
  const key = meta.sourceStem === undefined ? 'underscores' : escaping;
  let byEscaping = familyTexts.get(meta);
  if (byEscaping === undefined) familyTexts.set(meta, (byEscaping = new Map()));
  let text = byEscaping.get(key);
  if (text === undefined) {
    text = buildFamilyText(meta, exposedName(meta, key));
    byEscaping.set(key, text);
  }
  return text;
}

/** The family's name under `escaping` (counters with `_total`). */
export function exposedName(meta: FamilyMeta, escaping: NameEscaping): string {
  if (meta.sourceStem === undefined || escaping === 'underscores') return meta.name;
  return `${escapedMetricName(meta.sourceStem, escaping)}${meta.type === 'counter' ? '_total' : ''}`;
}

function buildFamilyText(meta: FamilyMeta, name: string): FamilyText {
  const { type, help } = meta;
  const stem = familyStem(name, type);
  const openMetricsName = meta.openMetricsInfo === true && name.endsWith('_info') ? name.slice(0, -'_info'.length) : stem;
  return {
    textHeader: header(name, type, help, false),
    openMetricsHeader: header(openMetricsName, meta.openMetricsInfo === true ? 'info' : type, help, true),
    createdHeader: header(`${stem}_created`, 'gauge', help, false),
    sample: name,
    bucket: `${name}_bucket`,
    count: `${name}_count`,
    sum: `${name}_sum`,
    created: `${stem}_created`,
  };
}

function header(name: string, type: ExpositionType | 'info', help: string, openMetrics: boolean): string {
  return `# HELP ${name} ${escapeHelp(help, openMetrics)}\n# TYPE ${name} ${type}\n`;
}

function escapeHelp(help: string, openMetrics: boolean): string {
  const escaped = help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return openMetrics ? escaped.replace(/"/g, '\\"') : escaped;
}
