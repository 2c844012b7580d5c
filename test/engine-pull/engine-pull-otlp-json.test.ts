import assert from 'node:assert/strict';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { fromOtlp, metricNamed, pointWith } from '../otlp/support/normalize';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp/support/otlp-receiver';
import { allowPrinted } from '../support/console-capture';
import { EngineServer } from './support/engine-server';

/** An engine whose counters carry start times and values no exporter can take, beside one good family. */
const HOSTILE =
  '# TYPE vllm:good_total counter\nvllm:good_total{engine="0"} 7.0\n' +
  '# TYPE vllm:nan_start_total counter\nvllm:nan_start_total{engine="0"} 3.0\n# TYPE vllm:nan_start_created gauge\nvllm:nan_start_created{engine="0"} NaN\n' +
  '# TYPE vllm:inf_start_total counter\nvllm:inf_start_total{engine="0"} 4.0\n# TYPE vllm:inf_start_created gauge\nvllm:inf_start_created{engine="0"} +Inf\n' +
  '# TYPE vllm:nan_total counter\nvllm:nan_total{engine="0"} NaN\n' +
  '# TYPE vllm:negative_total counter\nvllm:negative_total{engine="0"} -5.0\n' +
  '# TYPE vllm:h histogram\nvllm:h_bucket{engine="0",le="1.0"} 1.0\nvllm:h_bucket{engine="0",le="+Inf"} 2.0\nvllm:h_count{engine="0"} 2.0\nvllm:h_sum{engine="0"} 3.0\n# TYPE vllm:h_created gauge\nvllm:h_created{engine="0"} -Inf\n';

describe('engine pull over OTLP http/json: nothing an engine prints fails an export', () => {
  let engine: EngineServer | undefined;
  let receiver: OtlpReceiver | undefined;
  let handle: OmniMetricsHandle | undefined;

  afterEach(async () => {
    await handle?.shutdown();
    await receiver?.close();
    await engine?.down();
    handle = undefined;
    receiver = undefined;
    engine = undefined;
  });

  it('NaN / infinite start times become the first-seen time; NaN and negative counters are left out; every other family is exported', async () => {
    engine = await EngineServer.start(HOSTILE);
    receiver = await startOtlpReceiver('http/json');
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1],
      logStats: true,
      prometheus: false,
      logIntervalSeconds: 0,
      exporters: ['otlp'],
      otlp: { protocol: 'http/json', endpoint: receiver.endpoint, exportIntervalMillis: 600_000 },
      enginePull: { engines: [{ stage: 0, replica: 0, url: engine.url }], cacheMillis: 0, timeoutMillis: 1000 },
    });
    const before = Date.now();
    // What the pull leaves out is said, once a minute per kind at most.
    await allowPrinted(
      [
        /^omni-otel-metrics: vllm:nan_start_total of engine 0 of http:\/\/127\.0\.0\.1:\d+\/metrics has a _created of NaN; its start time is when it was first seen/,
        /^omni-otel-metrics: vllm:nan_total of engine 0 of http:\/\/127\.0\.0\.1:\d+\/metrics is left out: a counter of NaN/,
      ],
      () => handle!.forceFlush(),
    );
    const [request] = await receiver.waitForRequests(1);
    const shape = fromOtlp(request!.body);
    const pulled = { stage: '0', replica: '0' };
    assert.equal(pointWith(metricNamed(shape, 'vllm:good_total'), pulled)?.value, 7);
    for (const name of ['vllm:nan_start_total', 'vllm:inf_start_total', 'vllm:h']) {
      const point = pointWith(metricNamed(shape, name), pulled);
      assert.ok(point !== undefined, name);
      const startMillis = Number(BigInt(point.startTimeUnixNano as string) / 1_000_000n);
      assert.ok(startMillis > before - 60_000 && startMillis <= Date.now(), `${name} starts at ${startMillis}`);
    }
    assert.equal(pointWith(metricNamed(shape, 'vllm:inf_start_total'), pulled)?.value, 4);
    assert.equal(pointWith(metricNamed(shape, 'vllm:h'), pulled)?.count, 2);
    assert.equal(
      shape.metrics.find((m) => m.name === 'vllm:nan_total'),
      undefined,
    );
    assert.equal(
      shape.metrics.find((m) => m.name === 'vllm:negative_total'),
      undefined,
    );
  });
});
