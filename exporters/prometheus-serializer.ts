import { packageDiag } from '../views/package-diag';
import { type Attributes, type HrTime } from '@opentelemetry/api';
import type { DataPoint, Histogram, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { DeclaredFamily } from '../views/declared-families';
import type { FamilyType } from '../views/family-definition';
import { formatGoFloat } from '../views/go-float';
import { LimitedWarning } from '../views/diag-warnings';
import { bucketLabelParts, renderLabelText, type LabelText } from '../views/store/label-text';
import { createdHeader, familyHeader, familyStem, hasCreatedSeries, omitsCountAndSum, PIECE_CHARACTERS, type ExpositionFormat } from './exposition-text';
import { expandSamples, prometheusFamilyName, prometheusType } from './samples';

export interface SerializeOptions {
  readonly format?: ExpositionFormat;
  /** Add the `target_info` family built from the resource (off: vLLM has none). */
  readonly withTargetInfo?: boolean;
  /** Add `otel_scope_name` / `otel_scope_version` labels (off: vLLM has none). */
  readonly withScopeLabels?: boolean;
  /** Print `_created` companions of counters and histograms, valued with each point's start time. Default off. */
  readonly createdSeries?: boolean;
}

interface Series {
  readonly labels: Attributes;
  readonly point: DataPoint<number> | DataPoint<Histogram>;
  /** A declared zero series: it has no creation time of its own, so no `_created`. */
  readonly placeholder?: true;
}

interface Family {
  readonly name: string;
  readonly type: FamilyType;
  help: string;
  readonly series: Series[];
  readonly declared?: DeclaredFamily;
}

const collidingStreams = new LimitedWarning();

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
  const families = new Map<string, Family>();
  const aliases = new Map<string, string>();
  for (const family of declared) {
    families.set(family.name, { name: family.name, type: family.type, help: family.help, series: [], declared: family });
    if (family.streamName !== undefined && family.streamName !== family.name) aliases.set(family.streamName, family.name);
  }
  for (const scopeMetrics of resourceMetrics.scopeMetrics) {
    const scopeLabels: Attributes = options.withScopeLabels
      ? { otel_scope_name: scopeMetrics.scope.name, otel_scope_version: scopeMetrics.scope.version ?? '' }
      : {};
    for (const metric of scopeMetrics.metrics) addMetric(families, aliases, reserved, metric, scopeLabels);
  }
  for (const family of families.values()) yield* familyText(family, openMetrics, options.createdSeries === true);
}

function addMetric(
  families: Map<string, Family>,
  aliases: ReadonlyMap<string, string>,
  reserved: ReadonlySet<string>,
  metric: MetricData,
  scopeLabels: Attributes,
): void {
  const type = prometheusType(metric);
  if (type === undefined) {
    packageDiag.warn(`omni-otel-metrics: ${metric.descriptor.name} is an exponential histogram; the Prometheus text format cannot carry it`);
    return;
  }
  const name = aliases.get(metric.descriptor.name) ?? prometheusFamilyName(metric.descriptor.name, type);
  if (reserved.has(name)) {
    collidingStreams.warn(
      `a stream named ${name} was recorded outside the package's series store; the store's family of that name is printed, the stream is left out`,
    );
    return;
  }
  let family = families.get(name);
  if (family === undefined) {
    family = { name, type, help: metric.descriptor.description, series: [] };
    families.set(name, family);
  } else if (family.type !== type) {
    packageDiag.warn(`omni-otel-metrics: ${name} was collected as ${type} but is a ${family.type}; dropped from the exposition`);
    return;
  }
  if (family.help === '') family.help = metric.descriptor.description;
  for (const point of metric.dataPoints as Array<DataPoint<number> | DataPoint<Histogram>>) {
    family.series.push({ labels: { ...point.attributes, ...scopeLabels }, point });
  }
}

function* familyText(family: Family, openMetrics: boolean, createdSeries: boolean): Generator<string, void, undefined> {
  addEagerSeries(family);
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

/**
 * The declared zero series, unless a collected series carries its labels, alone or with more (the
 * workers' per-tenant series of a family whose `{model_name}` series request labels replaced).
 */
function addEagerSeries(family: Family): void {
  const eager = family.declared?.eagerAttributes;
  if (eager === undefined || family.series.some((s) => carriesLabels(s.labels, eager))) return;
  const buckets = family.declared?.buckets ?? [];
  const value: number | Histogram =
    family.type === 'histogram' ? { buckets: { boundaries: [...buckets], counts: new Array<number>(buckets.length + 1).fill(0) }, count: 0, sum: 0 } : 0;
  const point = { attributes: eager, startTime: [0, 0], endTime: [0, 0], value } as DataPoint<number> | DataPoint<Histogram>;
  family.series.push({ labels: eager, point, placeholder: true });
}

function carriesLabels(labels: Attributes, wanted: Attributes): boolean {
  return Object.keys(wanted).every((key) => labels[key] === wanted[key]);
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
  return `# HELP ${family} Target metadata\n# TYPE ${family} ${openMetrics ? 'info' : 'gauge'}\ntarget_info${labels} 1${openMetrics ? '' : '.0'}\n`;
}
