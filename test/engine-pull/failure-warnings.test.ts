import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { captureWarnings } from '../support/diag-capture';
import { sampleValue } from '../support/exposition';
import { EngineServer, fixtureText } from './support/engine-server';

const UP = 'vllm:omni_engine_scrape_up';

/** An engine that answers every scrape with `status` (200: the fixture), until told another. */
async function statusEngine(status: number): Promise<{ url: string; server: Server; status: number }> {
  const engine = {
    url: '',
    server: createServer((_request, response) => response.writeHead(engine.status).end(engine.status === 200 ? fixtureText('vllm-current-engine0.prom') : '')),
    status,
  };
  await new Promise<void>((resolve) => engine.server.listen(0, '127.0.0.1', resolve));
  engine.url = `http://127.0.0.1:${(engine.server.address() as AddressInfo).port}/metrics`;
  return engine;
}

describe('engine pull: each failing engine is named, once per kind of failure until it answers again', function () {
  this.timeout(20_000);
  let handle: OmniMetricsHandle | undefined;
  let healthy: EngineServer | undefined;
  let unavailable: { url: string; server: Server; status: number } | undefined;
  let hung: EngineServer | undefined;
  let down: EngineServer | undefined;
  let flapping: { url: string; server: Server; status: number } | undefined;
  let captured: ReturnType<typeof captureWarnings> | undefined;
  const warnings = (): string[] => captured?.warnings ?? [];

  before(async () => {
    healthy = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    unavailable = await statusEngine(503);
    hung = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    hung.hang = true;
    down = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    await down.down();
    flapping = await statusEngine(200);
    captured = captureWarnings();
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 1, 1, 1, 1],
      logStats: true,
      prometheus: false,
      exporters: [],
      logIntervalSeconds: 0,
      selfCheck: false,
      enginePull: {
        engines: [
          { stage: 0, replica: 0, url: healthy.url },
          { stage: 1, replica: 0, url: unavailable.url },
          { stage: 2, replica: 0, url: hung.url },
          { stage: 3, replica: 0, url: down.url },
          { stage: 4, replica: 0, url: flapping.url },
        ],
        timeoutMillis: 300,
        cacheMillis: 0,
      },
    });
  });

  after(async () => {
    await handle?.shutdown();
    captured?.stop();
    await healthy?.down();
    await hung?.down();
    unavailable?.server.close();
    flapping?.server.close();
  });

  it('three of five engines down: three lines, one naming each, with its reason and the replica whose scrape_up is 0; none more on later pulls', async () => {
    for (let pull = 0; pull < 3; pull++) {
      const text = await handle!.metricsText();
      assert.deepEqual(
        [0, 1, 2, 3, 4].map((stage) => sampleValue(text, UP, { stage: String(stage), replica: '0' })),
        [1, 0, 0, 0, 1],
      );
    }
    assert.deepEqual(
      warnings()
        .map((warning) => warning.replace(/ECONNREFUSED [\d.:]+/, 'ECONNREFUSED …'))
        .sort(),
      [
        `omni-otel-metrics: engine metrics at ${down!.url} not served (connect ECONNREFUSED …): ${UP} is 0 for stage 3 replica 0 until it answers`,
        `omni-otel-metrics: engine metrics at ${hung!.url} not served (no complete answer within 300 ms): ${UP} is 0 for stage 2 replica 0 until it answers`,
        `omni-otel-metrics: engine metrics at ${unavailable!.url} not served (HTTP 503): ${UP} is 0 for stage 1 replica 0 until it answers`,
      ].sort(),
    );
  });

  it('an engine that fails, answers, and fails again is named once for each time it went down', async () => {
    warnings().length = 0;
    for (const status of [500, 500, 200, 200, 500, 500]) {
      flapping!.status = status;
      assert.equal(sampleValue(await handle!.metricsText(), UP, { stage: '4', replica: '0' }), status === 200 ? 1 : 0);
    }
    const line = `omni-otel-metrics: engine metrics at ${flapping!.url} not served (HTTP 500): ${UP} is 0 for stage 4 replica 0 until it answers`;
    assert.deepEqual(warnings(), [line, line]);
  });
});
