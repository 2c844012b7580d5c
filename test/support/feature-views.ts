import type { DataPoint, ExponentialHistogram, Histogram, MetricData } from '@opentelemetry/sdk-metrics';
import { decodeMetricFamilies, type DecodedExemplar } from './prometheus-protobuf';
import { parseSamples } from './exposition';

/**
 * What one reader received of the feature scenario, in one shape for every format: the tenant
 * series of the success counter, the native-histogram family (queue wait) as native buckets or as
 * classic ones, the trace ids of the exemplars on each family that carries them (a latency
 * histogram, the native-histogram family, the success counter), the realtime VAD histogram and the
 * goodput counters.
 */
export interface FeatureView {
  /** `vllm:omni_requests_success_total` per tenant (summed over finish reasons). */
  readonly tenants: Readonly<Record<string, number>>;
  /** `vllm:omni_request_queue_wait_s`: count over every series, and its native buckets (Prometheus numbering) or none. */
  readonly queueWait: { readonly count: number; readonly native?: NativeView };
  /**
   * Per family whose exemplars were read, their trace ids, sorted, each once. In the protobuf the
   * native-histogram family counts only when its native histogram carries them too (the
   * `exemplars` Prometheus reads for one), besides its buckets.
   */
  readonly exemplars: Readonly<Record<string, readonly string[]>>;
  /** `vllm:omni_realtime_vad_inference_latency_s` count and sum. */
  readonly vad: { readonly count: number; readonly sum: number };
  /** Goodput's non-zero series: `good <tenant>` from `vllm:omni_requests_good_total`, `missed <objective> <tenant>` from `vllm:omni_slo_misses_total`. */
  readonly goodput: Readonly<Record<string, number>>;
}

/** Native buckets summed over the family's series: schema and bucket index → count (Prometheus numbering). */
export interface NativeView {
  readonly schema: number;
  readonly buckets: Readonly<Record<string, number>>;
}

const SUCCESS = 'vllm:omni_requests_success_total';
const QUEUE = 'vllm:omni_request_queue_wait_s';
const E2E = 'vllm:omni_e2e_request_latency_s';
const VAD = 'vllm:omni_realtime_vad_inference_latency_s';
const GOOD = 'vllm:omni_requests_good_total';
const MISSES = 'vllm:omni_slo_misses_total';

/** Adds one goodput sample to `goodput` when `family` is one of goodput's and the value is not zero. */
function addGoodput(goodput: Record<string, number>, family: string, label: (name: string) => string | undefined, value: number): void {
  if (value === 0) return;
  if (family === GOOD) add(goodput, `good ${label('tenant')}`, value);
  if (family === MISSES) add(goodput, `missed ${label('objective')} ${label('tenant')}`, value);
}

function add(record: Record<string, number>, key: string, value: number): void {
  record[key] = (record[key] ?? 0) + value;
}

function sortedUnique(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort();
}

/** The families with exemplars, each with its trace ids. */
function exemplarsByFamily(entries: ReadonlyArray<readonly [family: string, traceIds: readonly string[]]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [family, ids] of entries) if (ids.length > 0) out[family] = sortedUnique(ids);
  return out;
}

