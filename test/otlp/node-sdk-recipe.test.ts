import assert from 'node:assert/strict';
import { context, metrics as metricsApi, propagation, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics } from '../../register';
import { FakeOrchestrator, FakeServing } from '../hooks/fake-host';

/** Intervals created while `body` runs, and which of them were never cleared; `fire(delay)` runs those of one period once. */
async function watchIntervals(body: (fire: (delayMillis: number) => void) => Promise<void>): Promise<{ created: number[]; leftRunning: number[] }> {
  const realSet = globalThis.setInterval;
  const realClear = globalThis.clearInterval;
  const running = new Map<unknown, { delay: number; callback: () => void }>();
  const created: number[] = [];
  globalThis.setInterval = ((callback: () => void, delay?: number) => {
    const handle = realSet(callback, delay);
    created.push(delay ?? 0);
    running.set(handle, { delay: delay ?? 0, callback });
    return handle;
  }) as typeof setInterval;
  globalThis.clearInterval = ((handle?: Parameters<typeof clearInterval>[0]) => {
    running.delete(handle);
    realClear(handle);
  }) as typeof clearInterval;
  try {
    await body((delayMillis) => {
      for (const { delay, callback } of [...running.values()]) if (delay === delayMillis) callback();
    });
  } finally {
    globalThis.setInterval = realSet;
    globalThis.clearInterval = realClear;
  }
  return { created, leftRunning: [...running.values()].map(({ delay }) => delay) };
}

describe("the README's NodeSDK recipe with a periodic log", () => {
  afterEach(() => {
    metricsApi.disable();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it('prints one line per replica per interval, and leaves no timer after shutdown()', async () => {
    const lines: string[] = [];
    const LOG_MILLIS = 3_600_000;
    const { leftRunning } = await watchIntervals(async (fire) => {
      const metrics = await registerOmniMetrics({
        modelName: 'qwen',
        stagePools: [1, 2],
        logStats: true,
        meterProvider: 'external',
        prometheus: false,
        selfCheck: false,
        processMetrics: false,
        logIntervalSeconds: LOG_MILLIS / 1000,
        logSink: { info: (line) => lines.push(line), debug: (line) => lines.push(line) },
      });
      const sdk = new NodeSDK({
        metricReaders: [metrics.prometheusReader!],
        views: [...metrics.views],
        instrumentations: [new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, servingClass: FakeServing })],
        spanProcessors: [],
        autoDetectResources: false,
      });
      sdk.start();
      const orchestrator = new FakeOrchestrator();
      for await (const _ of new FakeServing(orchestrator).generate({ requestId: 'a' })) void _;
      orchestrator.addRequest({ requestId: 'still-running' });
      fire(LOG_MILLIS);
      assert.deepEqual(
        lines.map((line) => line.split(':')[0]),
        ['Stage 0 replica 0', 'Stage 1 replica 0', 'Stage 1 replica 1'],
        `one line for each of the 3 replicas:\n${lines.join('\n')}`,
      );
      fire(LOG_MILLIS);
      assert.equal(lines.length, 6, 'and as many at the next interval');
      await sdk.shutdown();
      await metrics.shutdown();
    });
    assert.deepEqual(leftRunning, [], 'every interval started by the handle, the hooks or the SDK was cleared');
  });
});
