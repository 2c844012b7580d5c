import { diag, type Attributes, type AttributeValue } from '@opentelemetry/api';
import type { DataPoint, Histogram, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { FamilyType } from '../views/family-definition';
import { formatGoFloat } from './go-float';
import { expandSamples, prometheusFamilyName, prometheusLabelName, prometheusType } from './samples';

/** A family the exposition must announce even before it has samples (HELP/TYPE with no series). */
export interface DeclaredFamily {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
  readonly buckets?: readonly number[];
  /** A label set printed with zero values while no sample carries it (eagerly bound series). */
  readonly eagerAttributes?: Attributes;
  /** The SDK stream name when it differs from `name` (the `otel` naming scheme): folded into this family. */
  readonly streamName?: string;
}

export type ExpositionFormat = 'text' | 'openmetrics';

export interface SerializeOptions {
  readonly format?: ExpositionFormat;
  /** Add the `target_info` family built from the resource (off: vLLM has none). */
  readonly withTargetInfo?: boolean;
  /** Add `otel_scope_name` / `otel_scope_version` labels (off: vLLM has none). */
  readonly withScopeLabels?: boolean;
}

export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

interface Series {
  readonly labels: Attributes;
  readonly point: DataPoint<number> | DataPoint<Histogram>;
}

interface Family {
  readonly name: string;
  readonly type: FamilyType;
  help: string;
  readonly series: Series[];
  readonly declared?: DeclaredFamily;
}

/**
 * Renders collected metrics in the byte shape of vLLM's `/metrics` (Python prometheus_client):
 * HELP then TYPE once per family, counters under their `_total` name, labels sorted by name,
 * Go-style numbers, cumulative buckets in increasing `le` ending at `+Inf`, no `_created`.
 * Declared families come first, in declaration order; anything else collected follows.
 * A pure function: the HTTP reader and the tests share it.
 */
export function serializePrometheus(
  resourceMetrics: ResourceMetrics,
  declared: readonly DeclaredFamily[],
  options: SerializeOptions = {},
): string {
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
    for (const metric of scopeMetrics.metrics) addMetric(families, aliases, metric, scopeLabels);
  }

  const lines: string[] = [];
  if (options.withTargetInfo) writeTargetInfo(lines, resourceMetrics, openMetrics);
  for (const family of families.values()) writeFamily(lines, family, openMetrics);
  if (openMetrics) lines.push('# EOF');
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function addMetric(families: Map<string, Family>, aliases: ReadonlyMap<string, string>, metric: MetricData, scopeLabels: Attributes): void {
  const type = prometheusType(metric);
  if (type === undefined) {
    diag.warn(`omni-otel-metrics: ${metric.descriptor.name} is an exponential histogram; the Prometheus text format cannot carry it`);
    return;
  }
  const name = aliases.get(metric.descriptor.name) ?? prometheusFamilyName(metric.descriptor.name, type);
  let family = families.get(name);
  if (family === undefined) {
    family = { name, type, help: metric.descriptor.description, series: [] };
    families.set(name, family);
  } else if (family.type !== type) {
    diag.warn(`omni-otel-metrics: ${name} was collected as ${type} but is a ${family.type}; dropped from the exposition`);
    return;
  }
  if (family.help === '') family.help = metric.descriptor.description;
  for (const point of metric.dataPoints as Array<DataPoint<number> | DataPoint<Histogram>>) {
    family.series.push({ labels: { ...point.attributes, ...scopeLabels }, point });
  }
}



function writeFamily(lines: string[], family: Family, openMetrics: boolean): void {
  // OpenMetrics names a counter family without `_total`; the 0.0.4 text format (and vLLM) with it.
  const metadataName = openMetrics && family.type === 'counter' ? family.name.slice(0, -'_total'.length) : family.name;
  lines.push(`# HELP ${metadataName} ${escapeHelp(family.help, openMetrics)}`);
  lines.push(`# TYPE ${metadataName} ${family.type}`);
  for (const series of family.series) writeSeries(lines, family, series.labels, series.point.value);
  const eager = family.declared?.eagerAttributes;
  if (eager !== undefined && !family.series.some((s) => sameLabels(s.labels, eager))) {
    writeSeries(lines, family, eager, family.type === 'histogram' ? emptyHistogram(family.declared?.buckets ?? []) : 0);
  }
}

function writeSeries(lines: string[], family: Family, labels: Attributes, value: number | Histogram): void {
  expandSamples(family.name, value, (sampleName, sampleValue, le) => {
    lines.push(`${sampleName}${formatLabels(labels, le)} ${formatGoFloat(sampleValue)}`);
  });
}

function emptyHistogram(buckets: readonly number[]): Histogram {
  return {
    buckets: { boundaries: [...buckets], counts: new Array<number>(buckets.length + 1).fill(0) },
    count: 0,
    sum: 0,
  };
}

/** `{a="1",le="0.5",z="2"}`: names sorted, `le` sorted in with the rest, as prometheus_client prints. */
function formatLabels(attributes: Attributes, le?: string): string {
  const pairs: Array<[string, string]> = [];
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value === undefined) continue;
    pairs.push([prometheusLabelName(key), attributeText(value)]);
  }
  if (le !== undefined) pairs.push(['le', le]);
  if (pairs.length === 0) return '';
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `{${pairs.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`;
}

function attributeText(value: AttributeValue): string {
  return Array.isArray(value) ? JSON.stringify(value) : String(value);
}

function sameLabels(a: Attributes, b: Attributes): boolean {
  const keysA = Object.keys(a);
  return keysA.length === Object.keys(b).length && keysA.every((key) => a[key] === b[key]);
}


function escapeHelp(help: string, openMetrics: boolean): string {
  const escaped = help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  return openMetrics ? escaped.replace(/"/g, '\\"') : escaped;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function writeTargetInfo(lines: string[], resourceMetrics: ResourceMetrics, openMetrics: boolean): void {
  const attributes = resourceMetrics.resource.attributes;
  // OpenMetrics names an info family without its `_info` sample suffix.
  const family = openMetrics ? 'target' : 'target_info';
  lines.push(`# HELP ${family} Target metadata`);
  lines.push(`# TYPE ${family} ${openMetrics ? 'info' : 'gauge'}`);
  lines.push(`target_info${formatLabels(attributes)} 1${openMetrics ? '' : '.0'}`);
}
