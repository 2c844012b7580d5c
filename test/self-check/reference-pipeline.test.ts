import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startReferencePipeline, type ReferencePipeline } from '../../examples/reference-pipeline';

/** The reference pipeline (thinker → talker → code2wav, thinker → image stage), instrumented only by the hooks: nothing is silent. */
describe('self-check on the reference pipeline', function () {
  this.timeout(60_000);
  let pipeline: ReferencePipeline | undefined;

  after(async () => {
    await pipeline?.stop();
  });

  /** The reference pipeline on free ports with no periodic log, its shutdown lines collected in `lines`, and a client of its API. */
  async function startQuiet(lines: string[]): Promise<{ started: ReferencePipeline; client: OpenAI }> {
    const started = await startReferencePipeline({
      host: '127.0.0.1',
      port: 0,
      metricsPort: false,
      profile: 'fast',
      logIntervalSeconds: 0,
      logSink: { info: (line) => lines.push(line) },
    });
    return { started, client: new OpenAI({ baseURL: `${started.apiUrl}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 20_000 }) };
  }

  it('stays quiet when streamed audio, text and image requests flow, and says so at shutdown', async () => {
    const lines: string[] = [];
    const { started, client } = await startQuiet(lines);
    pipeline = started;
    for (let i = 0; i < 3; i++) {
      const stream = await client.chat.completions.create({
        model: pipeline.modelName,
        messages: [{ role: 'user', content: `Tell me about ${i}.` }],
        stream: true,
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'pcm16' },
        max_tokens: 16,
      });
      for await (const _ of stream) {
        // drain
      }
      await client.chat.completions.create({ model: pipeline.modelName, messages: [{ role: 'user', content: `Text ${i}.` }], max_tokens: 8 });
      // A failed image (the simulator's error probability) is a request too; only the families matter here.
      await client.images.generate({ model: pipeline.modelName, prompt: `image ${i}`, n: 1, size: '64x64' } as never).catch(() => undefined);
    }
    const report = pipeline.metrics.selfCheck();
    assert.deepEqual(
      {
        requestsObserved: report.requestsObserved,
        requestsFlowed: report.requestsFlowed,
        hooksAttached: report.hooksAttached,
        silent: report.silent,
        unpolledReplicas: report.unpolledReplicas,
      },
      { requestsObserved: 9, requestsFlowed: true, hooksAttached: true, silent: [], unpolledReplicas: [] },
    );
    await pipeline.stop();
    pipeline = undefined;
    assert.deepEqual(lines, ['omni-otel-metrics self-check: 9 requests observed; every expected family received data']);
  });

  it('after text-only requests, which never leave the thinker, stays quiet about transfers and the stages they never reached', async () => {
    const lines: string[] = [];
    const { started, client } = await startQuiet(lines);
    pipeline = started;
    for (let i = 0; i < 3; i++) {
      await client.chat.completions.create({ model: pipeline.modelName, messages: [{ role: 'user', content: `Text ${i}.` }], max_tokens: 8 });
    }
    const report = pipeline.metrics.selfCheck();
    assert.deepEqual(
      { requestsObserved: report.requestsObserved, silent: report.silent, unpolledReplicas: report.unpolledReplicas },
      { requestsObserved: 3, silent: [], unpolledReplicas: [] },
    );
    await pipeline.stop();
    pipeline = undefined;
    assert.deepEqual(lines, ['omni-otel-metrics self-check: 3 requests observed; every expected family received data']);
  });
});
