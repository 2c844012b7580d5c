import assert from 'node:assert/strict';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { fromOtlp, metricNamed, pointWith, type ExportShape } from '../otlp/support/normalize';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp/support/otlp-receiver';
import { EngineServer, fixtureText } from './support/engine-server';

describe('engine pull over OTLP', () => {
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

  async function start(temporality: 'cumulative' | 'delta'): Promise<void> {
    engine = await EngineServer.start(fixtureText('vllm-current-engine0.prom'));
    receiver = await startOtlpReceiver('http/protobuf');
    handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1, 2],
      logStats: true,
      logIntervalSeconds: 0,
      exporters: ['otlp'],
      otlp: { protocol: 'http/protobuf', endpoint: receiver.endpoint, temporality, exportIntervalMillis: 600_000 },
      enginePull: { engines: [{ stage: 1, replica: 1, url: engine.url }], cacheMillis: 0, timeoutMillis: 500 },
    });
  }

  async function flush(index: number): Promise<ExportShape> {
    await handle!.forceFlush();
    const requests = await receiver!.waitForRequests(index + 1);
    return fromOtlp((requests[index] as (typeof requests)[number]).body);
  }

  const PULLED = { model_name: 'org/current-model', stage: '1', replica: '1' };

  it("pushes the pulled families in the package's own streams, the _created time as each point's start", async () => {
    await start('cumulative');
    const shape = await flush(0);
    const prompt = metricNamed(shape, 'vllm:prompt_tokens_total');
    assert.equal(shape.metrics.filter((metric) => metric.name === 'vllm:prompt_tokens_total').length, 1, 'one stream');
    assert.equal(pointWith(prompt, PULLED)?.value, 2468);
    assert.equal(pointWith(prompt, PULLED)?.startTimeUnixNano, '1767225603000000000');
    assert.equal(pointWith(prompt, { model_name: 'm', stage: '1', replica: '1' }), undefined, 'the in-process series of the pulled replica is left out');
    assert.equal(pointWith(prompt, { model_name: 'm', stage: '1', replica: '0' })?.value, 0, 'the in-process replica stays');
    const e2e = pointWith(metricNamed(shape, 'vllm:e2e_request_latency_seconds'), PULLED);
    assert.equal(e2e?.count, 3);
    assert.equal(e2e?.sum, 9003);
    assert.equal(e2e?.explicitBounds?.length, 21);
    assert.equal(
      e2e?.bucketCounts?.reduce((a, b) => a + b, 0),
      3,
    );
    assert.equal(pointWith(metricNamed(shape, 'vllm:omni_engine_scrape_up'), { stage: '1', replica: '1' })?.value, 1);
  });

  it('delta temporality: the change since the previous export, unchanged pulled series left out', async () => {
    await start('delta');
    const first = await flush(0);
    assert.equal(pointWith(metricNamed(first, 'vllm:prompt_tokens_total'), PULLED)?.value, 2468);
    engine!.text = engine!.text.replace(
      'vllm:prompt_tokens_total{engine="0",model_name="org/current-model"} 2468.0',
      'vllm:prompt_tokens_total{engine="0",model_name="org/current-model"} 2500.0',
    );
    const second = await flush(1);
    assert.equal(metricNamed(second, 'vllm:prompt_tokens_total')?.temporality, 'delta');
    assert.equal(pointWith(metricNamed(second, 'vllm:prompt_tokens_total'), PULLED)?.value, 32);
    assert.equal(pointWith(metricNamed(second, 'vllm:generation_tokens_total'), PULLED), undefined, 'unchanged');
  });
});
