import type { AttributeValue } from '@opentelemetry/api';
import { WarnOnce } from '../../views/common/diag-warnings';
import type { DataPoint, Histogram, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { prometheusLabelName } from '../../views/catalog/names';
import { expandSamples, prometheusFamilyName, prometheusType } from '../samples';
import type { KnownFamily } from './known-families';
import { unitWord } from './units';

/** `statsd`: TorchServe's metric log line; `json`: one JSON object per line. */
export type LogMetricFormat = 'statsd' | 'json';

export interface LogLineOptions {
  readonly format: LogMetricFormat;
  readonly hostname: string;
  readonly families: ReadonlyMap<string, KnownFamily>;
  /** Warns once per stream the log cannot carry (exponential histograms); a fresh one per call when absent. */
  readonly warned?: WarnOnce;
}

/**
 * One line per Prometheus sample, in exposition order: the sample name exactly as `/metrics`
 * prints it, its labels sorted by name (`le` included), and the end time of its data point in
 * whole epoch seconds.
 *
 * `statsd`: `Name.Unit:value|#k:v,k:v|#hostname:H,timestamp:T`. The name never contains a `.`,
 * so everything before the first `.` is the name. Label values and the hostname escape `\`, `,`,
 * `|` and newlines with a backslash. `_bucket` and `_count` samples count observations
 * (`Count`); `_sum`, counters and gauges carry the family's unit.
 *
 * `json`: `{"name","unit","value","labels":{...},"hostname","timestamp"}`; `NaN` and infinities,
 * which JSON cannot carry, are the strings `"NaN"`, `"+Inf"`, `"-Inf"`.
 */
export function formatLogLines(resourceMetrics: ResourceMetrics, options: LogLineOptions): string[] {
  const lines: string[] = [];
  const json = options.format === 'json';
  const host = json ? options.hostname : escapeDim(options.hostname);
  for (const scopeMetrics of resourceMetrics.scopeMetrics) {
    for (const metric of scopeMetrics.metrics) {
      const type = prometheusType(metric);
      if (type === undefined) {
        (options.warned ?? new WarnOnce()).warn(
          metric.descriptor.name,
          `${metric.descriptor.name} is an exponential histogram, which the metric log cannot carry: give the reader a producer with exponentialHistograms: false (its classic buckets)`,
        );
        continue;
      }
      const known = options.families.get(metric.descriptor.name);
      const name = known?.name ?? prometheusFamilyName(metric.descriptor.name, type);
      const unit = unitWord(metric.descriptor.unit !== '' ? metric.descriptor.unit : (known?.unit ?? ''));
      for (const point of metric.dataPoints as Array<DataPoint<number> | DataPoint<Histogram>>) {
        const labels = sortedLabels(point.attributes);
        const timestamp = point.endTime[0];
        expandSamples(name, point.value, (sampleName, value, le, suffix) => {
          const sampleUnit = suffix === '_bucket' || suffix === '_count' ? 'Count' : unit;
          const pairs = le === undefined ? labels : insertSorted(labels, ['le', le]);
          lines.push(
            json
              ? jsonLine(sampleName, sampleUnit, value, pairs, host, timestamp)
              : `${sampleName}.${sampleUnit}:${statsdValue(value)}|#${statsdDims(pairs)}|#hostname:${host},timestamp:${timestamp}`,
          );
        });
      }
    }
  }
  return lines;
}

type Pair = readonly [name: string, value: string];

function sortedLabels(attributes: Readonly<Record<string, AttributeValue | undefined>>): Pair[] {
  const pairs: Pair[] = [];
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    if (value === undefined) continue;
    pairs.push([prometheusLabelName(key), Array.isArray(value) ? JSON.stringify(value) : String(value)]);
  }
  return pairs.sort(byName);
}

function insertSorted(pairs: readonly Pair[], pair: Pair): Pair[] {
  return [...pairs, pair].sort(byName);
}

function byName(a: Pair, b: Pair): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

function statsdDims(pairs: readonly Pair[]): string {
  return pairs.map(([name, value]) => `${name}:${escapeDim(value)}`).join(',');
}

function jsonLine(name: string, unit: string, value: number, pairs: readonly Pair[], hostname: string, timestamp: number): string {
  return JSON.stringify({
    name,
    unit,
    value: Number.isFinite(value) ? value : nonFinite(value),
    labels: Object.fromEntries(pairs),
    hostname,
    timestamp,
  });
}

/** Plain JavaScript numbers, as TorchServe prints them (`1`, `581.7`); `NaN`, `+Inf`, `-Inf`. */
function statsdValue(value: number): string {
  return Number.isFinite(value) ? String(value) : nonFinite(value);
}

function nonFinite(value: number): string {
  return Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf';
}

function escapeDim(value: string): string {
  return value.replace(/[\\,|\n\r]/g, (ch) => (ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : `\\${ch}`));
}
