import assert from 'node:assert/strict';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import { GEN_AI_METER_NAME, OmniGenAiMetrics } from '../../instrumentation/recorders/gen-ai-metrics';
import { GEN_AI_DURATION_BUCKETS, GEN_AI_METRICS, GEN_AI_TOKEN_BUCKETS } from '../../views/catalog/gen-ai-families';
import { OmniStatLogger, type IterationStatsSink } from '../../instrumentation/recorders/stat-logger';
import { IterationStats } from '../../instrumentation/stats/iteration-stats';
import { finished } from '../otlp/support/workload';
import { register, stageLabels, assertSample } from './harness';

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

describe('recorders: OmniGenAiMetrics (GenAI semantic conventions)', () => {
  it('records TTFT, duration, TPOT and token usage with the semconv attributes, units and buckets', async () => {
    const reader = new TestReader();
    const provider = new MeterProvider({ readers: [reader] });
    const genAi = new OmniGenAiMetrics(provider.getMeter(GEN_AI_METER_NAME), 'm');
    const stats = new IterationStats({ iterationTimestamp: 1 });
    stats.timeToFirstTokensIter.push(0.02);
    stats.finishedRequests.push(
      finished({ finishReason: 'stop', e2eLatency: 1, meanTimePerOutputToken: 0.05, numPromptTokens: 10, numGenerationTokens: 3 }),
      finished({ finishReason: 'error', e2eLatency: 0.5, meanTimePerOutputToken: 0.5, numPromptTokens: 4, numGenerationTokens: 0 }),
    );
    genAi.recordIteration({ stage: '2', replica: '0' }, stats);
    const { resourceMetrics } = await reader.collect();
    await provider.shutdown();

    const metrics = new Map(resourceMetrics.scopeMetrics.flatMap((sm) => sm.metrics).map((m) => [m.descriptor.name, m as HistogramMetricData]));
    const base = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'vllm', 'gen_ai.request.model': 'm', stage: '2', replica: '0' };
    const points = (name: string) => {
      const metric = metrics.get(name);
      assert.ok(metric && metric.dataPointType === DataPointType.HISTOGRAM, name);
      return metric.dataPoints.map((p) => ({ attributes: p.attributes, count: p.value.count, sum: p.value.sum, bounds: p.value.buckets.boundaries }));
    };
    assert.equal(metrics.get(GEN_AI_METRICS.tokenUsage.name)?.descriptor.unit, '{token}');
    assert.equal(metrics.get(GEN_AI_METRICS.requestDuration.name)?.descriptor.unit, 's');
    assert.deepEqual(points(GEN_AI_METRICS.timeToFirstToken.name), [
      { attributes: base, count: 1, sum: 0.02, bounds: [...GEN_AI_METRICS.timeToFirstToken.buckets] },
    ]);
    assert.deepEqual(points(GEN_AI_METRICS.requestDuration.name), [
      { attributes: base, count: 1, sum: 1, bounds: [...GEN_AI_DURATION_BUCKETS] },
      { attributes: { ...base, 'error.type': 'error' }, count: 1, sum: 0.5, bounds: [...GEN_AI_DURATION_BUCKETS] },
    ]);
    // Only successful responses have a time per output token.
    assert.deepEqual(points(GEN_AI_METRICS.timePerOutputToken.name), [
      { attributes: base, count: 1, sum: 0.05, bounds: [...GEN_AI_METRICS.timePerOutputToken.buckets] },
    ]);
    assert.deepEqual(points(GEN_AI_METRICS.tokenUsage.name), [
      { attributes: { ...base, 'gen_ai.token.type': 'input' }, count: 2, sum: 14, bounds: [...GEN_AI_TOKEN_BUCKETS] },
      { attributes: { ...base, 'gen_ai.token.type': 'output' }, count: 2, sum: 3, bounds: [...GEN_AI_TOKEN_BUCKETS] },
    ]);
    assert.equal(GEN_AI_DURATION_BUCKETS.at(-1), 81.92);
    assert.equal(GEN_AI_TOKEN_BUCKETS.at(-1), 67108864);
  });

  it('a failing sink never throws into the host; the vLLM families of that poll are already recorded', async () => {
    const handle = await register({ stagePools: [1] });
    const failing: IterationStatsSink = {
      recordIteration: () => {
        throw new Error('sink failed');
      },
    };
    const logger = new OmniStatLogger(handle.store, { modelName: 'm', stageReplicaMap: handle.stageReplicaMap, logIntervalSeconds: 0, genAi: failing });
    const warnings: string[] = [];
    diag.setLogger({ error: () => {}, warn: (m) => warnings.push(m), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
    try {
      const stats = new IterationStats({ iterationTimestamp: 1 });
      stats.numGenerationTokens = 4;
      assert.doesNotThrow(() => logger.record(null, stats, 0));
    } finally {
      diag.disable();
    }
    assertSample(await handle.metricsText(), 'vllm:generation_tokens_total', stageLabels(0, 0), 4);
    assert.equal(warnings.length, 1);
    await handle.shutdown();
  });
});
