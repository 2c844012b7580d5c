import { OmniMetricProducer } from '../../../views/store/metric-producer';
import { MetricReader, type AggregationTemporalitySelector } from '@opentelemetry/sdk-metrics';
import type { OmniMetricsHandle } from '../../../register';
import { IterationStats } from '../../../instrumentation/stats/iteration-stats';
import { createPrefillStats, createSchedulerStats, PrefixCacheStats, createFinishedRequestStats } from '../../../instrumentation/stats/types';

/** A pull reader for the ground truth: the SDK's own aggregation of the same records. */
export class GroundTruthReader extends MetricReader {
  /** Its view of the package's series store: list it in `registerOmniMetrics({ metricProducers })`. */
  readonly producer: OmniMetricProducer;

  constructor(aggregationTemporalitySelector?: AggregationTemporalitySelector) {
    const producer = new OmniMetricProducer({ aggregationTemporalitySelector });
    super({ aggregationTemporalitySelector, metricProducers: [producer] });
    this.producer = producer;
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** Pools [1, 2]: engine 2 is stage 1, replica 1. */
export const STAGE_POOLS = [1, 2];
export const ENGINE = 2;
export const ENGINE_LABELS = { model_name: 'm', stage: '1', replica: '1' };
export const MODEL = { model_name: 'm' };

export const finished = createFinishedRequestStats;

function prefixCache(queries: number, hits: number): PrefixCacheStats {
  const stats = new PrefixCacheStats();
  stats.requests = 1;
  stats.queries = queries;
  stats.hits = hits;
  return stats;
}

/** The first cycle's values, which the tests check by hand. */
export const CYCLE1 = {
  pipelineE2e: [0.5, 1.5, 3],
  transferBytes: 4096,
  running: 3,
  kvCacheUsage: 0.25,
  promptTokens: 20,
  generationTokens: 5,
  ttft: [0.05, 0.3],
  request: finished({
    finishReason: 'stop',
    e2eLatency: 2.5,
    queuedTime: 0.5,
    prefillTime: 0.5,
    inferenceTime: 1.5,
    decodeTime: 1,
    meanTimePerOutputToken: 0.25,
    numPromptTokens: 20,
    numGenerationTokens: 5,
  }),
};

/** The second cycle: one more pipeline request, and one aborted upstream request. */
export const CYCLE2 = {
  pipelineE2e: [3],
  generationTokens: 2,
  request: finished({ finishReason: 'abort', e2eLatency: 0.2, meanTimePerOutputToken: 0.1, numPromptTokens: 7, numGenerationTokens: 2 }),
};

/** pipeline.requestSucceeded ×3, a transfer observation, and one stat-logger poll with known stats. */
export function recordCycle1(handle: OmniMetricsHandle): void {
  for (const seconds of CYCLE1.pipelineE2e) handle.pipeline.requestSucceeded(seconds);
  handle.transfer.observeSize(0, 0, 1, 1, CYCLE1.transferBytes);
  const scheduler = createSchedulerStats({
    numRunningReqs: CYCLE1.running,
    numWaitingReqs: 4,
    kvCacheUsage: CYCLE1.kvCacheUsage,
    prefixCacheStats: prefixCache(100, 40),
  });
  const iteration = new IterationStats({ iterationTimestamp: 1000 });
  iteration.promptTokenStats.updateFromOutput(createPrefillStats({ numPromptTokens: CYCLE1.promptTokens }));
  iteration.numGenerationTokens = CYCLE1.generationTokens;
  iteration.timeToFirstTokensIter.push(...CYCLE1.ttft);
  iteration.finishedRequests.push(CYCLE1.request);
  handle.statLogger?.record(scheduler, iteration, ENGINE);
}

export function recordCycle2(handle: OmniMetricsHandle): void {
  for (const seconds of CYCLE2.pipelineE2e) handle.pipeline.requestSucceeded(seconds);
  const iteration = new IterationStats({ iterationTimestamp: 1001 });
  iteration.numGenerationTokens = CYCLE2.generationTokens;
  iteration.finishedRequests.push(CYCLE2.request);
  handle.statLogger?.record(null, iteration, ENGINE);
}

/** Per-bucket (not cumulative) counts, as OTLP carries them: bucket i holds (bounds[i-1], bounds[i]]. */
export function bucketCounts(bounds: readonly number[], values: readonly number[]): number[] {
  const counts = new Array<number>(bounds.length + 1).fill(0);
  for (const value of values) {
    const index = bounds.findIndex((bound) => value <= bound);
    counts[index === -1 ? bounds.length : index] += 1;
  }
  return counts;
}

/** The sum the SDK keeps: values added in recording order from 0. */
export function sequentialSum(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum;
}
