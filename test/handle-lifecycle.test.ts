import assert from 'node:assert/strict';
import { OmniShutdownError } from '../handle-lifecycle';
import { registerOmniMetrics } from '../register';

describe('a handle after shutdown()', () => {
  it("every method names the handle's state instead of an SDK error; shutdown() again is a no-op", async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: { host: '127.0.0.1', port: 0 }, selfCheck: false });
    assert.equal(handle.addReplica(0), 1);
    const stopping = handle.shutdown();
    assert.throws(() => handle.addReplica(0), new OmniShutdownError('addReplica()', 'shutting down'));
    await stopping;
    const shutDown = (method: string) => (error: unknown) =>
      error instanceof OmniShutdownError &&
      error.method === method &&
      error.state === 'shut down' &&
      error.message ===
        `omni-otel-metrics: ${method} called on a handle that is shut down (shutdown() was called): its server, exporters and replica map are gone; register again to serve metrics`;
    await assert.rejects(handle.metricsText(), shutDown('metricsText()'));
    assert.throws(() => handle.metricsHandler(), shutDown('metricsHandler()'));
    assert.throws(() => handle.addReplica(0), shutDown('addReplica()'));
    assert.throws(() => handle.removeReplica(0, 0), shutDown('removeReplica()'));
    assert.throws(() => handle.replaceReplica(0, 0), shutDown('replaceReplica()'));
    assert.throws(() => handle.createMetricProducer(), shutDown('createMetricProducer()'));
    assert.throws(() => handle.selfCheck(), shutDown('selfCheck()'));
    await assert.rejects(handle.forceFlush(), shutDown('forceFlush()'));
    await handle.shutdown();
    await handle.shutdown();
    // Recording never throws into the host, shut down or not.
    handle.pipeline.requestFailed();
  });

  it('concurrent shutdown() calls share one shutdown', async () => {
    const handle = await registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, selfCheck: false });
    await Promise.all([handle.shutdown(), handle.shutdown()]);
  });
});
