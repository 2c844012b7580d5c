import assert from 'node:assert/strict';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { differencesFromOwn, waitUntil } from '../support/collector-samples';
import { parseSamples, type Sample } from '../support/exposition';
import { httpGet } from '../support/http';
import { startCollector, type CollectorProcess } from '../support/peers/collector-process';
import { needPeer } from '../support/peers/need-peer';
import { freePort } from '../support/ports';
import { allowPrinted } from '../support/console-capture';
import { startRefusingProxy, type ProxiedRequest, type RefusingProxy } from '../support/refusing-proxy';

const SUCCESS = 'vllm:omni_requests_success_total';
/** `Retry-After: 1`, in the milliseconds the retries are timed in. */
const RETRY_AFTER_MILLIS = 1000;
/**
 * Node's timers count from the event loop's cached millisecond clock, so a retry may be sent up to
 * a millisecond or two before the instant `performance.now()` puts the answer plus the wait at.
 */
const CLOCK_ROUNDING_MILLIS = 5;

const pause = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, millis)));

/**
 * A loopback proxy in front of a real Collector's OTLP/HTTP receiver refuses the requests the test
 * says, with 429 or 503 and `Retry-After: 1`, and forwards the rest. The package retries an export
 * after each wait that fits in its timeout; an export whose wait does not fit is given up, the
 * exports before the time the Collector named are skipped, and with cumulative temporality the next
 * one carries the totals. Each push comes from its own process (`service.instance.id`), so the
 * Collector's `prometheus` exporter holds each one's values apart, to compare with its `/metrics`.
 */
