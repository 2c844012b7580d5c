import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';

const options = { modelName: 'm', logIntervalSeconds: 0, selfCheck: false, processMetrics: false } as const;
const IN_USE_BY_ANOTHER = 'the port is in use (another server has it; a NodeSDK PrometheusExporter also defaults to 9464)';
const HELD_HERE = 'this port is held by an earlier registerOmniMetrics handle in this process (shut that handle down first, or keep using it)';

describe('a second registration on the port of a first one', () => {
  let first: OmniMetricsHandle | undefined;

  afterEach(async () => {
    await first?.shutdown();
    first = undefined;
  });

  it("says the port is held by the process's own earlier handle, and is free again once that handle shuts down", async () => {
    first = await registerOmniMetrics({ ...options, prometheus: { host: '127.0.0.1', port: 0 } });
    const port = (first.prometheusServer as { port: number }).port;
    await assert.rejects(registerOmniMetrics({ ...options, prometheus: { host: '127.0.0.1', port } }), (error: Error) => {
      assert.equal(
        error.message,
        `omni-otel-metrics: the /metrics server cannot listen on 127.0.0.1:${port}: ${HELD_HERE}. Set prometheus.host / prometheus.port (or OTEL_EXPORTER_PROMETHEUS_HOST / _PORT), or prometheus: false and mount handle.metricsHandler() on your own server.`,
      );
      return true;
    });
    await first.shutdown();
    first = await registerOmniMetrics({ ...options, prometheus: { host: '127.0.0.1', port } });
    assert.equal(first.prometheusServer?.port, port);
  });

  it('names another server when the port is held by something other than a handle of this package', async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as AddressInfo).port;
    try {
      await assert.rejects(registerOmniMetrics({ ...options, prometheus: { host: '127.0.0.1', port } }), (error: Error) => {
        assert.ok(error.message.includes(`127.0.0.1:${port}: ${IN_USE_BY_ANOTHER}.`), error.message);
        return true;
      });
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
