import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';
import { startPrometheus, type ExemplarsResult, type PrometheusHandle } from '../support/prometheus-server';
import { needPeer } from '../support/peers/need-peer';

const E2E = 'vllm:omni_e2e_request_latency_s';
const SCHEMA = 3;
const REQUESTS = 41;
const CONCURRENCY = 8;
/** A caller's own trace: the request that sends it is served in a child span of it. */
const CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';
const OPENMETRICS_ACCEPT = 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5';

/**
 * Prometheus 2.42 started with `native-histograms` asks every target for the protobuf exposition,
 * and it cannot be told otherwise per job (`scrape_protocols` came in 2.49). The second job
 * scrapes the API port's `/metrics` through this loopback proxy, which asks for OpenMetrics, as a
 * Prometheus without that feature would: exemplars must arrive both ways.
 */
function startOpenMetricsProxy(target: string): Promise<Server> {
  const server = createServer((request, response) => {
    const upstream = httpRequest(target, { headers: { accept: OPENMETRICS_ACCEPT } }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', () => response.destroy());
    upstream.end();
    request.resume();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * The reference pipeline with tracing on (an in-memory span exporter the test reads), exemplars
 * at their default (on, as a tracer provider is registered) and native buckets on the pipeline's
 * e2e family, scraped by Debian's Prometheus 2.42 with `exemplar-storage,native-histograms` under
 * a small load of the official openai client.
 */
describe('reference pipeline traced: a real Prometheus stores its exemplars and native e2e histogram', function () {
  needPeer('debian-prometheus', this);
  this.timeout(60_000);
  const spans = new InMemorySpanExporter();
  const e2eSeconds: number[] = [];
  let pipeline: ReferencePipeline;
  let proxy: Server;
  let prometheus: PrometheusHandle;

  before(async () => {
    pipeline = await startReferencePipeline({
      port: 0,
      metricsPort: 0,
      profile: 'fast',
      imageReplicas: 0,
      logIntervalSeconds: 0,
      logSink: { info: () => undefined },
      tracing: { exporter: spans, processor: 'simple' },
      nativeHistograms: { families: [E2E], schema: SCHEMA },
    });
    // The e2e latencies exactly as the pipeline records them: the true quantiles are computed from these.
    const recorder = pipeline.metrics.pipeline;
    const record = recorder.requestSucceeded.bind(recorder);
    recorder.requestSucceeded = (seconds, reason) => {
      e2eSeconds.push(seconds);
      record(seconds, reason);
    };
    proxy = await startOpenMetricsProxy(pipeline.apiMetricsUrl);
    assert.ok(pipeline.metricsAddress);
    prometheus = await startPrometheus({
      scrapeTargets: [
        { job: 'omni', target: pipeline.metricsAddress },
        { job: 'omni-openmetrics', target: `127.0.0.1:${(proxy.address() as AddressInfo).port}` },
      ],
      scrapeIntervalSeconds: 0.5,
      features: ['exemplar-storage', 'native-histograms'],
    });

    const client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
    const ask = (i: number, headers: Record<string, string> = {}) =>
      client.chat.completions.create(
        { model: pipeline.modelName, messages: [{ role: 'user', content: `request ${i}` }], max_tokens: 4 + (i % 13) * 3 },
        { headers },
      );
    let next = 1;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < REQUESTS; i = next++) await ask(i);
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // Last, so no later request replaces its exemplar on the success counter before a scrape.
    await ask(0, { traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01` });
  });

  after(async () => {
    await prometheus?.stop();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    await pipeline?.stop();
  });

  async function exemplars(promql: string, enough: (results: ExemplarsResult[]) => boolean): Promise<ExemplarsResult[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = Date.now() / 1000;
      const result = await prometheus.queryExemplars(promql, now - 600, now + 600);
      if (enough(result) || Date.now() > deadline) return result;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it('each API request was served in one exported server span; the one sent with a traceparent is its child', () => {
    const served = spans.getFinishedSpans().filter((span) => span.name === 'POST /v1/chat/completions');
    assert.equal(served.length, REQUESTS);
    const forwarded = served.filter((span) => span.spanContext().traceId === CALLER_TRACE_ID);
    assert.equal(forwarded.length, 1);
    assert.equal(forwarded[0]!.parentSpanContext?.spanId, CALLER_SPAN_ID);
    assert.equal(e2eSeconds.length, REQUESTS, 'every request recorded one e2e latency');
  });

  for (const [job, format] of [
    ['omni', 'protobuf'],
    ['omni-openmetrics', 'OpenMetrics'],
  ] as const) {
    it(`query_exemplars answers with trace and span ids of spans the pipeline exported (scraped as ${format})`, async () => {
      const wanted = (results: ExemplarsResult[]): boolean => results.some((series) => series.exemplars.some((e) => e.labels.trace_id === CALLER_TRACE_ID));
      const success = await exemplars(`vllm:omni_requests_success_total{job="${job}"}`, wanted);
      const exported = new Map(spans.getFinishedSpans().map((span) => [span.spanContext().spanId, span.spanContext().traceId]));
      const found = success.flatMap((series) => series.exemplars);
      assert.ok(found.length >= 2, JSON.stringify(success));
      for (const exemplar of found) {
        assert.equal(exported.get(exemplar.labels.span_id!), exemplar.labels.trace_id, `exemplar ${JSON.stringify(exemplar)} names an exported span`);
      }
      assert.ok(wanted(success), `the caller's trace is among the success counter's exemplars: ${JSON.stringify(success)}`);
    });
  }

  for (const q of [0.5, 0.9]) {
    it(`histogram_quantile(${q}) over the native e2e series is within the schema ${SCHEMA} relative error of the true quantile`, async () => {
      await prometheus.waitFor(`histogram_count(${E2E}{job="omni"})`, (r) => r.length === 1 && r[0]?.value[1] === String(REQUESTS), 20_000);
      const [sample] = await prometheus.query(`histogram_quantile(${q}, ${E2E}{job="omni"})`);
      const estimate = Number(sample?.value[1]);
      // Prometheus interpolates inside the bucket holding the observation of rank ceil(q·n): that observation is the true quantile.
      const sorted = [...e2eSeconds].sort((a, b) => a - b);
      const truth = sorted[Math.ceil(q * sorted.length) - 1]!;
      const bound = 2 ** (2 ** -SCHEMA) - 1;
      const error = Math.abs(estimate - truth) / truth;
      assert.ok(error < bound, `estimate ${estimate}, true ${truth}: relative error ${error.toFixed(4)} (bound ${bound.toFixed(4)})`);
      console.log(`      p${q * 100}: estimate ${estimate.toFixed(6)} s, true ${truth.toFixed(6)} s, relative error ${(error * 100).toFixed(2)} %`);
    });
  }
});
