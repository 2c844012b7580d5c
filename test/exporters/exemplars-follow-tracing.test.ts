import assert from 'node:assert/strict';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { OmniMetricsOptions } from '../../options';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { captureConsole } from '../support/console-capture';

const SUCCESS = 'vllm:omni_requests_success_total{finished_reason="stop",model_name="m"}';

/** The success counter's OpenMetrics line: its value, and the trace id of its exemplar if it has one. */
async function successLine(handle: OmniMetricsHandle): Promise<{ value: string; traceId: string | undefined }> {
  const line = (await handle.metricsText('openmetrics')).split('\n').find((text) => text.startsWith(`${SUCCESS} `)) ?? '';
  return { value: line.split(' ')[1] ?? '', traceId: /trace_id="([0-9a-f]{32})"/.exec(line)?.[1] };
}

/** A request that succeeds within a span of its own; returns the span's trace id. */
function tracedRequest(handle: OmniMetricsHandle): string {
  return trace.getTracer('test').startActiveSpan('request', (span) => {
    handle.pipeline.requestSucceeded(0.5, 'stop');
    span.end();
    return span.spanContext().traceId;
  });
}

/**
 * Without the `exemplars` option, exemplars follow the tracer provider: on when one is registered
 * at the first record, or once a scrape or export has happened after it was registered, whether
 * it came before `registerOmniMetrics` or after it (NodeSDK's `start()`).
 */
describe('exemplars follow the tracer provider', () => {
  let handle: OmniMetricsHandle | undefined;
  const register = async (options: Partial<OmniMetricsOptions> = {}): Promise<OmniMetricsHandle> => {
    handle = await registerOmniMetrics({ modelName: 'm', logStats: true, prometheus: false, selfCheck: false, processMetrics: false, ...options });
    return handle;
  };

  beforeEach(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterEach(async () => {
    await handle?.shutdown();
    handle = undefined;
    trace.disable();
    context.disable();
  });

  it('a provider registered after registerOmniMetrics: the first record takes the trace', async () => {
    const metrics = await register();
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    const traceId = tracedRequest(metrics);
    assert.deepEqual(await successLine(metrics), { value: '1.0', traceId });
  });

  it('a provider registered before registerOmniMetrics: on from the start, as before', async () => {
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    const metrics = await register();
    const traceId = tracedRequest(metrics);
    assert.deepEqual(await successLine(metrics), { value: '1.0', traceId });
  });

  it('records before any provider keep none; after a scrape that follows the registration, the next record does', async () => {
    const metrics = await register();
    tracedRequest(metrics); // no provider: a non-recording span, and the scope finds no tracing
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    tracedRequest(metrics); // the scope looked at the first record: it looks again after the next collection
    assert.deepEqual(await successLine(metrics), { value: '2.0', traceId: undefined });
    const traceId = tracedRequest(metrics);
    assert.deepEqual(await successLine(metrics), { value: '3.0', traceId });
  });

  it('exemplars: false stays off with a provider registered; no provider ever: none, and nothing said', async () => {
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    const off = await register({ exemplars: false });
    tracedRequest(off);
    assert.deepEqual(await successLine(off), { value: '1.0', traceId: undefined });
    await off.shutdown();
    trace.disable();
    const printed = await captureConsole(async () => {
      const untraced = await register();
      tracedRequest(untraced);
      assert.deepEqual(await successLine(untraced), { value: '1.0', traceId: undefined });
    });
    assert.deepEqual(printed, []);
  });
});
