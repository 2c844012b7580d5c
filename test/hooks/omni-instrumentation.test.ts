import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { OmniPrometheusReader } from '../../exporters/prometheus-reader';
import { OMNI_CHANNELS } from '../../instrumentation/hooks/channels';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { FakeOrchestrator, FakeServing } from './fake-host';

const value = (text: string, line: string): number | undefined => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
};
const SUCCESS = (reason: string) => `vllm:omni_requests_success_total{finished_reason="${reason}",model_name="m"}`;

async function drain(serving: FakeServing, request: Parameters<FakeServing['generate']>[0]): Promise<number> {
  let count = 0;
  for await (const _ of serving.generate(request)) count++;
  return count;
}

describe('OmniInstrumentation', () => {
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation | undefined;
  const originals = {
    addRequest: FakeOrchestrator.prototype.addRequest,
    cleanupRequest: FakeOrchestrator.prototype.cleanupRequest,
    pollEngine: FakeOrchestrator.prototype.pollEngine,
    generate: FakeServing.prototype.generate,
  };

  beforeEach(async () => {
    metrics = await registerOmniMetrics({ selfCheck: false, modelName: 'm', stagePools: [1, 2], logStats: true, prometheus: false, logIntervalSeconds: 0 });
  });
  afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await metrics.shutdown();
  });

  const instrument = () => {
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: FakeOrchestrator, servingClass: FakeServing });
    return instrumentation;
  };

  it('restores the original methods exactly on disable, and never stacks wrappers', () => {
    const inst = instrument();
    assert.notEqual(FakeOrchestrator.prototype.addRequest, originals.addRequest);
    inst.enable();
    inst.disable();
    assert.equal(FakeOrchestrator.prototype.addRequest, originals.addRequest);
    assert.equal(FakeOrchestrator.prototype.cleanupRequest, originals.cleanupRequest);
    assert.equal(FakeOrchestrator.prototype.pollEngine, originals.pollEngine);
    assert.equal(FakeServing.prototype.generate, originals.generate);
    inst.enable();
    const wrapped = FakeOrchestrator.prototype.addRequest as unknown as { __original?: unknown };
    assert.equal(wrapped.__original, originals.addRequest, 'one layer of wrapping, around the original');
  });

  it('counts a streamed audio request end to end: success, e2e, tokens, TTFP, frames, RTF, underrun, gauges back to 0', async () => {
    instrument();
    const orchestrator = new FakeOrchestrator();
    assert.equal(await drain(new FakeServing(orchestrator), { requestId: 'a' }), 3);
    const text = await metrics.metricsText();
    assert.equal(value(text, SUCCESS('stop')), 1);
    assert.equal(value(text, 'vllm:omni_e2e_request_latency_s_count{model_name="m"}'), 1);
    assert.equal(value(text, 'vllm:omni_prompt_tokens_total{model_name="m"}'), 7);
    assert.equal(value(text, 'vllm:omni_generation_tokens_total{model_name="m"}'), 14);
    assert.equal(value(text, 'vllm:omni_audio_ttfp_s_count{model_name="m",replica="1",stage="1"}'), 1);
    assert.equal(value(text, 'vllm:omni_audio_frames_total{model_name="m",replica="1",stage="1"}'), 4800);
    assert.equal(value(text, 'vllm:omni_audio_duration_s_sum{model_name="m",replica="1",stage="1"}'), 0.2);
    assert.equal(value(text, 'vllm:omni_audio_rtf_sum{model_name="m",replica="1",stage="1"}'), 0.25);
    assert.equal(value(text, 'vllm:omni_audio_underrun_s_count{model_name="m",replica="1",stage="1"}'), 1);
    assert.equal(value(text, 'vllm:omni_audio_continuity_ok_total{model_name="m",replica="1",stage="1",threshold_ms="100"}'), 1);
    assert.equal(value(text, 'vllm:omni_num_requests_running{model_name="m"}'), 0);
    assert.equal(value(text, 'vllm:omni_num_requests_waiting{model_name="m"}'), 0);
    assert.deepEqual(instrumentation?.observer.trackedRequests, { admitted: 0, generating: 0 });
  });

  it('counts an abandoned stream and a failing stream as one abort each, with no e2e sample', async () => {
    instrument();
    const orchestrator = new FakeOrchestrator();
    const serving = new FakeServing(orchestrator);
    for await (const _ of serving.generate({ requestId: 'gone' })) break; // client disconnect after the first chunk
    await assert.rejects(drain(serving, { requestId: 'bad', fail: true }), /engine exploded/);
    const text = await metrics.metricsText();
    assert.equal(value(text, SUCCESS('abort')), 2);
    assert.equal(value(text, SUCCESS('stop')), undefined);
    assert.equal(value(text, 'vllm:omni_e2e_request_latency_s_count{model_name="m"}'), 0);
    assert.equal(value(text, 'vllm:omni_audio_underrun_s_count{model_name="m",replica="1",stage="1"}'), undefined, 'no stream finalize on abort');
    assert.equal(value(text, 'vllm:omni_num_requests_running{model_name="m"}'), 0);
    assert.equal(orchestrator.cleanups, 2);
  });

  it('keeps counts exact across enable → disable → re-enable on the same classes', async () => {
    const inst = instrument();
    const orchestrator = new FakeOrchestrator();
    const serving = new FakeServing(orchestrator);
    await drain(serving, { requestId: '1' });
    inst.disable();
    await drain(serving, { requestId: '2' });
    await drain(serving, { requestId: '3' });
    inst.enable();
    inst.enable();
    await drain(serving, { requestId: '4' });
    const text = await metrics.metricsText();
    assert.equal(value(text, SUCCESS('stop')), 2, 'requests 1 and 4 only');
    assert.equal(value(text, 'vllm:omni_prompt_tokens_total{model_name="m"}'), 14);
    assert.equal(value(text, 'vllm:omni_audio_ttfp_s_count{model_name="m",replica="1",stage="1"}'), 2);
  });

  it('returns what the original returns: same value, a promise of the same outcome, same iterator, host errors untouched', async () => {
    instrument();
    const orchestrator = new FakeOrchestrator();
    assert.equal(orchestrator.addRequest({ requestId: 'x' }), 'added:x');
    const promise = orchestrator.pollEngine(0, 0, 'x', 0);
    assert.ok(promise instanceof Promise);
    const original = originals.pollEngine.call(orchestrator, 0, 0, 'x', 0);
    assert.deepEqual(Object.keys(await promise), Object.keys(await original));
    const serving = new FakeServing(orchestrator);
    const stream = serving.generate({ requestId: 'y' });
    assert.equal(stream[Symbol.asyncIterator](), stream, 'the generator object itself');
    const first = stream.next();
    assert.equal((await first).done, false);
    await stream.return(undefined);
    const boom = new Error('host error');
    class Failing extends FakeOrchestrator {
      override addRequest(): string {
        throw boom;
      }
    }
    assert.throws(
      () => new Failing().addRequest(),
      (error: unknown) => error === boom,
    );
  });

  it('feeds per-replica scheduler and iteration stats from polled engine outputs', async () => {
    instrument();
    const orchestrator = new FakeOrchestrator();
    orchestrator.submitToStage({ requestId: 'q', stageId: 1, replicaId: 1, arrivalTime: Date.now() / 1000, promptTokenCount: 12, maxTokens: 8 });
    await orchestrator.pollEngine(1, 1, 'q', 0);
    await orchestrator.pollEngine(1, 1, 'q', 1);
    await new Promise((resolve) => setImmediate(resolve));
    const text = await metrics.metricsText();
    const labels = '{model_name="m",replica="1",stage="1"}';
    assert.equal(value(text, `vllm:kv_cache_usage_perc${labels}`), 0.61);
    assert.equal(value(text, `vllm:prompt_tokens_total${labels}`), 12);
    assert.equal(value(text, `vllm:generation_tokens_total${labels}`), 2);
    assert.equal(value(text, `vllm:request_success_total{finished_reason="stop",model_name="m",replica="1",stage="1"}`), 1);
    assert.equal(value(text, `vllm:request_queue_time_seconds_sum${labels}`), 0.25);
    assert.equal(value(text, `vllm:inter_token_latency_seconds_sum${labels}`), 1);
    assert.equal(value(text, `vllm:time_to_first_token_seconds_count${labels}`), 1);
  });

  it('records transfer hops with replicas from the sticky bindings, in seconds', async () => {
    instrument();
    const orchestrator = new FakeOrchestrator();
    orchestrator.submitToStage({ requestId: 't', stageId: 0, replicaId: 0, arrivalTime: 1, promptTokenCount: 1 });
    orchestrator.submitToStage({ requestId: 't', stageId: 1, replicaId: 1, arrivalTime: 1, promptTokenCount: 1 });
    orchestrator.sendToNextStage('t');
    orchestrator.receiveFromPreviousStage('t');
    const text = await metrics.metricsText();
    const edge = '{from_replica="0",from_stage="0",model_name="m",to_replica="1",to_stage="1"}';
    assert.equal(value(text, `vllm:omni_transfer_size_bytes_sum${edge}`), 2048);
    assert.equal(value(text, `vllm:omni_transfer_tx_s_sum${edge}`), 0.004);
    assert.equal(value(text, `vllm:omni_transfer_rx_s_sum${edge}`), 0.002);
    assert.equal(value(text, `vllm:omni_transfer_in_flight_s_sum${edge}`), 0.006);
  });

  it('a recorder that throws inside a hook leaves the host request and its response unchanged', async () => {
    const warnings: string[] = [];
    diag.setLogger(
      { error: () => {}, warn: (m: string) => warnings.push(m), info: () => {}, debug: () => {}, verbose: () => {} },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
    try {
      instrument();
      const explode = () => {
        throw new Error('recorder broke');
      };
      metrics.pipeline.requestSucceeded = explode;
      metrics.audio.observeAudioFirstPacket = explode;
      const orchestrator = new FakeOrchestrator();
      const serving = new FakeServing(orchestrator);
      const outputs = [];
      for await (const output of serving.generate({ requestId: 'z' })) outputs.push(output);
      const uninstrumented = [];
      for await (const output of originals.generate.call(new FakeServing(new FakeOrchestrator()), { requestId: 'z' })) uninstrumented.push(output);
      assert.deepEqual(outputs, uninstrumented);
      assert.equal(outputs.at(-1)?.finishReason, 'stop');
      await drain(serving, { requestId: 'z2' });
      assert.equal(warnings.filter((w) => w.includes('generate stream output')).length, 1, 'reported once, not per request');
    } finally {
      diag.disable();
    }
  });

  it('hosts can publish on diagnostics_channel instead of being patched, reaching the same recorders', async () => {
    instrumentation = new OmniInstrumentation({ metrics, diagnosticsChannels: true });
    const publish = <K extends keyof typeof OMNI_CHANNELS>(key: K, message: unknown) => diagnosticsChannel.channel(OMNI_CHANNELS[key]).publish(message);
    publish('addRequest', { requestId: 'c' });
    publish('generateStart', { requestId: 'c' });
    publish('generateOutput', {
      requestId: 'c',
      output: { requestId: 'c', stageId: 0, replicaId: 0, finalOutputType: 'text', finished: true, finishReason: 'length' },
    });
    publish('generateEnd', { requestId: 'c', outcome: 'completed' });
    publish('cleanupRequest', { requestId: 'c' });
    publish('transferSent', { requestId: 'c', fromStage: 0, toStage: 1, fromReplica: 0, toReplica: 1, sizeBytes: 10, txTimeMs: 1 });
    publish('generateStart', { requestId: 'x' });
    publish('abort', { requestId: 'x' });
    publish('generateEnd', { requestId: 'x', outcome: 'abandoned' });
    const text = await metrics.metricsText();
    assert.equal(value(text, SUCCESS('length')), 1);
    assert.equal(value(text, SUCCESS('abort')), 1);
    assert.equal(value(text, 'vllm:omni_requests_failed_total{model_name="m",reason="client_abort"}'), 1, 'the abort named the reason before the stream ended');
    assert.equal(value(text, 'vllm:omni_transfer_size_bytes_count{from_replica="0",from_stage="0",model_name="m",to_replica="1",to_stage="1"}'), 1);
    instrumentation.disable();
    publish('addRequest', { requestId: 'd' });
    publish('generateStart', { requestId: 'd' });
    publish('generateEnd', { requestId: 'd', outcome: 'abandoned' });
    assert.equal(value(await metrics.metricsText(), SUCCESS('abort')), 1, 'nothing recorded while disabled');
  });

  it('setMeterProvider() leaves the catalog families in the package\u2019s store: the handle and the new provider\u2019s readers both see them', async () => {
    const inst = instrument();
    const reader = new OmniPrometheusReader({ store: metrics.store });
    const provider = new MeterProvider({ readers: [reader] });
    inst.setMeterProvider(provider);
    await drain(new FakeServing(new FakeOrchestrator()), { requestId: 'p' });
    assert.equal(value(await reader.metricsText(), SUCCESS('stop')), 1);
    assert.equal(value(await metrics.metricsText(), SUCCESS('stop')), 1, 'the handle\u2019s own endpoint still serves them');
    await provider.shutdown();
  });
});
