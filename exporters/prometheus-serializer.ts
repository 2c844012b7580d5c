import type { HrTime } from '@opentelemetry/api';
import type { DataPoint, Histogram, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { DeclaredFamily } from '../views/declared-families';
import type { FamilyType } from '../views/family-definition';
import { formatGoFloat } from '../views/go-float';
import { bucketLabelParts, renderLabelText, type LabelText } from '../views/store/label-text';
import { createdHeader, familyHeader, familyStem, hasCreatedSeries, omitsCountAndSum, PIECE_CHARACTERS, type ExpositionFormat } from './exposition-text';
import { expandSamples } from './samples';
import { collectedFamilies, TARGET_INFO_HELP, type CollectedFamily } from './collected-families';

export interface SerializeOptions {
  readonly format?: ExpositionFormat;
  /** Add the `target_info` family built from the resource (off: vLLM has none). */
  readonly withTargetInfo?: boolean;
  /** Add `otel_scope_name` / `otel_scope_version` labels (off: vLLM has none). */
  readonly withScopeLabels?: boolean;
  /** Print `_created` companions of counters and histograms, valued with each point's start time. Default off. */
  readonly createdSeries?: boolean;
}

/**
 * Renders collected metrics in the byte shape of vLLM's `/metrics` (Python prometheus_client):
 * HELP then TYPE once per family, counters under their `_total` name, labels sorted by name,
 * Go-style numbers, cumulative buckets in increasing `le` ending at `+Inf`, `_created` when asked.
 * Declared families come first, in declaration order; anything else collected follows.
 * A pure function: the readers, the cluster aggregate and the tests share it.
 */
export function serializePrometheus(resourceMetrics: ResourceMetrics, declared: readonly DeclaredFamily[], options: SerializeOptions = {}): string {
  return Array.from(prometheusPieces(resourceMetrics, declared, options)).join('');
}

/** `serializePrometheus` in pieces of about `PIECE_CHARACTERS`, produced as they are pulled (for a rendering in slices). */
export function* prometheusPieces(
  resourceMetrics: ResourceMetrics,
  declared: readonly DeclaredFamily[],
  options: SerializeOptions = {},
): Generator<string, void, undefined> {
  const openMetrics = options.format === 'openmetrics';
  if (options.withTargetInfo) yield targetInfoText(resourceMetrics, openMetrics);
  yield* familyPieces(resourceMetrics, declared, options);
  if (openMetrics) yield '# EOF\n';
}

/**
 * The families alone: no `target_info`, no `# EOF`, for a caller that puts them together with
 * other text. Streams named like a family in `reserved` are left out (with a warning): that
 * family is printed by someone else, and one family must not be printed twice.
 */
export function serializeFamilies(
  resourceMetrics: ResourceMetrics,
  declared: readonly DeclaredFamily[],
  options: SerializeOptions = {},
  reserved: ReadonlySet<string> = new Set(),
): string {
  return Array.from(familyPieces(resourceMetrics, declared, options, reserved)).join('');
}

function* familyPieces(
  resourceMetrics: ResourceMetrics,
  declared: readonly DeclaredFamily[],
  options: SerializeOptions,
  reserved: ReadonlySet<string> = new Set(),
): Generator<string, void, undefined> {
  const openMetrics = options.format === 'openmetrics';
  for (const family of collectedFamilies(resourceMetrics, declared, options.withScopeLabels === true, reserved)) {
    yield* familyText(family, openMetrics, options.createdSeries === true);
  }
}

function* familyText(family: CollectedFamily, openMetrics: boolean, createdSeries: boolean): Generator<string, void, undefined> {
  const created =
    createdSeries && hasCreatedSeries(family.type) && family.declared?.omitCreated !== true ? `${familyStem(family.name, family.type)}_created` : undefined;
  let out = familyHeader(family.name, family.type, family.help, openMetrics);
  for (const { labels, point, placeholder } of family.series) {
    const text = renderLabelText(labels);
    out += samplesText(family.name, family.type, text, point, openMetrics);
    if (created !== undefined && openMetrics && !placeholder) out += `${created}${text.plain} ${createdText(point.startTime)}\n`;
    if (out.length >= PIECE_CHARACTERS) {
      yield out;
      out = '';
    }
  }
  const withCreated = created === undefined || openMetrics ? [] : family.series.filter((series) => !series.placeholder);
  if (withCreated.length > 0) {
    out += createdHeader(family.name, family.type, family.help);
    for (const { labels, point } of withCreated) {
      out += `${created}${renderLabelText(labels).plain} ${createdText(point.startTime)}\n`;
      if (out.length >= PIECE_CHARACTERS) {
        yield out;
        out = '';
      }
    }
  }
  if (out !== '') yield out;
}

/** One point's samples (a histogram's buckets, count and sum) under the family's name. */
function samplesText(name: string, type: FamilyType, labels: LabelText, point: DataPoint<number> | DataPoint<Histogram>, openMetrics: boolean): string {
  const bucket = type === 'histogram' ? bucketLabelParts(labels) : undefined;
  const noCountAndSum = typeof point.value !== 'number' && omitsCountAndSum(point.value.sum ?? 0, openMetrics);
  let out = '';
  expandSamples(name, point.value, (sampleName, value, le, suffix) => {
    if (noCountAndSum && (suffix === '_count' || suffix === '_sum')) return;
    out += `${sampleName}${le === undefined || bucket === undefined ? labels.plain : `${bucket.before}${le}${bucket.after}`} ${formatGoFloat(value)}\n`;
  });
  return out;
}

/**
 * A stream's series as lines of a family block printed by someone else (the store's renderer
 * prints pulled engines' series in its own families' blocks): no header, in each form a block
 * takes. Rendered once, printed by every scrape until the stream changes.
 */
export interface SeriesLines {
  /** 0.0.4 text: the samples. */
  readonly text: string;
  /** 0.0.4 text: the `_created` samples, for the family's separate `_created` block. */
  readonly textCreated: string;
  /** OpenMetrics: the samples, each series followed by its `_created`. */
  readonly openMetrics: string;
  /** OpenMetrics without `_created`. */
  readonly openMetricsWithoutCreated: string;
}

/** The lines of `metric`'s points in a family named `name` of type `type` (see `SeriesLines`). */
export function seriesLines(metric: MetricData, name: string, type: FamilyType): SeriesLines {
  const created = hasCreatedSeries(type) ? `${familyStem(name, type)}_created` : undefined;
  let text = '';
  let textCreated = '';
  let openMetrics = '';
  let openMetricsWithoutCreated = '';
  for (const point of metric.dataPoints as Array<DataPoint<number> | DataPoint<Histogram>>) {
    const labels = renderLabelText(point.attributes);
    const samples = samplesText(name, type, labels, point, false);
    const openMetricsSamples = samplesText(name, type, labels, point, true);
    const createdLine = created === undefined ? '' : `${created}${labels.plain} ${createdText(point.startTime)}\n`;
    text += samples;
    textCreated += createdLine;
    openMetrics += openMetricsSamples + createdLine;
    openMetricsWithoutCreated += openMetricsSamples;
  }
  return { text, textCreated, openMetrics, openMetricsWithoutCreated };
}

/** A start time as `_created` prints it: seconds since the epoch. */
function createdText([seconds, nanos]: HrTime): string {
  return formatGoFloat(seconds + nanos / 1e9);
}

/** The `target_info` family built from the resource's attributes. */
export function targetInfoText(resourceMetrics: ResourceMetrics, openMetrics: boolean): string {
  // OpenMetrics names an info family without its `_info` sample suffix.
  const family = openMetrics ? 'target' : 'target_info';
  const labels = renderLabelText(resourceMetrics.resource.attributes).plain;
  return `# HELP ${family} ${TARGET_INFO_HELP}\n# TYPE ${family} ${openMetrics ? 'info' : 'gauge'}\ntarget_info${labels} 1${openMetrics ? '' : '.0'}\n`;
}
