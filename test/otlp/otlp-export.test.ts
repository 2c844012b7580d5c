import assert from 'node:assert/strict';
import { DeltaTemporalitySelector } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLP_PROTOCOLS, type OtlpProtocol, type TemporalityPreference } from '../../exporters/otlp/types';
import { GEN_AI_METER_NAME } from '../../instrumentation/recorders/gen-ai-metrics';
import { GEN_AI_METRICS } from '../../views/catalog/gen-ai-families';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import type { NamingScheme } from '../../views/views';
import { OMNI_METER_NAME } from '../../views/views';
import { fromOtlp, fromSdk, metricNamed, pointWith, withoutTimes, type ExportShape, type MetricShape } from './support/normalize';
import { startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver';
import {
  bucketCounts,
  CYCLE1,
  CYCLE2,
  ENGINE_LABELS,
  GroundTruthReader,
  MODEL,
  recordCycle1,
  recordCycle2,
  sequentialSum,
  STAGE_POOLS,
} from './support/workload';

const GEN_AI_LABELS = {
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'vllm',
  'gen_ai.request.model': 'm',
  stage: '1',
  replica: '1',
};
const GEN_AI_BY_NAME = new Map(Object.values(GEN_AI_METRICS).map((metric) => [metric.name, metric] as const));

interface Run {
  readonly handle: OmniMetricsHandle;
  readonly receiver: OtlpReceiver;
  readonly groundTruth: GroundTruthReader;
}

async function startRun(protocol: OtlpProtocol, temporality: TemporalityPreference, naming: NamingScheme = 'vllm'): Promise<Run> {
  const receiver = await startOtlpReceiver(protocol);
  const groundTruth = new GroundTruthReader(temporality === 'delta' ? DeltaTemporalitySelector : undefined);
  try {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: STAGE_POOLS,
      logStats: true,
      logIntervalSeconds: 0,
      genAiMetrics: true,
      processMetrics: false,
      naming,
      serviceName: 'omni-otlp-test',
      exporters: ['otlp'],
      otlp: { protocol, endpoint: receiver.endpoint, temporality, compression: 'gzip', headers: { 'x-omni-test': protocol } },
      readers: [groundTruth],
      metricProducers: [groundTruth.producer],
      selfCheck: false,
    });
    return { handle, receiver, groundTruth };
  } catch (error) {
    await receiver.close();
    throw error;
  }
}

async function stopRun(run: Run): Promise<void> {
  try {
    await run.handle.shutdown();
  } finally {
    await run.receiver.close();
  }
  assert.deepEqual(run.receiver.errors, [], 'every request decodes with the official OTLP definitions');
}

/** Flushes, and returns the new request and the ground truth collected right after it. */
async function exportCycle(run: Run, index: number): Promise<{ wire: ExportShape; truth: ExportShape }> {
  await run.handle.forceFlush();
  const requests = await run.receiver.waitForRequests(index + 1);
  const request = requests[index];
  assert.ok(request);
  assert.equal(request.headers['x-omni-test'], run.receiver.protocol, 'configured headers reach the receiver');
  const { resourceMetrics, errors } = await run.groundTruth.collect();
  assert.deepEqual(errors, []);
  return { wire: fromOtlp(request.body), truth: fromSdk(resourceMetrics) };
}

/** Every metric in an export: known name, scope, description and unit; sane histogram shape. */
function assertWellFormed(run: Run, wire: ExportShape, naming: NamingScheme, temporality: 'delta' | 'cumulative'): void {
  assert.equal(wire.resource['service.name'], 'omni-otlp-test');
  assert.ok(wire.metrics.length > 0);
  for (const metric of wire.metrics) {
    const genAi = GEN_AI_BY_NAME.get(metric.name);
    if (genAi) {
      assert.equal(metric.scope, GEN_AI_METER_NAME);
      assert.equal(metric.unit, genAi.unit);
      assert.equal(metric.description, genAi.description);
      assert.equal(metric.kind, 'histogram');
      for (const point of metric.points) assert.deepEqual(point.explicitBounds, genAi.buckets, `${metric.name} bounds`);
    } else {
      const family = run.handle.catalog.families.find((f) => (naming === 'vllm' ? f.name : f.otelName) === metric.name);
      assert.ok(family, `${metric.name} is a catalog family under the ${naming} naming`);
      assert.equal(metric.scope, OMNI_METER_NAME);
      assert.equal(metric.unit, naming === 'vllm' ? '' : family.unit, `${metric.name} unit`);
      assert.equal(metric.description, family.help);
      assert.equal(metric.kind, family.type === 'counter' ? 'sum' : family.type);
      if (family.type === 'counter') assert.equal(metric.monotonic, true);
      if (family.type === 'histogram') {
        for (const point of metric.points) assert.deepEqual(point.explicitBounds, family.buckets, `${metric.name} bounds`);
      }
    }
    if (metric.kind !== 'gauge') assert.equal(metric.temporality, temporality, `${metric.name} temporality`);
    for (const point of metric.points) {
      assert.ok(BigInt(point.timeUnixNano) > 0n && BigInt(point.startTimeUnixNano) <= BigInt(point.timeUnixNano), `${metric.name} times`);
      if (metric.kind === 'histogram') {
        assert.equal(point.bucketCounts?.length, (point.explicitBounds?.length ?? 0) + 1);
        assert.equal(sequentialSum(point.bucketCounts ?? []), point.count, `${metric.name}: buckets add up to count`);
      }
    }
  }
}

