import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';
import { httpGet } from '../support/http';
import { parseSamples } from '../support/exposition';

/**
 * The end-to-end check: the reference pipeline, instrumented only through
 * OmniInstrumentation, driven by the official openai client; then every claim is read back from
 * the Prometheus endpoint.
 */
describe('reference pipeline end to end: requests in, /metrics out', function () {
  this.timeout(60_000);
  let pipeline: ReferencePipeline;
  let client: OpenAI;
  const sent = { streamedAudio: 6, textOnly: 6, aborted: 3 };

  const scrape = async (): Promise<ReturnType<typeof parseSamples>> => parseSamples((await httpGet(pipeline.metricsUrl)).body);
  const total = (samples: ReturnType<typeof parseSamples>, name: string, match: Record<string, string> = {}): number =>
    samples
      .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);

  before(async () => {
    pipeline = await startReferencePipeline({
      host: '127.0.0.1',
      port: 0,
      metricsPort: 0,
      replicas: [1, 2, 1],
      profile: 'fast',
      logIntervalSeconds: 0,
      logSink: { info: () => undefined },
    });
    client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
    const messages = (i: number) => [{ role: 'user' as const, content: `Tell me about the number ${i} in a sentence.` }];

    const streamedAudio = Array.from({ length: sent.streamedAudio }, async (_, i) => {
      const stream = await client.chat.completions.create({
        model: pipeline.modelName,
        messages: messages(i),
        stream: true,
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'pcm16' },
        max_tokens: 16,
      });
      for await (const _ of stream) {
        // drain
      }
    });
    const textOnly = Array.from({ length: sent.textOnly }, (_, i) =>
      client.chat.completions.create({ model: pipeline.modelName, messages: messages(100 + i), max_tokens: 12 }),
    );
    const aborted = Array.from({ length: sent.aborted }, async (_, i) => {
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        {
          model: pipeline.modelName,
          messages: messages(200 + i),
          stream: true,
          modalities: ['text', 'audio'],
          audio: { voice: 'alloy', format: 'pcm16' },
          max_tokens: 64,
        },
        { signal: controller.signal },
      );
      try {
        for await (const _ of stream) {
          controller.abort(); // the client disconnects after its first chunk
        }
      } catch {
        // the aborted read rejects on the client side
      }
    });
    await Promise.all([...streamedAudio, ...textOnly, ...aborted]);

    // Idle: every request accounted for and the per-replica scheduler gauges refreshed (1 Hz).
    const deadline = Date.now() + 15_000;
    for (;;) {
      const samples = await scrape();
      const finished = total(samples, 'vllm:omni_requests_success_total');
      const busyReplicas = total(samples, 'vllm:num_requests_running') + total(samples, 'vllm:num_requests_waiting');
      if (finished === sent.streamedAudio + sent.textOnly + sent.aborted && busyReplicas === 0) break;
      if (Date.now() > deadline) throw new Error(`pipeline did not settle: finished=${finished} busy=${busyReplicas}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(() => pipeline?.stop());

  it('counts every request once: successes by reason plus one abort per disconnected client', async () => {
    const samples = await scrape();
    const all = sent.streamedAudio + sent.textOnly + sent.aborted;
    assert.equal(total(samples, 'vllm:omni_requests_success_total'), all);
    assert.equal(total(samples, 'vllm:omni_requests_success_total', { finished_reason: 'abort' }), sent.aborted);
    assert.equal(total(samples, 'vllm:omni_e2e_request_latency_s_count'), all - sent.aborted, 'no e2e sample for aborts');
  });

  it('has audio SLO samples on the code2wav replica: TTFP, RTF, underrun, frames', async () => {
    const samples = await scrape();
    const audioReplica = { stage: '2', replica: '0' };
    const rtf = total(samples, 'vllm:omni_audio_rtf_count', audioReplica);
    const silent = total(samples, 'vllm:omni_audio_skipped_requests_total', { ...audioReplica, reason: 'no_audio_data' });
    assert.equal(rtf + silent, sent.streamedAudio, 'each finished audio request: one RTF sample or one silent-loss count');
    assert.equal(total(samples, 'vllm:omni_audio_underrun_s_count', audioReplica), rtf, 'one underrun observation per stream with audio');
    assert.ok(total(samples, 'vllm:omni_audio_ttfp_s_count', audioReplica) >= rtf, 'TTFP for every stream that produced audio');
    assert.ok(total(samples, 'vllm:omni_audio_frames_total', audioReplica) > 0);
  });

  it('has transfer samples for every hop that carried traffic, and per-replica vllm:* families for every replica', async () => {
    const samples = await scrape();
    for (const family of ['vllm:omni_transfer_size_bytes_count', 'vllm:omni_transfer_tx_s_count', 'vllm:omni_transfer_rx_s_count', 'vllm:omni_transfer_in_flight_s_count']) {
      for (const [fromStage, fromReplica, toStage, toReplica] of [
        ['0', '0', '1', '0'],
        ['0', '0', '1', '1'],
        ['1', '0', '2', '0'],
        ['1', '1', '2', '0'],
      ]) {
        const edge = { from_stage: fromStage, from_replica: fromReplica, to_stage: toStage, to_replica: toReplica } as Record<string, string>;
        assert.ok(total(samples, family, edge) > 0, `${family} on ${fromStage}/${fromReplica}→${toStage}/${toReplica}`);
      }
    }
    for (const [stage, replica] of [['0', '0'], ['1', '0'], ['1', '1'], ['2', '0']]) {
      const labels = { stage, replica } as Record<string, string>;
      for (const family of ['vllm:e2e_request_latency_seconds_count', 'vllm:time_to_first_token_seconds_count', 'vllm:request_queue_time_seconds_count', 'vllm:generation_tokens_total']) {
        assert.ok(total(samples, family, labels) > 0, `${family} for stage ${stage} replica ${replica}`);
      }
      assert.equal(samples.filter((s) => s.name === 'vllm:kv_cache_usage_perc' && s.labels.stage === stage && s.labels.replica === replica).length, 1);
    }
    assert.ok(samples.every((s) => s.labels.engine === undefined), 'no engine label anywhere');
  });

  it('returns the gauges to 0 when idle', async () => {
    const samples = await scrape();
    assert.equal(total(samples, 'vllm:omni_num_requests_running'), 0);
    assert.equal(total(samples, 'vllm:omni_num_requests_waiting'), 0);
    assert.equal(total(samples, 'vllm:num_requests_running'), 0);
    assert.equal(total(samples, 'vllm:omni_stage_inflight_requests'), 0);
  });
});
