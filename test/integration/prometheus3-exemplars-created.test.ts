import assert from 'node:assert/strict';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { startReferencePipeline, TENANT_LABELS, type ReferencePipeline } from '../../examples/reference-pipeline';
import { needPeer } from '../support/peers/need-peer';
import { startPrometheus, type ExemplarsResult, type PrometheusHandle } from '../support/prometheus-server';

/**
 * The latency histograms that keep native buckets here, each with its classic buckets and the
 * exemplars of the requests behind its values (vLLM's engine families take a poll's trace, and
 * the reference pipeline polls outside any span: see docs/exemplars.md).
 */
const LATENCY = ['vllm:omni_e2e_request_latency_s', 'vllm:omni_request_queue_wait_s', 'vllm:omni_stage_gen_time_s'];
const SUCCESS = 'vllm:omni_requests_success_total';

/**
 * The reference pipeline traced, with native histograms and exemplars on, scraped by Prometheus 3
 * over protobuf (`scrape_native_histograms`) with `exemplar-storage` and
 * `created-timestamp-zero-ingestion`: what a user who turns on native histograms gets.
 */
describe('Prometheus 3 over protobuf: exemplars on native latency histograms, and the zero at each counter’s creation', function () {
  const prometheus3 = needPeer('prometheus3', this);
  this.timeout(90_000);
  const spans = new InMemorySpanExporter();
  let pipeline: ReferencePipeline;
  let prometheus: PrometheusHandle;
  let client: OpenAI;

  before(async () => {
    const { bin } = prometheus3.paths();
    pipeline = await startReferencePipeline({
      port: 0,
      metricsPort: 0,
      profile: 'fast',
      imageReplicas: 0,
      logIntervalSeconds: 0,
      logSink: { info: () => undefined },
      requestLabels: TENANT_LABELS,
      tracing: { exporter: spans, processor: 'simple' },
      nativeHistograms: { families: LATENCY },
    });
    assert.ok(pipeline.metricsAddress);
    prometheus = await startPrometheus({
      binary: bin.prometheus,
      scrapeTargets: [{ job: 'omni', target: pipeline.metricsAddress, settings: { scrape_protocols: ['PrometheusProto'], scrape_native_histograms: true } }],
      scrapeIntervalSeconds: 0.5,
      features: ['exemplar-storage', 'created-timestamp-zero-ingestion'],
    });
    client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
    for (let i = 0; i < 12; i++) await ask(i, 'early');
    // The late tenant's series are created only once Prometheus has scraped the pipeline.
    await prometheus.waitFor(`${SUCCESS}{tenant="early"}`, (result) => result.length > 0, 20_000);
  });

  after(async () => {
    await prometheus?.stop();
    await pipeline?.stop();
  });

  function ask(i: number, tenant: string): Promise<unknown> {
    return client.chat.completions.create({ model: pipeline.modelName, user: tenant, messages: [{ role: 'user', content: `request ${i}` }], max_tokens: 6 });
  }

  async function exemplarsOf(family: string): Promise<ExemplarsResult[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = Date.now() / 1000;
      const result = await prometheus.queryExemplars(`${family}{job="omni"}`, now - 600, now + 600);
      if (result.some((series) => series.exemplars.length > 0) || Date.now() > deadline) return result;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  for (const family of LATENCY) {
    it(`${family}: a native histogram in Prometheus, with exemplars naming spans the pipeline exported`, async () => {
      const [count] = await prometheus.waitFor(
        `histogram_count(${family}{job="omni"})`,
        (result) => result.length > 0 && Number(result[0]?.value[1]) > 0,
        20_000,
      );
      assert.ok(Number(count?.value[1]) > 0);
      const stored = (await exemplarsOf(family)).flatMap((series) => series.exemplars);
      assert.ok(stored.length > 0, `exemplars of ${family}`);
      const exported = new Map(spans.getFinishedSpans().map((span) => [span.spanContext().spanId, span.spanContext().traceId]));
      for (const exemplar of stored) {
        assert.match(exemplar.labels.trace_id ?? '', /^[0-9a-f]{32}$/);
        assert.equal(exported.get(exemplar.labels.span_id ?? ''), exemplar.labels.trace_id, `exemplar ${JSON.stringify(exemplar)} names an exported span`);
      }
    });
  }

  it('a counter created after the first scrape: Prometheus stores its zero at the created time the protobuf carries, then its value', async () => {
    const before = Date.now();
    await ask(100, 'late');
    const created = Date.now();
    const selector = `${SUCCESS}{job="omni",tenant="late"}`;
    await prometheus.waitFor(selector, (result) => result.length === 1, 20_000);
    const [series] = await prometheus.rawSamples(selector, 300);
    const [first, second] = series?.values ?? [];
    assert.ok(first && second, JSON.stringify(series));
    assert.equal(first[1], '0', 'the zero at the creation');
    assert.ok(first[0] * 1000 >= before - 1 && first[0] * 1000 <= created + 1, `created at ${first[0]}, between ${before / 1000} and ${created / 1000}`);
    assert.equal(second[1], '1');
    assert.ok(second[0] > first[0]);
  });
});
