import * as assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

import { DEFAULT_LOAD_OPTIONS, runLoad } from '../../examples/load';
import { planRequests } from '../../examples/load/load-plan';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';
import { pngSize } from '../../examples/pipeline/png-image';
import { ConnectionTracker } from '../../examples/server/connection-tracker';
import { httpGet } from '../support/http';

type DeltaWithAudio = ChatCompletionChunk.Choice.Delta & { audio?: { id: string; data: string; transcript: string } };

const QUIET = { info: () => undefined };

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function countResources(kind: string): number {
  return process.getActiveResourcesInfo().filter((r) => r === kind).length;
}

describe('examples: startReferencePipeline behind the official openai client', function () {
  this.timeout(30_000);
  let pipeline: ReferencePipeline;
  let client: OpenAI;
  let baselineServers: number;

  before(async () => {
    baselineServers = countResources('TCPServerWrap');
    pipeline = await startReferencePipeline({
      host: '127.0.0.1',
      port: 0,
      metricsPort: 0,
      replicas: [1, 2, 1],
      profile: 'fast',
      simulation: { code2wav: { malformedProbability: 0 } },
      logIntervalSeconds: 0,
      logSink: QUIET,
    });
    client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 10_000 });
  });

  after(async () => {
    await pipeline?.stop();
  });

  it('lists the model', async () => {
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      [pipeline.modelName],
    );
  });

  it('streams text and PCM16 audio for an audio request, ending with a finish reason', async () => {
    for (const voice of ['alloy', 'echo']) {
      const stream = await client.chat.completions.create({
        model: pipeline.modelName,
        messages: [{ role: 'user', content: 'Describe the sea in a few words.' }],
        stream: true,
        stream_options: { include_usage: true },
        modalities: ['text', 'audio'],
        audio: { voice, format: 'pcm16' },
        max_tokens: 16,
      });
      let text = '';
      let audioBytes = 0;
      let finishReason: string | null = null;
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        usage ??= chunk.usage;
        const choice = chunk.choices[0];
        if (!choice) continue;
        const delta = choice.delta as DeltaWithAudio;
        text += delta.content ?? '';
        if (delta.audio) audioBytes += Buffer.from(delta.audio.data, 'base64').length;
        finishReason = choice.finish_reason ?? finishReason;
      }
      assert.ok(text.length > 0, 'text deltas');
      assert.ok(audioBytes > 0 && audioBytes % 2 === 0, `PCM16 audio bytes: ${audioBytes}`);
      assert.ok(finishReason === 'stop' || finishReason === 'length', String(finishReason));
      assert.ok(usage && usage.prompt_tokens > 0 && usage.completion_tokens > 0 && usage.completion_tokens <= 16);
    }
  });

  it('answers non-streaming text requests with a chat.completion', async () => {
    for (const max_tokens of [8, 24]) {
      const completion = await client.chat.completions.create({
        model: pipeline.modelName,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'What time is it?' }] },
        ],
        max_tokens,
      });
      const choice = completion.choices[0];
      assert.equal(completion.object, 'chat.completion');
      assert.ok(choice.message.content && choice.message.content.length > 0);
      assert.equal(choice.message.audio, undefined);
      assert.ok(completion.usage && completion.usage.completion_tokens <= max_tokens);
      if (choice.finish_reason === 'length') assert.equal(completion.usage?.completion_tokens, max_tokens);
    }
  });

  it('answers a non-streaming audio request with base64 PCM16 and its transcript', async () => {
    const completion = await client.chat.completions.create({
      model: pipeline.modelName,
      messages: [{ role: 'user', content: 'Say hello.' }],
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'pcm16' },
      max_tokens: 12,
    });
    const audio = completion.choices[0].message.audio;
    assert.ok(audio, 'message.audio');
    assert.ok(Buffer.from(audio.data, 'base64').length > 0);
    assert.equal(audio.transcript, completion.choices[0].message.content);
  });

  it('maps bad input to 400 and unknown models and routes to 404, in OpenAI error shape', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: pipeline.modelName, messages: [{ role: 'user', content: 'x' }], max_tokens: 100_000 }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /maximum context length/.test(error.message),
    );
    await assert.rejects(client.chat.completions.create({ model: pipeline.modelName, messages: [] }), OpenAI.BadRequestError);
    await assert.rejects(
      client.chat.completions.create({
        model: pipeline.modelName,
        messages: [{ role: 'user', content: 'x' }],
        audio: { voice: 'alloy', format: 'mp3' },
        modalities: ['audio'],
      }),
      OpenAI.BadRequestError,
    );
    await assert.rejects(client.chat.completions.create({ model: 'other-model', messages: [{ role: 'user', content: 'x' }] }), OpenAI.NotFoundError);
    const notFound = await httpGet(`${pipeline.apiUrl}/v2/nothing`);
    assert.equal(notFound.status, 404);
    assert.equal((JSON.parse(notFound.body) as { error: { code: number } }).error.code, 404);
  });

  it('answers images.generate with base64 PNGs of the asked size and number, and refuses what it cannot draw', async () => {
    const response = await client.images.generate({ model: pipeline.modelName, prompt: 'A lighthouse at dusk', n: 2, size: '256x256' });
    const sizes = (response.data ?? []).map((image) => pngSize(Buffer.from(image.b64_json ?? '', 'base64')));
    assert.deepEqual(sizes, [
      { width: 256, height: 256 },
      { width: 256, height: 256 },
    ]);
    assert.equal(typeof response.created, 'number');
    await assert.rejects(
      client.images.generate({ model: pipeline.modelName, prompt: 'x', response_format: 'url' }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'response_format',
    );
    await assert.rejects(client.images.generate({ model: 'other-model', prompt: 'x' }), OpenAI.NotFoundError);
  });

  it('survives a client that aborts mid-stream, and drops the request at once', async () => {
    const controller = new AbortController();
    // 256 thinker tokens at ~1 ms per step: finishing would take far longer than the wait below.
    const stream = await client.chat.completions.create(
      { model: pipeline.modelName, messages: [{ role: 'user', content: 'Tell a long story.' }], stream: true, modalities: ['text', 'audio'], max_tokens: 256 },
      { signal: controller.signal },
    );
    let chunks = 0;
    for await (const _chunk of stream) {
      if (++chunks === 3) {
        controller.abort();
        break;
      }
    }
    assert.equal(pipeline.orchestrator.numLiveRequests, 1);
    await waitFor(() => pipeline.orchestrator.numLiveRequests === 0, 150);
    const after = await client.chat.completions.create({ model: pipeline.modelName, messages: [{ role: 'user', content: 'still there?' }], max_tokens: 4 });
    assert.ok(after.choices[0].message.content);
  });

  it('serves /metrics on the API port and on the metrics port', async () => {
    for (const url of [pipeline.apiMetricsUrl, pipeline.metricsUrl]) {
      const response = await httpGet(url);
      assert.equal(response.status, 200, url);
      assert.match(response.body, /^# HELP vllm:omni_num_requests_running /m);
    }
    assert.notEqual(pipeline.metricsUrl, pipeline.apiMetricsUrl);
  });

  it('names its stages on /metrics: one stage_info series per stage, for dashboards to join on stage', async () => {
    const response = await httpGet(pipeline.metricsUrl);
    const lines = response.body.split('\n').filter((line) => line.startsWith('vllm:omni_stage_info'));
    const model = pipeline.modelName;
    assert.deepEqual(lines, [
      `vllm:omni_stage_info{model_name="${model}",stage="0",stage_name="thinker"} 1.0`,
      `vllm:omni_stage_info{model_name="${model}",stage="1",stage_name="talker"} 1.0`,
      `vllm:omni_stage_info{model_name="${model}",stage="2",stage_name="code2wav"} 1.0`,
      `vllm:omni_stage_info{model_name="${model}",stage="3",stage_name="diffusion"} 1.0`,
    ]);
  });

  it('runs the load generator: a mixed run ends without errors', async () => {
    const options = { baseUrl: `${pipeline.apiUrl}/v1`, requests: 16, concurrency: 4, maxTokens: 16, disconnectRatio: 0.3, imageRatio: 0.25, seed: 11 };
    const summary = await runLoad(options);
    assert.equal(summary.outcomes.error + summary.outcomes.failed, 0, JSON.stringify(summary.errors));
    assert.equal(summary.outcomes.ok + summary.outcomes.aborted, 16);
    const planned = planRequests({ ...DEFAULT_LOAD_OPTIONS, ...options }).flatMap((p) => (p.image ? [p.image.n] : []));
    assert.ok(planned.length > 0, 'the seed plans image requests');
    assert.equal(summary.results.filter((r) => r.image && r.outcome === 'ok').length, planned.length);
    assert.equal(
      summary.images,
      planned.reduce((sum, n) => sum + n, 0),
    );
    assert.ok(summary.outcomes.aborted > 0, 'some streams disconnect');
    assert.ok(summary.e2e.count > 0 && summary.e2e.p50 <= summary.e2e.p99);
    assert.ok(summary.ttft.count > 0);
    assert.ok(summary.audioSeconds > 0);
    await waitFor(() => pipeline.orchestrator.numLiveRequests === 0);
  });

  it('stop() closes both servers and leaves no sockets or timers behind', async () => {
    // Counted, not timed: the end of the grace period is where a connection left open is destroyed.
    const closeAll = ConnectionTracker.prototype.closeAll;
    let forced = 0;
    ConnectionTracker.prototype.closeAll = function (this: ConnectionTracker) {
      forced++;
      closeAll.call(this);
    };
    try {
      await pipeline.stop();
    } finally {
      ConnectionTracker.prototype.closeAll = closeAll;
    }
    assert.equal(forced, 0, 'stop() had to wait for its grace period: some connection was left open');
    await pipeline.stop(); // idempotent
    // The client's side of the closed connections goes away a moment later.
    await waitFor(() => countResources('TCPSocketWrap') === 0, 1000).catch(() => undefined);
    const left = process.getActiveResourcesInfo();
    assert.equal(countResources('TCPServerWrap'), baselineServers, left.join(', '));
    assert.equal(left.filter((r) => r === 'TCPSocketWrap').length, 0, `sockets left: ${left.join(', ')}`);
    // Ref'd timers: only mocha's own for this test. The pipeline's timers are unref'd, so also check its loop is stopped.
    assert.ok(left.filter((r) => r === 'Timeout').length <= 1, `timers left: ${left.join(', ')}`);
    let polls = 0;
    const orchestrator = pipeline.orchestrator;
    const pollEngine = orchestrator.pollEngine.bind(orchestrator);
    Object.defineProperty(orchestrator, 'pollEngine', {
      value: (stageId: number, replicaId: number) => (polls++, pollEngine(stageId, replicaId)),
      configurable: true,
    });
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(polls, 0, 'the polling loop still runs after stop()');
    await assert.rejects(httpGet(`${pipeline.apiUrl}/v1/models`, {}, { timeoutMs: 1000 }));
    await assert.rejects(httpGet(pipeline.metricsUrl, {}, { timeoutMs: 1000 }));
  });
});

describe('examples: silent audio loss through the API', function () {
  this.timeout(20_000);

  it('a malformed codec input still answers 200 with empty audio', async () => {
    const pipeline = await startReferencePipeline({
      host: '127.0.0.1',
      port: 0,
      metricsPort: false,
      profile: 'fast',
      simulation: { code2wav: { malformedProbability: 1 } },
      imageReplicas: 0,
      logIntervalSeconds: 0,
      logSink: QUIET,
    });
    try {
      const client = new OpenAI({ baseURL: `${pipeline.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: pipeline.modelName,
        messages: [{ role: 'user', content: 'speak' }],
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'pcm16' },
        max_tokens: 8,
      });
      assert.ok(completion.choices[0].finish_reason);
      assert.equal(completion.choices[0].message.audio?.data, '');
      assert.equal(pipeline.metricsUrl, pipeline.apiMetricsUrl, 'without a metrics port, metrics are on the API port');
      await assert.rejects(client.images.generate({ model: pipeline.modelName, prompt: 'x' }), OpenAI.NotFoundError, 'imageReplicas 0: no images route');
    } finally {
      await pipeline.stop();
    }
  });
});