function histogramOf(metric: MetricShape | undefined, attributes: Record<string, string>) {
  const point = pointWith(metric, attributes);
  assert.ok(point, `${metric?.name ?? 'metric'} has a point for ${JSON.stringify(attributes)}`);
  return point;
}

/**
 * `exportedBefore`: for a delta point of the series store, the values earlier cycles exported.
 * Its sum is then the difference of two cumulative sums, exactly as a cumulative-to-delta
 * conversion computes it (`(2.5 + 0.2) - 2.5` is 0.20000000000000018, not 0.2).
 */
function assertHistogram(
  wire: ExportShape,
  name: string,
  attributes: Record<string, string>,
  bounds: readonly number[],
  values: readonly number[],
  exportedBefore: readonly number[] = [],
): void {
  const point = histogramOf(metricNamed(wire, name), attributes);
  assert.deepEqual(point.explicitBounds, bounds, `${name} bounds`);
  assert.deepEqual(point.bucketCounts, bucketCounts(bounds, values), `${name} bucket counts`);
  assert.equal(point.count, values.length, `${name} count`);
  const sum = exportedBefore.length === 0 ? sequentialSum(values) : sequentialSum([...exportedBefore, ...values]) - sequentialSum(exportedBefore);
  assert.equal(point.sum, sum, `${name} sum`);
}

function assertValue(wire: ExportShape, name: string, attributes: Record<string, string>, value: number): void {
  assert.equal(pointWith(metricNamed(wire, name), attributes)?.value, value, `${name}${JSON.stringify(attributes)}`);
}

