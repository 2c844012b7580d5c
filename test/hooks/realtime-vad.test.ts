import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { OMNI_CHANNELS } from '../../instrumentation/hooks/channels';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { RealtimeSessionRequest, ServerVadBatch } from '../../instrumentation/pipeline/host-contract';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { seriesOf } from '../support/exposition';
import { assertHistogram, assertSample } from '../recorders/harness';
import { quietHandle } from '../support/quiet-handle';

const M = { model_name: 'm' };
const ACTIVE = 'vllm:omni_realtime_vad_active_sessions';
const INFERENCE = 'vllm:omni_realtime_vad_inference_latency_s';
const ENDPOINT = 'vllm:omni_realtime_vad_endpoint_delay_s';
const ERRORS = 'vllm:omni_realtime_vad_errors_total';

/** An overflow the host reports as a rejection with a reason, as vLLM-Omni's realtime input does. */
class InputOverflow extends Error {
  readonly reason = 'input_overflow';
}

/** The serving layer's realtime half: sessions and appended PCM16 batches run through a server VAD. */
class RealtimeServing {
  opened: string[] = [];
  closed: string[] = [];
  openRealtimeSession(session: RealtimeSessionRequest): string {
    this.opened.push(session.sessionId);
    return session.sessionId;
  }
  closeRealtimeSession(sessionId: string): void {
    this.closed.push(sessionId);
    if (sessionId === 'broken') throw new Error('socket already closed');
  }
  appendRealtimeAudio(sessionId: string, batch: ServerVadBatch | Error | Promise<ServerVadBatch>): ServerVadBatch | Promise<ServerVadBatch> {
    void sessionId;
    if (batch instanceof Error) throw batch;
    return batch;
  }
}

const batch = (inferenceMs: number, ...endpointDelaysMs: Array<number | null>): ServerVadBatch => ({
  inferenceMs,
  frames: [{ decision: {} }, ...endpointDelaysMs.map((endpointDelayMs) => ({ decision: { speechStopped: endpointDelayMs !== null, endpointDelayMs } }))],
});

