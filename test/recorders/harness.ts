import assert from 'node:assert/strict';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { histogramOf, parseGoFloat, sampleValue, seriesOf, type HistogramSamples, type Labels } from '../support/exposition';

/** Registers a pipeline the way every recorder test does: no server, no periodic log lines. */
export function register(options: Partial<OmniMetricsOptions> & Pick<OmniMetricsOptions, 'stagePools'>): Promise<OmniMetricsHandle> {
  return registerOmniMetrics({ modelName: 'm', logStats: true, prometheus: false, logIntervalSeconds: 0, processMetrics: false, selfCheck: false, ...options });
}

/** `{model_name: "m", stage, replica}` with the values stringified, as the recorders label them. */
export function stageLabels(stage: string | number, replica: string | number, extra: Labels = {}): Labels {
  return { model_name: 'm', stage: String(stage), replica: String(replica), ...extra };
}

/** The sum the SDK keeps: the values added in recording order, starting from 0. */
export function sequentialSum(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum;
}

/** Cumulative `le` counts of `values` over `bounds` (upper bounds inclusive), then `+Inf`. */
export function cumulativeCounts(bounds: readonly number[], values: readonly number[]): number[] {
  return [...bounds.map((bound) => values.filter((v) => v <= bound).length), values.length];
}

/**
 * Asserts one histogram series exactly: one bucket per bound (`le` parsed back equals the bound) plus `+Inf`,
 * every cumulative count, `_count`, and `_sum` equal to the values summed in recording order.
 */
export function assertHistogram(text: string, family: string, labels: Labels, bounds: readonly number[], values: readonly number[]): HistogramSamples {
  const histogram = histogramOf(text, family, labels);
  assert.ok(histogram, `${family}${JSON.stringify(labels)} is exposed`);
  assert.deepEqual(
    histogram.buckets.map(([le]) => parseGoFloat(le)),
    [...bounds, Infinity],
    `${family}: one bucket per bound, then +Inf`,
  );
  assert.equal(histogram.buckets.at(-1)?.[0], '+Inf');
  assert.deepEqual(
    histogram.buckets.map(([, count]) => count),
    cumulativeCounts(bounds, values),
    `${family}${JSON.stringify(labels)}: cumulative bucket counts for [${values.join(', ')}]`,
  );
  assert.equal(histogram.count, values.length, `${family} _count`);
  assert.equal(histogram.sum, sequentialSum(values), `${family} _sum`);
  return histogram;
}

/** The cumulative count of the bucket printed as `le`. */
export function bucketCount(histogram: HistogramSamples, le: string): number | undefined {
  return histogram.buckets.find(([bound]) => bound === le)?.[1];
}

/** Asserts the value of one counter / gauge sample. */
export function assertSample(text: string, sampleName: string, labels: Labels, expected: number): void {
  assert.equal(sampleValue(text, sampleName, labels), expected, `${sampleName}${JSON.stringify(labels)}`);
}

/** Asserts there is no sample of any of these names (bucket/count/sum suffixes included for histograms). */
export function assertNoSeries(text: string, ...families: string[]): void {
  for (const family of families) {
    for (const name of [family, `${family}_bucket`, `${family}_count`, `${family}_sum`]) {
      assert.deepEqual(seriesOf(text, name), [], `no ${name} series`);
    }
  }
}

/** Labels of one transfer hop, as the recorders bind them. */
export function edge(fromStage: number, fromReplica: number, toStage: number, toReplica: number): Record<string, string> {
  return {
    model_name: 'm',
    from_stage: String(fromStage),
    from_replica: String(fromReplica),
    to_stage: String(toStage),
    to_replica: String(toReplica),
  };
}