describe('OTLP/HTTP to a Collector that answers 429 and 503 with Retry-After', function () {
  const collector = needPeer('collector', this);
  this.timeout(60_000);
  let otelcol: CollectorProcess;
  let proxy: RefusingProxy;
  let exporterUrl: string;
  const running = new Set<OmniMetricsHandle>();

  before(async function () {
    const { bin } = collector.paths();
    const [httpPort, exporterPort] = [await freePort(), await freePort()];
    exporterUrl = `http://127.0.0.1:${exporterPort}/metrics`;
    otelcol = startCollector(bin['omni-otelcol'] as string, {
      receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${httpPort}` } } } },
      exporters: { prometheus: { endpoint: `127.0.0.1:${exporterPort}` } },
      service: { pipelines: { metrics: { receivers: ['otlp'], exporters: ['prometheus'] } } },
    });
    await waitUntil(
      'the Collector listened',
      async () => (await httpGet(exporterUrl)).status === 200,
      () => otelcol.output(),
    );
    proxy = await startRefusingProxy(`http://127.0.0.1:${httpPort}`);
  });

  after(async () => {
    await Promise.all([...running].map((handle) => handle.shutdown()));
    await proxy?.close();
    await otelcol?.stop();
  });

  /** A process pushing OTLP/HTTP through the proxy, exporting only when the test flushes. */
  async function pushingProcess(instance: string, timeoutMillis?: number): Promise<OmniMetricsHandle> {
    const handle = await registerOmniMetrics({
      resource: resourceFromAttributes({ 'service.instance.id': instance }),
      modelName: 'm',
      logStats: true,
      logIntervalSeconds: 0,
      processMetrics: false,
      selfCheck: false,
      serviceName: 'omni-retry-after-test',
      exporters: ['otlp'],
      otlp: { protocol: 'http/protobuf', endpoint: `${proxy.url}/v1/metrics`, exportIntervalMillis: 600_000, timeoutMillis, temporality: 'cumulative' },
    });
    running.add(handle);
    return handle;
  }

  /** The requests the proxy got from `from` on. */
  const requestsSince = (from: number): readonly ProxiedRequest[] => proxy.requests.slice(from);

  /** The package's own samples (classic, `_created` aside: the Collector prints start times otherwise). */
  async function ownSamples(handle: OmniMetricsHandle): Promise<Sample[]> {
    return parseSamples(await handle.metricsText('text')).filter((sample) => !sample.name.endsWith('_created'));
  }

  /** Waits until the Collector's request count for `instance` is `count`, then compares every sample with `own`. */
  async function assertCollectorHolds(instance: string, count: number, own: readonly Sample[]): Promise<void> {
    let text = '';
    const mine = (): Sample[] => parseSamples(text).filter((sample) => sample.labels.instance === instance);
    await waitUntil(
      `the Collector holds ${SUCCESS} = ${count} for ${instance}`,
      async () => {
        text = (await httpGet(exporterUrl)).body;
        return mine().find((sample) => sample.name === SUCCESS)?.value === count;
      },
      () => `${otelcol.output()}\n--- the Prometheus exporter ---\n${text}`,
    );
    assert.deepEqual(differencesFromOwn(mine(), own), { missing: [], different: [] });
  }

  it('retries one export after each Retry-After that fits in its timeout: 429, 503, then the Collector takes it, with exactly the recorded values', async () => {
    const handle = await pushingProcess('retried-within-the-export');
    for (const seconds of [0.25, 0.5, 2]) handle.pipeline.requestSucceeded(seconds, 'stop');
    proxy.refuse({ status: 429, retryAfter: '1' }, { status: 503, retryAfter: '1' });
    const from = proxy.requests.length;

    await handle.forceFlush();

    const attempts = requestsSince(from);
    assert.deepEqual(
      attempts.map((request) => request.status),
      [429, 503, 200],
    );
    for (let i = 1; i < attempts.length; i++) {
      const waited = (attempts[i]?.at ?? 0) - (attempts[i - 1]?.at ?? 0);
      assert.ok(
        waited >= RETRY_AFTER_MILLIS - CLOCK_ROUNDING_MILLIS,
        `attempt ${i + 1} came ${waited.toFixed(1)} ms after the answer asking for ${RETRY_AFTER_MILLIS} ms`,
      );
    }
    await assertCollectorHolds('retried-within-the-export', 3, await ownSamples(handle));
  });

  it('gives up an export whose Retry-After exceeds its timeout, sends nothing before that time, and the next export carries the totals (cumulative: nothing lost)', async () => {
    const handle = await pushingProcess('paused-across-exports', 500);
    handle.pipeline.requestSucceeded(0.25, 'stop');
    handle.pipeline.requestSucceeded(0.5, 'stop');
    proxy.refuse({ status: 429, retryAfter: '1' });
    const from = proxy.requests.length;

    await handle.forceFlush();
    assert.deepEqual(
      requestsSince(from).map((request) => request.status),
      [429],
      'one attempt: the 1 s wait does not fit in the 500 ms timeout',
    );
    const refusedAt = requestsSince(from)[0]?.at ?? 0;

    handle.pipeline.requestSucceeded(1, 'stop');
    // An export skipped for the Collector's Retry-After is said (when this one falls before the time it named).
    await allowPrinted(
      [/^omni-otel-metrics: the OTLP collector asked, with Retry-After, not to be sent metrics before \S+: exports until then are skipped/],
      () => handle.forceFlush(),
    );
    if (performance.now() < refusedAt + RETRY_AFTER_MILLIS) {
      assert.deepEqual(
        requestsSince(from).map((request) => request.status),
        [429],
        'an export before the time the Collector named is skipped',
      );
    }

    await pause(refusedAt + RETRY_AFTER_MILLIS + CLOCK_ROUNDING_MILLIS - performance.now());
    handle.pipeline.requestSucceeded(4, 'stop');
    await handle.forceFlush();
    assert.deepEqual(
      requestsSince(from).map((request) => request.status),
      [429, 200],
    );
    await assertCollectorHolds('paused-across-exports', 4, await ownSamples(handle));
  });

  it('attempts the last export at shutdown even while the Collector asked for a pause, so its values arrive', async () => {
    const handle = await pushingProcess('last-export-at-shutdown', 500);
    handle.pipeline.requestSucceeded(0.25, 'stop');
    proxy.refuse({ status: 503, retryAfter: '1' });
    const from = proxy.requests.length;
    await handle.forceFlush();
    handle.pipeline.requestSucceeded(0.5, 'stop');
    handle.pipeline.requestSucceeded(1, 'stop');
    const own = await ownSamples(handle);

    running.delete(handle);
    await handle.shutdown();

    assert.deepEqual(
      requestsSince(from).map((request) => request.status),
      [503, 200],
    );
    await assertCollectorHolds('last-export-at-shutdown', 3, own);
  });
});