/** From a text exposition (0.0.4 or OpenMetrics); `rename` maps a family name to how that exposition spells it. */
export function viewOfText(text: string, rename: (name: string) => string = (name) => name): FeatureView {
  const tenants: Record<string, number> = {};
  let queueCount = 0;
  let vadCount = 0;
  let vadSum = 0;
  const goodput: Record<string, number> = {};
  // Exemplars are read below; the sample parser takes the lines without them.
  for (const sample of parseSamples(text.replace(/ # \{[^}]*\}[^\n]*/g, ''))) {
    for (const family of [GOOD, MISSES]) if (sample.name === rename(family)) addGoodput(goodput, family, (name) => sample.labels[name], sample.value);
    if (sample.name === rename(SUCCESS) && sample.labels.tenant !== undefined) add(tenants, sample.labels.tenant, sample.value);
    if (sample.name === `${rename(QUEUE)}_count`) queueCount += sample.value;
    if (sample.name === `${rename(VAD)}_count`) vadCount += sample.value;
    if (sample.name === `${rename(VAD)}_sum`) vadSum += sample.value;
  }
  const lines = text.split('\n');
  const traceIds = (sample: string): string[] =>
    lines.filter((line) => line.startsWith(`${sample}{`)).flatMap((line) => [...(/trace_id="([0-9a-f]{32})"/.exec(line)?.slice(1) ?? [])]);
  const exemplars = exemplarsByFamily([
    [E2E, traceIds(`${rename(E2E)}_bucket`)],
    [QUEUE, traceIds(`${rename(QUEUE)}_bucket`)],
    [SUCCESS, traceIds(rename(SUCCESS))],
  ]);
  return { tenants, queueWait: { count: queueCount }, exemplars, vad: { count: vadCount, sum: vadSum }, goodput };
}

function traceIdOf(exemplar: DecodedExemplar | undefined): string[] {
  const id = exemplar?.label.find((label) => label.name === 'trace_id')?.value;
  return id === undefined ? [] : [id];
}

/** From a Prometheus protobuf exposition body. */
export function viewOfProtobuf(body: Uint8Array): FeatureView {
  const families = decodeMetricFamilies(body);
  const family = (name: string) => families.find((one) => one.name === name)?.metric ?? [];
  const tenants: Record<string, number> = {};
  for (const metric of family(SUCCESS)) {
    const tenant = metric.label.find((label) => label.name === 'tenant')?.value;
    if (tenant !== undefined) add(tenants, tenant, metric.counter?.value ?? 0);
  }
  let count = 0;
  let native: { schema: number; buckets: Record<string, number> } | undefined;
  for (const metric of family(QUEUE)) {
    const histogram = metric.histogram;
    count += histogram?.sampleCount ?? 0;
    if (histogram?.schema === undefined && histogram?.positiveSpan.length === 0) continue;
    native ??= { schema: histogram?.schema ?? 0, buckets: {} };
    let index = 0;
    let running = 0;
    let delta = 0;
    for (const span of histogram?.positiveSpan ?? []) {
      index += span.offset ?? 0;
      for (let i = 0; i < (span.length ?? 0); i++) {
        running += histogram?.positiveDelta[delta++] ?? 0;
        if (running !== 0) add(native.buckets, String(index), running);
        index++;
      }
    }
  }
  const bucketTraceIds = (name: string): string[] =>
    family(name).flatMap((metric) => (metric.histogram?.bucket ?? []).flatMap((bucket) => traceIdOf(bucket.exemplar)));
  const nativeTraceIds = family(QUEUE).flatMap((metric) => (metric.histogram?.exemplars ?? []).flatMap(traceIdOf));
  const queueTraceIds = bucketTraceIds(QUEUE).filter((id) => nativeTraceIds.includes(id));
  const exemplars = exemplarsByFamily([
    [E2E, bucketTraceIds(E2E)],
    [QUEUE, queueTraceIds],
    [SUCCESS, family(SUCCESS).flatMap((metric) => traceIdOf(metric.counter?.exemplar))],
  ]);
  const vad = family(VAD)[0]?.histogram;
  const goodput: Record<string, number> = {};
  for (const name of [GOOD, MISSES]) {
    for (const metric of family(name)) {
      addGoodput(goodput, name, (label) => metric.label.find((one) => one.name === label)?.value, metric.counter?.value ?? 0);
    }
  }
  return {
    tenants,
    queueWait: native === undefined ? { count } : { count, native },
    exemplars,
    vad: { count: vad?.sampleCount ?? 0, sum: vad?.sampleSum ?? 0 },
    goodput,
  };
}

/** From the OpenTelemetry SDK's own data (a producer's collection, an in-memory exporter's). */
export function viewOfMetricData(metrics: readonly MetricData[]): FeatureView {
  const named = (name: string) => metrics.find((metric) => metric.descriptor.name === name);
  const tenants: Record<string, number> = {};
  for (const point of (named(SUCCESS)?.dataPoints ?? []) as Array<DataPoint<number>>) {
    const tenant = point.attributes.tenant;
    if (typeof tenant === 'string') add(tenants, tenant, point.value);
  }
  let count = 0;
  let native: { schema: number; buckets: Record<string, number> } | undefined;
  for (const point of (named(QUEUE)?.dataPoints ?? []) as Array<DataPoint<Histogram | ExponentialHistogram>>) {
    count += point.value.count;
    if (!('scale' in point.value)) continue;
    const value = point.value;
    native ??= { schema: value.scale, buckets: {} };
    // OpenTelemetry's bucket i is Prometheus's i + 1.
    value.positive.bucketCounts.forEach((bucketCount, i) => {
      if (bucketCount !== 0) add(native!.buckets, String(value.positive.offset + i + 1), bucketCount);
    });
  }
  const vad = named(VAD)?.dataPoints[0] as DataPoint<Histogram> | undefined;
  const goodput: Record<string, number> = {};
  for (const name of [GOOD, MISSES]) {
    for (const point of (named(name)?.dataPoints ?? []) as Array<DataPoint<number>>) {
      addGoodput(goodput, name, (label) => point.attributes[label] as string | undefined, point.value);
    }
  }
  return {
    tenants,
    queueWait: native === undefined ? { count } : { count, native },
    // The SDK's data points have no exemplar field.
    exemplars: {},
    vad: { count: vad?.value.count ?? 0, sum: vad?.value.sum ?? 0 },
    goodput,
  };
}

type Wire = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** From an OTLP export request as the test receiver decoded it (protobufjs objects, from JSON or protobuf). */
export function viewOfOtlp(request: Wire): FeatureView {
  const metrics = ((request.resourceMetrics ?? []) as Wire[]).flatMap((resource) =>
    ((resource.scopeMetrics ?? []) as Wire[]).flatMap((scope) => (scope.metrics ?? []) as Wire[]),
  );
  const named = (name: string) => metrics.find((metric) => metric.name === name);
  const attribute = (point: Wire, key: string): string | undefined =>
    ((point.attributes ?? []) as Wire[]).find((one) => one.key === key)?.value?.stringValue as string | undefined;
  const tenants: Record<string, number> = {};
  for (const point of (named(SUCCESS)?.sum?.dataPoints ?? []) as Wire[]) {
    const tenant = attribute(point, 'tenant');
    if (tenant !== undefined) add(tenants, tenant, Number(point.asDouble ?? point.asInt ?? 0));
  }
  const queue = named(QUEUE);
  let count = 0;
  let native: { schema: number; buckets: Record<string, number> } | undefined;
  for (const point of (queue?.histogram?.dataPoints ?? []) as Wire[]) count += Number(point.count ?? 0);
  for (const point of (queue?.exponentialHistogram?.dataPoints ?? []) as Wire[]) {
    count += Number(point.count ?? 0);
    native ??= { schema: Number(point.scale ?? 0), buckets: {} };
    const offset = Number(point.positive?.offset ?? 0);
    ((point.positive?.bucketCounts ?? []) as Array<string | number>).forEach((bucketCount, i) => {
      if (Number(bucketCount) !== 0) add(native!.buckets, String(offset + i + 1), Number(bucketCount));
    });
  }
  const vad = (named(VAD)?.histogram?.dataPoints ?? [])[0] as Wire | undefined;
  const traceIds = (points: Wire[]): string[] =>
    points.flatMap((point) => ((point.exemplars ?? []) as Wire[]).map((exemplar) => Buffer.from(exemplar.traceId as Uint8Array).toString('hex')));
  const exemplars = exemplarsByFamily([
    [E2E, traceIds((named(E2E)?.histogram?.dataPoints ?? []) as Wire[])],
    [QUEUE, traceIds([...((queue?.histogram?.dataPoints ?? []) as Wire[]), ...((queue?.exponentialHistogram?.dataPoints ?? []) as Wire[])])],
    [SUCCESS, traceIds((named(SUCCESS)?.sum?.dataPoints ?? []) as Wire[])],
  ]);
  const goodput: Record<string, number> = {};
  for (const name of [GOOD, MISSES]) {
    for (const point of (named(name)?.sum?.dataPoints ?? []) as Wire[]) {
      addGoodput(goodput, name, (label) => attribute(point, label), Number(point.asDouble ?? point.asInt ?? 0));
    }
  }
  return {
    tenants,
    queueWait: native === undefined ? { count } : { count, native },
    exemplars,
    vad: { count: Number(vad?.count ?? 0), sum: Number(vad?.sum ?? 0) },
    goodput,
  };
}

/** From `LogMetricExporter` statsd lines. */
export function viewOfLogLines(lines: readonly string[]): FeatureView {
  const text = lines
    .map((line) => /^([^.]+)\.[A-Za-z_]+:([^|]+)\|#([^|]*)\|/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, name, value, dims]) => {
      const labels = (dims ?? '')
        .split(',')
        .filter((pair) => pair !== '')
        .map((pair) => {
          const [key, ...rest] = pair.split(':');
          return `${key}="${rest.join(':')}"`;
        });
      return `${name}{${labels.join(',')}} ${value}`;
    })
    .join('\n');
  return viewOfText(text);
}
