import { packageDiag } from '../views/package-diag';
import type { Attributes } from '@opentelemetry/api';
import type { DataPoint, Histogram, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { DeclaredFamily } from '../views/declared-families';
import type { FamilyType } from '../views/family-definition';
import { LimitedWarning } from '../views/diag-warnings';
import { prometheusFamilyName, prometheusType } from './samples';

/**
 * The SDK's collected streams gathered into Prometheus families: what the text serializer prints
 * and the protobuf exposition encodes, so both formats carry the same families, series and values.
 */

export interface CollectedSeries {
  readonly labels: Attributes;
  readonly point: DataPoint<number> | DataPoint<Histogram>;
  /** A declared zero series: it has no creation time of its own, so no `_created`. */
  readonly placeholder?: true;
}

export interface CollectedFamily {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
  readonly series: readonly CollectedSeries[];
  readonly declared?: DeclaredFamily;
}

interface MutableFamily {
  readonly name: string;
  readonly type: FamilyType;
  help: string;
  readonly series: CollectedSeries[];
  readonly declared?: DeclaredFamily;
}

/** HELP of `target_info`, as the OpenTelemetry Prometheus exporters print it. */
export const TARGET_INFO_HELP = 'Target metadata';

const collidingStreams = new LimitedWarning();

/**
 * Declared families first, in declaration order, each with its zero series when nothing collected
 * carries its labels; then every other collected stream, in collection order. Streams named like a
 * family in `reserved` are left out (with a warning): that family is printed by someone else, and
 * one family must not be printed twice. Streams of one name in several scopes join one family.
 */
export function collectedFamilies(
  resourceMetrics: ResourceMetrics,
  declared: readonly DeclaredFamily[],
  withScopeLabels = false,
  reserved: ReadonlySet<string> = new Set(),
): CollectedFamily[] {
  const families = new Map<string, MutableFamily>();
  const aliases = new Map<string, string>();
  for (const family of declared) {
    families.set(family.name, { name: family.name, type: family.type, help: family.help, series: [], declared: family });
    if (family.streamName !== undefined && family.streamName !== family.name) aliases.set(family.streamName, family.name);
  }
  for (const scopeMetrics of resourceMetrics.scopeMetrics) {
    const scopeLabels: Attributes = withScopeLabels ? { otel_scope_name: scopeMetrics.scope.name, otel_scope_version: scopeMetrics.scope.version ?? '' } : {};
    for (const metric of scopeMetrics.metrics) addMetric(families, aliases, reserved, metric, scopeLabels);
  }
  for (const family of families.values()) addEagerSeries(family);
  return [...families.values()];
}

/** `target_info`: one gauge series valued 1, labelled with the resource's attributes. */
export function targetInfoFamily(resourceMetrics: ResourceMetrics): CollectedFamily {
  const labels = resourceMetrics.resource.attributes;
  const point: DataPoint<number> = { attributes: labels, startTime: [0, 0], endTime: [0, 0], value: 1 };
  return { name: 'target_info', type: 'gauge', help: TARGET_INFO_HELP, series: [{ labels, point, placeholder: true }] };
}

function addMetric(
  families: Map<string, MutableFamily>,
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

/**
 * The declared zero series, unless a collected series carries its labels, alone or with more (the
 * workers' per-tenant series of a family whose `{model_name}` series request labels replaced).
 */
function addEagerSeries(family: MutableFamily): void {
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
