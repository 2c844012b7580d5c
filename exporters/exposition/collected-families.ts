import type { Attributes } from '@opentelemetry/api';
import type { DataPoint, Histogram, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { Resource } from '@opentelemetry/resources';
import type { DeclaredFamily } from '../../views/declared-families';
import { WarnOnce } from '../../views/common/diag-warnings';
import { METRIC_NAME_PATTERN } from '../../views/catalog/names';
import { renderLabelText } from '../../views/store/label-text';
import { prometheusFamilyName, prometheusType } from '../samples';
import type { ExpositionFamily, ExpositionSeries, ExpositionType, FamilyMeta, HistogramSeriesData, NumberSeries } from './model';
import { withDeclared } from './declared';
import { sourceLabelsOf, StartTime } from './series-views';

/**
 * The SDK's collected streams (the application's own instruments on the same provider) as
 * exposition families: what every format prints after the package's own families.
 */

/** HELP of `target_info`, as the OpenTelemetry Prometheus exporters print it. */
export const TARGET_INFO_HELP = 'Target metadata';

const TARGET_INFO_META: FamilyMeta = Object.freeze({ name: 'target_info', type: 'gauge', help: TARGET_INFO_HELP, openMetricsInfo: true });

const unprintable = new WarnOnce();

interface GatheredFamily {
  readonly meta: FamilyMeta;
  readonly series: ExpositionSeries[];
}

/**
 * Declared families first, in declaration order (see `withDeclared`); then every other collected
 * stream, in collection order. Streams of one name in several scopes join one family; with
 * `withScopeLabels` each series carries its scope as `otel_scope_name` / `otel_scope_version`.
 */
export function collectedFamilies(resourceMetrics: ResourceMetrics, declared: readonly DeclaredFamily[] = [], withScopeLabels = false): ExpositionFamily[] {
  const families = new Map<string, GatheredFamily>();
  // The `otel` naming scheme collects a declared family under its stream name.
  const aliases = new Map(
    declared.flatMap((family) => (family.streamName !== undefined && family.streamName !== family.name ? [[family.streamName, family.name] as const] : [])),
  );
  for (const scopeMetrics of resourceMetrics.scopeMetrics) {
    const scope: Attributes | undefined = withScopeLabels
      ? { otel_scope_name: scopeMetrics.scope.name, otel_scope_version: scopeMetrics.scope.version ?? '' }
      : undefined;
    for (const metric of scopeMetrics.metrics) addMetric(families, aliases, metric, scope);
  }
  return withDeclared([...families.values()], declared);
}
/** `target_info`: one gauge series valued 1, labelled with the resource's attributes (an info family in OpenMetrics). */
export function targetInfoFamily(resource: Resource): ExpositionFamily {
  const attributes = resource.attributes;
  const series: NumberSeries = { ...renderLabelText(attributes), created: undefined, value: 1, sourceLabels: sourceLabelsOf(attributes) };
  return { meta: TARGET_INFO_META, series: [series] };
}

function addMetric(families: Map<string, GatheredFamily>, aliases: ReadonlyMap<string, string>, metric: MetricData, scope: Attributes | undefined): void {
  const streamName = metric.descriptor.name;
  const type = prometheusType(metric);
  if (type === undefined) {
    unprintable.warn(
      `exponential ${streamName}`,
      `${streamName} is an exponential histogram, which no Prometheus exposition of the application's instruments carries; it is left out of /metrics (OTLP carries it)`,
    );
    return;
  }
  const name = aliases.get(streamName) ?? prometheusFamilyName(streamName, type);
  let family = families.get(name);
  if (family === undefined) {
    family = { meta: familyMeta(name, streamName, type, metric), series: [] };
    families.set(name, family);
  } else if (family.meta.type !== type) {
    unprintable.warn(
      `type ${name} ${type}`,
      `${streamName} was collected as a ${type} where ${name} is a ${family.meta.type} (an instrument of that name with another kind, in another meter); the ${type} is left out of /metrics`,
    );
    return;
  }
  if (family.meta.help === '' && metric.descriptor.description !== '') {
    family = { ...family, meta: { ...family.meta, help: metric.descriptor.description } };
    families.set(name, family);
  }
  for (const point of metric.dataPoints as Array<DataPoint<number> | DataPoint<Histogram>>) family.series.push(pointSeries(point, scope));
}

function familyMeta(name: string, streamName: string, type: ExpositionType, metric: MetricData): FamilyMeta {
  const stem = type === 'counter' && streamName.endsWith('_total') ? streamName.slice(0, -'_total'.length) : streamName;
  return {
    name,
    type,
    help: metric.descriptor.description,
    unit: metric.descriptor.unit,
    ...(METRIC_NAME_PATTERN.test(stem) ? {} : { sourceStem: stem }),
  };
}

function pointSeries(point: DataPoint<number> | DataPoint<Histogram>, scope: Attributes | undefined): ExpositionSeries {
  const attributes = scope === undefined ? point.attributes : { ...point.attributes, ...scope };
  const labels = renderLabelText(attributes);
  const sourceLabels = sourceLabelsOf(attributes);
  const created = new StartTime(point.startTime);
  const value = point.value;
  if (typeof value === 'number') return { plain: labels.plain, created, value, sourceLabels };
  return new PointHistogram(labels.plain, labels.leOffset, created, sourceLabels, value.buckets.boundaries, value.buckets.counts, value.count, value.sum ?? 0);
}

/** A collected histogram point (or a declared zero series) as a model series. */
class PointHistogram implements HistogramSeriesData {
  constructor(
    readonly plain: string,
    readonly leOffset: number,
    readonly created: StartTime | undefined,
    readonly sourceLabels: Attributes | undefined,
    readonly bounds: readonly number[],
    private readonly counts: readonly number[],
    readonly count: number,
    readonly sum: number,
  ) {}

  bucketCount(i: number): number {
    return this.counts[i] ?? 0;
  }
}
