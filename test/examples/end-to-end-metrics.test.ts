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
  const sent = { streamedAudio: 6, textOnly: 6, aborted: 3, images: 6, imageDisconnected: 1 };
  /** What the images API answered, as the client saw it. */
  const imageOutcomes = { ok: 0, serverError: 0, imagesReceived: 0 };

  const allSent = (): number => sent.streamedAudio + sent.textOnly + sent.aborted + sent.images + sent.imageDisconnected;
  const scrape = async (): Promise<ReturnType<typeof parseSamples>> => parseSamples((await httpGet(pipeline.metricsUrl)).body);
  const total = (samples: ReturnType<typeof parseSamples>, name: string, match: Record<string, string> = {}): number =>
    samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

  before(async () => {
    pipeline = await startReferencePipeline({
      host: '127.0.0.1',
      port: 0,
      metricsPort: 0,
      replicas: [1, 2, 1],
      imageReplicas: 1,
      profile: 'fast',
      // Half the image requests fail on the image stage (seeded: the same ones on every run).
      simulation: { diffusion: { errorProbability: 0.5 } },
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
    // One after another, so the one image replica draws its failures in the same order every run.
    const images = (async () => {
      for (let i = 0; i < sent.images; i++) {
        try {
          const response = await client.images.generate({ model: pipeline.modelName, prompt: `A lighthouse, variant ${i}`, n: 1 + (i % 2), size: '256x256' });
          imageOutcomes.ok += 1;
          imageOutcomes.imagesReceived += response.data?.length ?? 0;
        } catch (error) {
          if (!(error instanceof OpenAI.APIError) || error.status !== 500) throw error;
          imageOutcomes.serverError += 1;
        }
      }
    })();
    await Promise.all([...streamedAudio, ...textOnly, ...aborted, images]);
    // Alone in the pipeline, a client gives up on a long image (200 denoising steps) once it is admitted.
    const controller = new AbortController();
    const body = { model: pipeline.modelName, prompt: 'A very detailed map', size: '256x256' as const, num_inference_steps: 200 };
    const imageDisconnected = assert.rejects(client.images.generate(body, { signal: controller.signal }), OpenAI.APIUserAbortError);
    while (pipeline.orchestrator.numLiveRequests === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    controller.abort();
    await imageDisconnected;

    // Idle: every request accounted for and the per-replica scheduler gauges refreshed (1 Hz).
    const deadline = Date.now() + 15_000;
    for (;;) {
      const samples = await scrape();
      const finished = total(samples, 'vllm:omni_requests_success_total');
      const busyReplicas = total(samples, 'vllm:num_requests_running') + total(samples, 'vllm:num_requests_waiting');
      if (finished === allSent() && busyReplicas === 0) break;
      if (Date.now() > deadline) throw new Error(`pipeline did not settle: finished=${finished} busy=${busyReplicas}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(() => pipeline?.stop());

  it('counts every request once: successes by reason plus one abort per failed request', async () => {
    const samples = await scrape();
    const failed = sent.aborted + sent.imageDisconnected + imageOutcomes.serverError;
    assert.equal(total(samples, 'vllm:omni_requests_success_total'), allSent());
    assert.equal(total(samples, 'vllm:omni_requests_success_total', { finished_reason: 'abort' }), failed);
    assert.equal(total(samples, 'vllm:omni_e2e_request_latency_s_count'), allSent() - failed, 'no e2e sample for failed requests');
  });

  it('gives each failed request one reason: client disconnects and image-stage errors; success + failed = sent', async () => {
    assert.equal(imageOutcomes.ok + imageOutcomes.serverError, sent.images);
    assert.ok(imageOutcomes.ok > 0 && imageOutcomes.serverError > 0, `the seeded run has both outcomes: ${JSON.stringify(imageOutcomes)}`);
    const samples = await scrape();
    const failedBy = (reason: string): number => total(samples, 'vllm:omni_requests_failed_total', { reason });
    assert.equal(failedBy('client_disconnect'), sent.aborted + sent.imageDisconnected);
    assert.equal(failedBy('stage_error'), imageOutcomes.serverError);
    assert.equal(failedBy('client_abort'), 0);
    assert.equal(failedBy('unknown'), 0);
    const succeeded = total(samples, 'vllm:omni_requests_success_total') - total(samples, 'vllm:omni_requests_success_total', { finished_reason: 'abort' });
    assert.equal(succeeded + total(samples, 'vllm:omni_requests_failed_total'), allSent());
  });

  it('has image and diffusion samples on the image stage only, one per finished image request', async () => {
    const samples = await scrape();
    const imageStage = { stage: '3', replica: '0' };
    const finishedImages = imageOutcomes.ok;
    assert.equal(total(samples, 'vllm:omni_image_count_total'), imageOutcomes.imagesReceived);
    assert.equal(total(samples, 'vllm:omni_num_inference_steps_count'), finishedImages);
    assert.equal(total(samples, 'vllm:omni_num_inference_steps_sum'), finishedImages * 8, 'the fast profile denoises in 8 steps');
    assert.equal(total(samples, 'vllm:omni_image_pixels_count'), finishedImages);
    assert.equal(total(samples, 'vllm:omni_image_pixels_sum'), imageOutcomes.imagesReceived * 256 * 256);
    for (const family of [
      'vllm:omni_image_ttfp_s_count',
      'vllm:omni_diffusion_exec_s_count',
      'vllm:omni_diffusion_exec_per_step_s_count',
      'vllm:omni_diffusion_preprocess_s_count',
      'vllm:omni_diffusion_postprocess_s_count',
      'vllm:omni_vae_decode_s_count',
      'vllm:omni_diffusion_forward_s_count',
      'vllm:omni_diffusion_kv_load_s_count',
    ]) {
      assert.equal(total(samples, family, imageStage), finishedImages, family);
      assert.equal(total(samples, family), finishedImages, `${family}: no other stage or replica`);
    }
    assert.equal(total(samples, 'vllm:omni_denoise_step_latency_s_count', imageStage), finishedImages);
    assert.equal(total(samples, 'vllm:omni_stage_gen_time_s_count', { stage: '3', stage_type: 'diffusion' }), finishedImages);
    assert.equal(total(samples, 'vllm:omni_stage_gen_time_s_count', { stage_type: 'diffusion' }), finishedImages, 'only the image stage is a diffusion stage');
    assert.equal(total(samples, 'vllm:omni_stage_in_queue_s_count', { stage: '3' }), finishedImages);
    assert.equal(total(samples, 'vllm:omni_stage_in_queue_s_count'), finishedImages, 'only the diffusion scheduler reports its queue wait');
    const peak = samples.filter((s) => s.name === 'vllm:omni_peak_memory_mb');
    assert.deepEqual(
      peak.map((s) => s.labels.stage),
      ['3'],
    );
    assert.ok(peak[0].value > 2048, 'the model memory plus the images');
    assert.deepEqual(
      samples
        .filter((s) => s.name === 'vllm:omni_stage_waiting_requests')
        .map((s) => [s.labels.stage, s.value])
        .sort(),
      [
        ['0', 0],
        ['1', 0],
        ['2', 0],
        ['3', 0],
      ].sort(),
    );
    assert.ok(
      samples.every((s) => !(s.name.startsWith('vllm:') && !s.name.startsWith('vllm:omni_') && s.labels.stage === '3')),
      'no vLLM engine series for the image stage',
    );
  });

  it('has a queue wait per finished request and a KV wait per talker hand-off, on the connector the pipeline names', async () => {
    const samples = await scrape();
    // Recorded when a request finishes, from its arrival at `generate` to its first stage submit.
    const finished = total(samples, 'vllm:omni_requests_success_total') - total(samples, 'vllm:omni_requests_success_total', { finished_reason: 'abort' });
    assert.equal(total(samples, 'vllm:omni_request_queue_wait_s_count'), finished);
    const kvWaits = samples.filter((s) => s.name === 'vllm:omni_kv_wait_s_count');
    assert.deepEqual(
      kvWaits.map((s) => s.labels.connector_type),
      ['SharedMemoryConnector'],
    );
    const talkerAdmissions = total(samples, 'vllm:request_queue_time_seconds_count', { stage: '1' });
    assert.equal(kvWaits[0].value, talkerAdmissions, 'one KV wait per request the talker finished');
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
    for (const family of [
      'vllm:omni_transfer_size_bytes_count',
      'vllm:omni_transfer_tx_s_count',
      'vllm:omni_transfer_rx_s_count',
      'vllm:omni_transfer_in_flight_s_count',
    ]) {
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
    for (const [stage, replica] of [
      ['0', '0'],
      ['1', '0'],
      ['1', '1'],
      ['2', '0'],
    ]) {
      const labels = { stage, replica } as Record<string, string>;
      for (const family of [
        'vllm:e2e_request_latency_seconds_count',
        'vllm:time_to_first_token_seconds_count',
        'vllm:request_queue_time_seconds_count',
        'vllm:generation_tokens_total',
      ]) {
        assert.ok(total(samples, family, labels) > 0, `${family} for stage ${stage} replica ${replica}`);
      }
      assert.equal(samples.filter((s) => s.name === 'vllm:kv_cache_usage_perc' && s.labels.stage === stage && s.labels.replica === replica).length, 1);
    }
    assert.ok(
      samples.every((s) => s.labels.engine === undefined),
      'no engine label anywhere',
    );
  });

  it('returns the gauges to 0 when idle', async () => {
    const samples = await scrape();
    assert.equal(total(samples, 'vllm:omni_num_requests_running'), 0);
    assert.equal(total(samples, 'vllm:omni_num_requests_waiting'), 0);
    assert.equal(total(samples, 'vllm:num_requests_running'), 0);
    assert.equal(total(samples, 'vllm:omni_stage_inflight_requests'), 0);
  });
});
