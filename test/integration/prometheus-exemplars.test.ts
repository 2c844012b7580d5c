import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { FakeOrchestrator, FakeServing } from '../hooks/fake-host';
import { startPrometheus, type ExemplarsResult, type PrometheusHandle } from '../support/prometheus-server';
import { needPeer } from '../support/peers/need-peer';

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // consume
  }
}

/**
 * Tracing on (the trace SDK, an in-memory exporter the test reads), exemplars left at their
 * default, and Debian's Prometheus with `--enable-feature=exemplar-storage` scraping the served
 * `/metrics` (it negotiates OpenMetrics): `query_exemplars` answers with the traces of the
 * requests the pipeline served.
 */
describe('a real Prometheus (exemplar-storage) stores the exemplars of served requests', function () {
  needPeer('debian-prometheus', this);
  this.timeout(60_000);
  const spans = new InMemorySpanExporter();
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation;
  let prometheus: PrometheusHandle;

  before(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    metrics = await registerOmniMetrics({
      modelName: 'm',
      logStats: true,
      prometheus: { host: '127.0.0.1', port: 0 },
      logIntervalSeconds: 0,
      selfCheck: false,
    });
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, servingClass: FakeServing, diagnosticsChannels: false });
    const server = metrics.prometheusServer;
    assert.ok(server);
    prometheus = await startPrometheus({
      scrapeTargets: [{ job: 'omni', target: `127.0.0.1:${server.port}` }],
      scrapeIntervalSeconds: 0.5,
      features: ['exemplar-storage'],
    });
  });

  after(async () => {
    await prometheus?.stop();
    instrumentation?.disable();
    await metrics?.shutdown();
    trace.disable();
    context.disable();
  });

  async function exemplarTraces(promql: string, traceId: string): Promise<ExemplarsResult[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = Date.now() / 1000;
      const result = await prometheus.queryExemplars(promql, now - 600, now + 600);
      if (result.some((series) => series.exemplars.some((exemplar) => exemplar.labels.trace_id === traceId)) || Date.now() > deadline) return result;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it('a request served inside a span: its e2e bucket and success counter carry that span', async () => {
    const serving = new FakeServing(new FakeOrchestrator());
    const tracer = trace.getTracer('exemplar-test');
    // The stream is read outside the span, as an engine loop delivers outputs: the trace is the one active at `generate`.
    const stream = tracer.startActiveSpan('POST /v1/chat/completions', (span) => {
      const started = serving.generate({ requestId: 'traced' });
      span.end();
      return started;
    });
    await drain(stream);
    const exported = spans.getFinishedSpans();
    assert.equal(exported.length, 1);
    const { traceId, spanId } = exported[0]!.spanContext();
    const e2e = await exemplarTraces('vllm:omni_e2e_request_latency_s_bucket', traceId);
    const found = e2e.flatMap((series) =>
      series.exemplars.filter((exemplar) => exemplar.labels.trace_id === traceId).map((exemplar) => ({ series, exemplar })),
    );
    assert.equal(found.length, 1, JSON.stringify(e2e));
    assert.equal(found[0]!.exemplar.labels.span_id, spanId);
    assert.equal(found[0]!.series.seriesLabels.__name__, 'vllm:omni_e2e_request_latency_s_bucket');
    const success = await exemplarTraces('vllm:omni_requests_success_total', traceId);
    const counted = success.flatMap((series) => series.exemplars).filter((exemplar) => exemplar.labels.trace_id === traceId);
    assert.equal(counted.length, 1, JSON.stringify(success));
    assert.equal(counted[0]!.value, '1');
  });

  it('a request that carries a traceparent (no span active): the exemplar names that trace', async () => {
    const serving = new FakeServing(new FakeOrchestrator());
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    await drain(serving.generate({ requestId: 'forwarded', traceparent: `00-${traceId}-${spanId}-01` } as { requestId: string }));
    const e2e = await exemplarTraces('vllm:omni_e2e_request_latency_s_bucket', traceId);
    const found = e2e.flatMap((series) => series.exemplars).filter((exemplar) => exemplar.labels.trace_id === traceId);
    assert.equal(found.length, 1, JSON.stringify(e2e));
    assert.equal(found[0]!.labels.span_id, spanId);
  });

  it('from the OpenMetrics it negotiated, Prometheus 2.42 still stores the `_created` samples as series, as from the 0.0.4 text', async () => {
    await prometheus.waitFor('vllm:omni_requests_success_total', (r) => r.length > 0, 20_000);
    const created = await prometheus.waitFor('vllm:omni_requests_success_created', (r) => r.length > 0, 20_000);
    const seconds = Number(created[0]!.value[1]);
    assert.ok(Math.abs(seconds - Date.now() / 1000) < 600, `a creation time in seconds, got ${seconds}`);
  });
});
