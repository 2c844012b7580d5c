import * as assert from 'node:assert/strict';

import { parseLoadArgs, DEFAULT_LOAD_OPTIONS } from '../../examples/load';
import { planRequests } from '../../examples/load/load-plan';
import { summarizeLatencies } from '../../examples/load/latency-summary';
import { parsePort, parseReplicas, parseSeed } from '../../examples/pipeline-options';
import { parseChatCompletionRequest } from '../../examples/server/chat-request';
import { HttpError } from '../../examples/server/http-error';

describe('examples: option parsing', () => {
  it('REPLICAS: three positive counts, with an error that shows the expected form', () => {
    assert.deepEqual(parseReplicas('1,2,1'), [1, 2, 1]);
    assert.deepEqual(parseReplicas(' 2, 3 ,1 '), [2, 3, 1]);
    for (const bad of ['1,2', '1,2,1,1', '1,x,1', '0,1,1', '1.5,1,1', '', '1,-1,1']) {
      assert.throws(() => parseReplicas(bad), /REPLICAS must be 3 comma-separated positive integers|replicas must be 3 integers/, bad);
    }
    assert.throws(() => parseReplicas('1,65,1'), /from 1 to 64/);
  });

  it('PORT / METRICS_PORT / SEED', () => {
    assert.equal(parsePort('PORT', '0'), 0);
    assert.equal(parsePort('PORT', '8000'), 8000);
    assert.throws(() => parsePort('METRICS_PORT', '70000'), /METRICS_PORT must be an integer from 0 to 65535/);
    assert.throws(() => parsePort('PORT', 'abc'), /PORT/);
    assert.equal(parseSeed('-3'), -3);
    assert.throws(() => parseSeed('1.5'), /SEED/);
  });

  it('load arguments: both flag forms, defaults, and clear errors', () => {
    const options = parseLoadArgs(['--requests', '20', '--concurrency=4', '--base-url', 'http://h:1/v1/', '--audio-ratio', '0', '--seed', '9']);
    assert.deepEqual(options, { ...DEFAULT_LOAD_OPTIONS, requests: 20, concurrency: 4, baseUrl: 'http://h:1/v1', audioRatio: 0, seed: 9 });
    assert.throws(() => parseLoadArgs(['--requests', '0']), /--requests must be an integer >= 1/);
    assert.throws(() => parseLoadArgs(['--stream-ratio', '1.5']), /from 0 to 1/);
    assert.throws(() => parseLoadArgs(['--nope']), /unknown argument "--nope"\nusage:/);
    assert.throws(() => parseLoadArgs(['--requests']), /needs a value/);
  });

  it('the load plan is reproducible from its seed and follows the ratios', () => {
    const options = { ...DEFAULT_LOAD_OPTIONS, requests: 400, seed: 3 };
    assert.deepEqual(planRequests(options), planRequests(options));
    const plan = planRequests(options);
    const share = (pick: (p: (typeof plan)[number]) => boolean) => plan.filter(pick).length / plan.length;
    assert.ok(Math.abs(share((p) => p.stream) - 0.7) < 0.08);
    assert.ok(Math.abs(share((p) => p.audio) - 0.5) < 0.08);
    assert.ok(plan.every((p) => p.disconnectAfterChunks === undefined || p.stream), 'only streams disconnect');
    assert.ok(plan.every((p) => p.maxTokens >= 32 && p.maxTokens <= 128));
  });

  it('latency percentiles are nearest-rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => (i + 1) / 100);
    assert.deepEqual(summarizeLatencies(values), { count: 100, p50: 0.5, p90: 0.9, p99: 0.99, max: 1 });
    assert.equal(summarizeLatencies([]).count, 0);
  });

  it('chat request validation: defaults, supported fields, and OpenAI-style refusals', () => {
    const params = parseChatCompletionRequest({ messages: [{ role: 'user', content: 'hi' }] }, 'm');
    assert.deepEqual(params, { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: false, includeUsage: false, maxTokens: undefined, modalities: ['text'], voice: 'alloy' });
    const audio = parseChatCompletionRequest(
      { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }], modalities: ['text', 'audio'], audio: { voice: { id: 'v1' }, format: 'pcm16' }, max_completion_tokens: 5, stream: true },
      'm',
    );
    assert.deepEqual([audio.modalities, audio.voice, audio.maxTokens, audio.stream], [['text', 'audio'], 'v1', 5, true]);
    const status = (body: unknown): number => {
      try {
        parseChatCompletionRequest(body, 'm');
        return 200;
      } catch (error) {
        return (error as HttpError).status;
      }
    };
    assert.equal(status('not an object'), 400);
    assert.equal(status({ messages: [] }), 400);
    assert.equal(status({ messages: [{ role: 'robot', content: 'x' }] }), 400);
    assert.equal(status({ messages: [{ role: 'user', content: [{ type: 'image_url' }] }] }), 400);
    assert.equal(status({ messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }), 400);
    assert.equal(status({ messages: [{ role: 'user', content: 'x' }], n: 2 }), 400);
    assert.equal(status({ messages: [{ role: 'user', content: 'x' }], modalities: ['video'] }), 400);
    assert.equal(status({ messages: [{ role: 'user', content: 'x' }], audio: { voice: 'alloy', format: 'wav' } }), 400);
    assert.equal(status({ model: 'other', messages: [{ role: 'user', content: 'x' }] }), 404);
  });
});