describe('OTLP export: every protocol, decoded with the official opentelemetry-proto definitions', function () {
  this.timeout(15_000);

  for (const protocol of OTLP_PROTOCOLS) {
    describe(protocol, () => {
      it('cumulative: every data point equals the SDK ground truth and the known workload', async () => {
        const run = await startRun(protocol, 'cumulative');
        try {
          assert.equal(run.handle.prometheusServer, undefined, 'exporters without prometheus: no server');
          recordCycle1(run.handle);
          const { wire, truth } = await exportCycle(run, 0);

          assert.deepEqual(withoutTimes(wire), withoutTimes(truth), 'the wire carries exactly what the SDK aggregated');
          assertWellFormed(run, wire, 'vllm', 'cumulative');

          const family = (name: string) => run.handle.catalog.byName(name)?.buckets ?? [];
          assertValue(wire, 'vllm:omni_requests_success_total', { ...MODEL, finished_reason: 'stop' }, 3);
          assertHistogram(wire, 'vllm:omni_e2e_request_latency_s', MODEL, family('vllm:omni_e2e_request_latency_s'), CYCLE1.pipelineE2e);
          assertHistogram(
            wire,
            'vllm:omni_transfer_size_bytes',
            { ...MODEL, from_stage: '0', from_replica: '0', to_stage: '1', to_replica: '1' },
            family('vllm:omni_transfer_size_bytes'),
            [CYCLE1.transferBytes],
          );
          assertValue(wire, 'vllm:num_requests_running', ENGINE_LABELS, CYCLE1.running);
          assertValue(wire, 'vllm:kv_cache_usage_perc', ENGINE_LABELS, CYCLE1.kvCacheUsage);
          assertValue(wire, 'vllm:prompt_tokens_total', ENGINE_LABELS, CYCLE1.promptTokens);
          assertValue(wire, 'vllm:generation_tokens_total', ENGINE_LABELS, CYCLE1.generationTokens);
          assertValue(wire, 'vllm:request_success_total', { ...ENGINE_LABELS, finished_reason: 'stop' }, 1);
          assertHistogram(wire, 'vllm:time_to_first_token_seconds', ENGINE_LABELS, family('vllm:time_to_first_token_seconds'), CYCLE1.ttft);
          assertHistogram(wire, 'vllm:e2e_request_latency_seconds', ENGINE_LABELS, family('vllm:e2e_request_latency_seconds'), [2.5]);

          const g = GEN_AI_METRICS;
          assertHistogram(wire, g.timeToFirstToken.name, GEN_AI_LABELS, g.timeToFirstToken.buckets, CYCLE1.ttft);
          assertHistogram(wire, g.requestDuration.name, GEN_AI_LABELS, g.requestDuration.buckets, [2.5]);
          assertHistogram(wire, g.timePerOutputToken.name, GEN_AI_LABELS, g.timePerOutputToken.buckets, [0.25]);
          assertHistogram(wire, g.tokenUsage.name, { ...GEN_AI_LABELS, 'gen_ai.token.type': 'input' }, g.tokenUsage.buckets, [20]);
          assertHistogram(wire, g.tokenUsage.name, { ...GEN_AI_LABELS, 'gen_ai.token.type': 'output' }, g.tokenUsage.buckets, [5]);

          // The in-process reader is still there for metricsText().
          const text = await run.handle.metricsText();
          assert.ok(text.includes('vllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 3.0\n'));
        } finally {
          await stopRun(run);
        }
      });

      it('delta: two export cycles, the second carries only the new increments', async () => {
        const run = await startRun(protocol, 'delta');
        try {
          recordCycle1(run.handle);
          const first = await exportCycle(run, 0);
          assert.deepEqual(withoutTimes(first.wire), withoutTimes(first.truth));
          assertWellFormed(run, first.wire, 'vllm', 'delta');
          assertValue(first.wire, 'vllm:omni_requests_success_total', { ...MODEL, finished_reason: 'stop' }, 3);

          recordCycle2(run.handle);
          const second = await exportCycle(run, 1);
          assert.deepEqual(withoutTimes(second.wire), withoutTimes(second.truth));
          assertWellFormed(run, second.wire, 'vllm', 'delta');

          const family = (name: string) => run.handle.catalog.byName(name)?.buckets ?? [];
          assertValue(second.wire, 'vllm:omni_requests_success_total', { ...MODEL, finished_reason: 'stop' }, 1);
          assertHistogram(
            second.wire,
            'vllm:omni_e2e_request_latency_s',
            MODEL,
            family('vllm:omni_e2e_request_latency_s'),
            CYCLE2.pipelineE2e,
            CYCLE1.pipelineE2e,
          );
          assertValue(second.wire, 'vllm:generation_tokens_total', ENGINE_LABELS, CYCLE2.generationTokens);
          assertValue(second.wire, 'vllm:request_success_total', { ...ENGINE_LABELS, finished_reason: 'abort' }, 1);
          assertHistogram(
            second.wire,
            'vllm:e2e_request_latency_seconds',
            ENGINE_LABELS,
            family('vllm:e2e_request_latency_seconds'),
            [0.2],
            [CYCLE1.request.e2eLatency],
          );
          const g = GEN_AI_METRICS;
          assertHistogram(second.wire, g.requestDuration.name, { ...GEN_AI_LABELS, 'error.type': 'abort' }, g.requestDuration.buckets, [0.2]);
          assertHistogram(second.wire, g.tokenUsage.name, { ...GEN_AI_LABELS, 'gen_ai.token.type': 'input' }, g.tokenUsage.buckets, [7]);

          // Nothing new: no point at all (the first cycle's values are not repeated).
          const untouched = (name: string, attributes: Record<string, string>) =>
            assert.equal(pointWith(metricNamed(second.wire, name), attributes), undefined, `${name} carries no stale point`);
          untouched('vllm:omni_transfer_size_bytes', { ...MODEL, from_stage: '0', from_replica: '0', to_stage: '1', to_replica: '1' });
          untouched('vllm:request_success_total', { ...ENGINE_LABELS, finished_reason: 'stop' });
          untouched('vllm:time_to_first_token_seconds', ENGINE_LABELS);
          untouched('vllm:num_requests_running', ENGINE_LABELS);
          untouched(g.timePerOutputToken.name, GEN_AI_LABELS);

          // Each delta interval starts where the previous one ended.
          const name = 'vllm:omni_requests_success_total';
          const labels = { ...MODEL, finished_reason: 'stop' };
          assert.equal(pointWith(metricNamed(second.wire, name), labels)?.startTimeUnixNano, pointWith(metricNamed(first.wire, name), labels)?.timeUnixNano);
        } finally {
          await stopRun(run);
        }
      });
    });
  }

  it('otel naming: dotted names with UCUM units on the wire, values unchanged', async () => {
    const run = await startRun('http/json', 'cumulative', 'otel');
    try {
      recordCycle1(run.handle);
      const { wire, truth } = await exportCycle(run, 0);
      assert.deepEqual(withoutTimes(wire), withoutTimes(truth));
      assertWellFormed(run, wire, 'otel', 'cumulative');
      assertValue(wire, 'vllm.omni_requests_success', { ...MODEL, finished_reason: 'stop' }, 3);
      assert.equal(metricNamed(wire, 'vllm.omni_e2e_request_latency')?.unit, 's');
      assert.equal(metricNamed(wire, 'vllm.kv_cache_usage_perc')?.unit, '1');
      assert.equal(metricNamed(wire, 'vllm.omni_transfer_size')?.unit, 'By');
    } finally {
      await stopRun(run);
    }
  });
});