describe('hooks: realtime server-side VAD (vllm-omni metrics/realtime.py)', () => {
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation;
  beforeEach(async () => {
    metrics = await quietHandle({ stagePools: [1], logStats: true });
    instrumentation = new OmniInstrumentation({ metrics, servingClass: RealtimeServing });
  });
  afterEach(async () => {
    instrumentation.disable();
    await metrics.shutdown();
  });

  it('the gauge and both histograms exist from startup at zero (RealtimeVADMetrics.__init__ binds them); errors appear with their first reason', async () => {
    const text = await metrics.metricsText();
    assertSample(text, ACTIVE, M, 0);
    assertHistogram(text, INFERENCE, M, SECONDS_FAST_BUCKETS, []);
    assertHistogram(text, ENDPOINT, M, SECONDS_FAST_BUCKETS, []);
    assert.deepEqual(seriesOf(text, ERRORS), []);
  });

  it('counts sessions with server_vad from open to close, once each, whatever the host repeats', async () => {
    const serving = new RealtimeServing();
    assert.equal(serving.openRealtimeSession({ sessionId: 'a', turnDetection: { type: 'server_vad' } }), 'a', "the host's value comes back");
    serving.openRealtimeSession({ sessionId: 'a', turnDetection: { type: 'server_vad' } });
    serving.openRealtimeSession({ sessionId: 'client-turns', turnDetection: null });
    serving.openRealtimeSession({ sessionId: 'no-field' });
    serving.openRealtimeSession({ sessionId: 'b', turnDetection: { type: 'server_vad' } });
    assertSample(await metrics.metricsText(), ACTIVE, M, 2);
    serving.closeRealtimeSession('client-turns');
    serving.closeRealtimeSession('a');
    serving.closeRealtimeSession('a');
    assertSample(await metrics.metricsText(), ACTIVE, M, 1);
    serving.openRealtimeSession({ sessionId: 'broken', turnDetection: { type: 'server_vad' } });
    assert.throws(() => serving.closeRealtimeSession('broken'), /socket already closed/, "the host's error is rethrown as it was");
    assertSample(await metrics.metricsText(), ACTIVE, M, 1);
    assert.deepEqual(serving.closed, ['client-turns', 'a', 'a', 'broken']);
  });

  it('a session the host closes while its open still runs is not counted as active', async () => {
    // A host that refuses a session by closing it from inside its own open (a full server, a bad codec).
    class RefusingServing extends RealtimeServing {
      override openRealtimeSession(session: RealtimeSessionRequest): string {
        super.openRealtimeSession(session);
        if (session.sessionId.startsWith('refused')) this.closeRealtimeSession(session.sessionId);
        return session.sessionId;
      }
    }
    instrumentation.disable();
    instrumentation = new OmniInstrumentation({ metrics, servingClass: RefusingServing });
    const serving = new RefusingServing();
    assert.equal(serving.openRealtimeSession({ sessionId: 'refused-1', turnDetection: { type: 'server_vad' } }), 'refused-1');
    serving.openRealtimeSession({ sessionId: 'kept', turnDetection: { type: 'server_vad' } });
    assert.deepEqual(serving.closed, ['refused-1']);
    assertSample(await metrics.metricsText(), ACTIVE, M, 1);
    serving.closeRealtimeSession('kept');
    assertSample(await metrics.metricsText(), ACTIVE, M, 0);
  });

  it('records each batch’s inference time and each committed endpoint’s delay, milliseconds to seconds (`latency_ms / 1000`)', async () => {
    const serving = new RealtimeServing();
    serving.openRealtimeSession({ sessionId: 'a', turnDetection: { type: 'server_vad' } });
    serving.appendRealtimeAudio('a', batch(12.5));
    serving.appendRealtimeAudio('a', batch(4, 512, null));
    const resolved = await serving.appendRealtimeAudio('a', Promise.resolve(batch(250, 1500)));
    assert.equal(resolved.inferenceMs, 250, 'the resolved batch is the host’s');
    const text = await metrics.metricsText();
    assertHistogram(text, INFERENCE, M, SECONDS_FAST_BUCKETS, [0.0125, 0.004, 0.25]);
    assertHistogram(text, ENDPOINT, M, SECONDS_FAST_BUCKETS, [0.512, 1.5]);
  });

  // vllm-omni entrypoints/duplex/session_runner.py: the batch is timed inside `if server_vad_config is not None:`,
  // after `pipeline = self._server_vad_pipelines.get(session.session_id)` found one:
  // `self._realtime_vad_metrics.observe_inference(vad_batch.inference_ms)`.
  it('session_runner.py observes only sessions with a server-VAD pipeline: an append to a session opened without `server_vad`, never opened, or closed records nothing', async () => {
    const serving = new RealtimeServing();
    serving.openRealtimeSession({ sessionId: 'client-turns', turnDetection: null });
    serving.openRealtimeSession({ sessionId: 'vad', turnDetection: { type: 'server_vad' } });
    serving.appendRealtimeAudio('client-turns', batch(7, 300));
    serving.appendRealtimeAudio('never-opened', batch(9, 400));
    serving.appendRealtimeAudio('vad', batch(20, 640));
    serving.closeRealtimeSession('vad');
    await serving.appendRealtimeAudio('vad', Promise.resolve(batch(30, 700)));
    diagnosticsChannel.channel(OMNI_CHANNELS.realtimeAudioAppended).publish({ sessionId: 'client-turns', batch: batch(11, 500) });
    const text = await metrics.metricsText();
    assertHistogram(text, INFERENCE, M, SECONDS_FAST_BUCKETS, [0.02]);
    assertHistogram(text, ENDPOINT, M, SECONDS_FAST_BUCKETS, [0.64]);
  });

  // vllm-omni entrypoints/duplex/session_runner.py, per frame:
  // `if decision.speech_stopped:` … `if decision.endpoint_delay_ms is not None:`
  // `self._realtime_vad_metrics.observe_endpoint_delay(decision.endpoint_delay_ms)`.
  it('session_runner.py observes an endpoint delay only inside `if decision.speech_stopped:`', async () => {
    const serving = new RealtimeServing();
    serving.openRealtimeSession({ sessionId: 'a', turnDetection: { type: 'server_vad' } });
    serving.appendRealtimeAudio('a', {
      inferenceMs: 3,
      frames: [
        { decision: { speechStarted: true, endpointDelayMs: 100 } },
        { decision: { speechStopped: false, endpointDelayMs: 200 } },
        { decision: { endpointDelayMs: 250 } },
        { decision: { speechStopped: true, endpointDelayMs: 480 } },
        { decision: { speechStopped: true, endpointDelayMs: null } },
        { decision: { speechStopped: true } },
      ],
    });
    const text = await metrics.metricsText();
    assertHistogram(text, INFERENCE, M, SECONDS_FAST_BUCKETS, [0.003]);
    assertHistogram(text, ENDPOINT, M, SECONDS_FAST_BUCKETS, [0.48]);
  });

  it('an append that throws or rejects counts one error by the reason it carries (else `error`), and reaches the host unchanged', async () => {
    const serving = new RealtimeServing();
    const overflow = new InputOverflow('input buffer full');
    assert.throws(
      () => serving.appendRealtimeAudio('a', overflow),
      (error) => error === overflow,
    );
    await assert.rejects(serving.appendRealtimeAudio('a', Promise.reject(new InputOverflow('again'))) as Promise<ServerVadBatch>, /again/);
    assert.throws(() => serving.appendRealtimeAudio('a', new Error('onnx session failed')), /onnx session failed/);
    const text = await metrics.metricsText();
    assert.deepEqual(
      seriesOf(text, ERRORS).map((labels) => labels.reason),
      ['input_overflow', 'error'],
    );
    assertSample(text, ERRORS, { ...M, reason: 'input_overflow' }, 2);
    assertSample(text, ERRORS, { ...M, reason: 'error' }, 1);
    assertHistogram(text, INFERENCE, M, SECONDS_FAST_BUCKETS, []);
  });

  it('the same events published on the diagnostics channels reach the same families', async () => {
    diagnosticsChannel.channel(OMNI_CHANNELS.realtimeSessionOpened).publish({ sessionId: 'ch', turnDetection: { type: 'server_vad' } });
    diagnosticsChannel.channel(OMNI_CHANNELS.realtimeAudioAppended).publish({ sessionId: 'ch', batch: batch(8, 300) });
    diagnosticsChannel.channel(OMNI_CHANNELS.realtimeVadError).publish({ sessionId: 'ch', reason: 'input_overflow' });
    let text = await metrics.metricsText();
    assertSample(text, ACTIVE, M, 1);
    assertHistogram(text, INFERENCE, M, SECONDS_FAST_BUCKETS, [0.008]);
    assertHistogram(text, ENDPOINT, M, SECONDS_FAST_BUCKETS, [0.3]);
    assertSample(text, ERRORS, { ...M, reason: 'input_overflow' }, 1);
    diagnosticsChannel.channel(OMNI_CHANNELS.realtimeSessionClosed).publish({ sessionId: 'ch' });
    text = await metrics.metricsText();
    assertSample(text, ACTIVE, M, 0);
  });

  it('disable() forgets the open sessions: the gauge returns to 0', async () => {
    const serving = new RealtimeServing();
    serving.openRealtimeSession({ sessionId: 'x', turnDetection: { type: 'server_vad' } });
    assertSample(await metrics.metricsText(), ACTIVE, M, 1);
    instrumentation.disable();
    assertSample(await metrics.metricsText(), ACTIVE, M, 0);
    serving.closeRealtimeSession('x');
    assertSample(await metrics.metricsText(), ACTIVE, M, 0);
  });

  it('with logStats off nothing is recorded (`if self._log_stats`), the zero series stay', async () => {
    const off = await registerOmniMetrics({ selfCheck: false, modelName: 'off', stagePools: [1], logStats: false, prometheus: false, exporters: [] });
    try {
      off.realtimeVad.sessionStarted();
      off.realtimeVad.observeInference(5);
      off.realtimeVad.observeEndpointDelay(500);
      off.realtimeVad.error('input_overflow');
      const text = await off.metricsText();
      assertSample(text, ACTIVE, { model_name: 'off' }, 0);
      assertHistogram(text, INFERENCE, { model_name: 'off' }, SECONDS_FAST_BUCKETS, []);
      assertHistogram(text, ENDPOINT, { model_name: 'off' }, SECONDS_FAST_BUCKETS, []);
      assert.deepEqual(seriesOf(text, ERRORS), []);
    } finally {
      await off.shutdown();
    }
  });
});
