import assert from 'node:assert/strict';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';
import { SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { seriesOf } from '../support/exposition';
import { assertHistogram, assertSample } from '../recorders/harness';

const QUIET = { info: () => undefined };

/** `seconds` of 16 kHz mono PCM16, little-endian: a loud 440 Hz tone, or silence. */
function pcm16(seconds: number, tone: boolean): Buffer {
  const samples = Math.round(seconds * 16_000);
  const bytes = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) bytes.writeInt16LE(tone ? Math.round(16_000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)) : 0, i * 2);
  return bytes;
}

describe('examples: the reference pipeline’s realtime audio path feeds the server-VAD families', function () {
  this.timeout(20_000);
  let pipeline: ReferencePipeline;

  before(async () => {
    pipeline = await startReferencePipeline({ host: '127.0.0.1', port: 0, metricsPort: false, profile: 'fast', logIntervalSeconds: 0, logSink: QUIET });
  });
  after(async () => {
    await pipeline?.stop();
  });

  const post = async (path: string, body: string | Buffer, type: string): Promise<{ status: number; json: Record<string, unknown> }> => {
    const response = await fetch(`${pipeline.apiUrl}${path}`, { method: 'POST', headers: { 'Content-Type': type }, body });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it('a spoken turn, a client-detected session and an overflow: sessions, inference time, endpoint delay and errors', async () => {
    const vad = await post('/v1/realtime/sessions', JSON.stringify({ turn_detection: { type: 'server_vad' } }), 'application/json');
    const manual = await post('/v1/realtime/sessions', JSON.stringify({ turn_detection: null }), 'application/json');
    assert.equal(vad.status, 200);
    const id = vad.json.id as string;
    const manualId = manual.json.id as string;
    const model = { model_name: pipeline.modelName };
    assertSample(await pipeline.metrics.metricsText(), 'vllm:omni_realtime_vad_active_sessions', model, 1);

    const speech = await post(`/v1/realtime/sessions/${id}/audio`, pcm16(0.5, true), 'application/octet-stream');
    const silence = await post(`/v1/realtime/sessions/${id}/audio`, pcm16(0.6, false), 'application/octet-stream');
    assert.deepEqual(speech.json.events, [{ type: 'input_audio_buffer.speech_started' }]);
    // 16 silent frames of 512 samples at 16 kHz end the turn: 8192 samples, 512 ms.
    assert.deepEqual(silence.json.events, [{ type: 'input_audio_buffer.speech_stopped', endpoint_delay_ms: 512 }]);
    await post(`/v1/realtime/sessions/${manualId}/audio`, pcm16(0.5, true), 'application/octet-stream');
    const overflow = await post(`/v1/realtime/sessions/${id}/audio`, pcm16(12, false), 'application/octet-stream');
    assert.equal(overflow.status, 400);

    let text = await pipeline.metrics.metricsText();
    assert.equal(text.match(/^vllm:omni_realtime_vad_inference_latency_s_count\{[^}]*\} (\S+)$/m)?.[1], '2.0', 'two batches ran the server VAD');
    assertHistogram(text, 'vllm:omni_realtime_vad_endpoint_delay_s', model, SECONDS_FAST_BUCKETS, [0.512]);
    assert.deepEqual(seriesOf(text, 'vllm:omni_realtime_vad_errors_total'), [{ ...model, reason: 'input_overflow' }]);
    assertSample(text, 'vllm:omni_realtime_vad_errors_total', { ...model, reason: 'input_overflow' }, 1);

    for (const session of [id, manualId]) assert.equal((await fetch(`${pipeline.apiUrl}/v1/realtime/sessions/${session}`, { method: 'DELETE' })).status, 200);
    text = await pipeline.metrics.metricsText();
    assertSample(text, 'vllm:omni_realtime_vad_active_sessions', model, 0);
  });
});
