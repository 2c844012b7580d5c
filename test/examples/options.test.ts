import * as assert from 'node:assert/strict';

import { parseLoadArgs, DEFAULT_LOAD_OPTIONS } from '../../examples/load';
import { planRequests } from '../../examples/load/load-plan';
import { summarizeLatencies } from '../../examples/load/latency-summary';
import fc from 'fast-check';
import { parseImageReplicas, parsePort, parseReplicas, parseSeed } from '../../examples/pipeline-options';
import { parseChatCompletionRequest } from '../../examples/server/chat-request';
import { HttpError } from '../../examples/server/http-error';
import { parseImageGenerationRequest } from '../../examples/server/image-request';

/** The status a request body gets: 200 when it parses, else the HttpError's. */
function statusOf(parse: (body: unknown) => unknown, body: unknown): number {
  try {
    parse(body);
    return 200;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return error.status;
  }
}

describe('examples: option parsing', () => {
  it('REPLICAS: three positive counts, with an error that shows the expected form', () => {
    assert.deepEqual(parseReplicas('1,2,1'), [1, 2, 1]);
    assert.deepEqual(parseReplicas(' 2, 3 ,1 '), [2, 3, 1]);
    for (const bad of ['1,2', '1,2,1,1', '1,x,1', '0,1,1', '1.5,1,1', '', '1,-1,1']) {
      assert.throws(() => parseReplicas(bad), /REPLICAS must be 3 comma-separated positive integers|replicas must be 3 integers/, bad);
    }
    assert.throws(() => parseReplicas('1,65,1'), /from 1 to 64/);
  });

  it('IMAGE_REPLICAS: 0 (no image stage) to 64', () => {
    assert.equal(parseImageReplicas('0'), 0);
    assert.equal(parseImageReplicas(' 3 '), 3);
    for (const bad of ['-1', '1.5', 'x', '']) assert.throws(() => parseImageReplicas(bad), /IMAGE_REPLICAS must be a non-negative integer/, bad);
    assert.throws(() => parseImageReplicas('65'), /imageReplicas must be an integer from 0 to 64; got 65/);
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
    const options = parseLoadArgs([
      '--requests',
      '20',
      '--concurrency=4',
      '--base-url',
      'http://h:1/v1/',
      '--audio-ratio',
      '0',
      '--image-ratio=0.25',
      '--seed',
      '9',
    ]);
    assert.deepEqual(options, { ...DEFAULT_LOAD_OPTIONS, requests: 20, concurrency: 4, baseUrl: 'http://h:1/v1', audioRatio: 0, imageRatio: 0.25, seed: 9 });
    assert.throws(() => parseLoadArgs(['--image-ratio', '2']), /--image-ratio must be a number from 0 to 1/);
    assert.throws(() => parseLoadArgs(['--requests', '0']), /--requests must be an integer >= 1/);
    assert.throws(() => parseLoadArgs(['--stream-ratio', '1.5']), /from 0 to 1/);
    assert.throws(() => parseLoadArgs(['--nope']), /unknown argument "--nope"\nusage:/);
    assert.throws(() => parseLoadArgs(['--requests']), /needs a value/);
  });

  it('the load plan is reproducible from its seed and follows the ratios', () => {
    const options = { ...DEFAULT_LOAD_OPTIONS, requests: 400, seed: 3 };
    assert.deepEqual(planRequests(options), planRequests(options));
    const plan = planRequests(options);
    const chat = plan.filter((p) => p.image === undefined);
    const share = (pick: (p: (typeof plan)[number]) => boolean, of = chat) => of.filter(pick).length / of.length;
    assert.ok(Math.abs(share((p) => p.image !== undefined, plan) - 0.1) < 0.04);
    assert.ok(Math.abs(share((p) => p.stream) - 0.7) < 0.08);
    assert.ok(Math.abs(share((p) => p.audio) - 0.5) < 0.08);
    assert.ok(
      plan.every((p) => p.disconnectAfterChunks === undefined || p.stream),
      'only streams disconnect',
    );
    assert.ok(
      plan.every((p) => p.image === undefined || (!p.stream && !p.audio && p.image.n >= 1 && p.image.n <= 2)),
      'image requests neither stream nor speak',
    );
    const withoutImages = planRequests({ ...options, imageRatio: 0 });
    assert.deepEqual(
      plan.map((p) => p.image === undefined && [p.prompt, p.maxTokens, p.stream, p.audio]),
      withoutImages.map((p, i) => plan[i].image === undefined && [p.prompt, p.maxTokens, p.stream, p.audio]),
      'the image ratio changes which requests are images and nothing else',
    );
    assert.ok(plan.every((p) => p.maxTokens >= 32 && p.maxTokens <= 128));
  });

  it('latency percentiles are nearest-rank', () => {
    const values = Array.from({ length: 100 }, (_, i) => (i + 1) / 100);
    assert.deepEqual(summarizeLatencies(values), { count: 100, p50: 0.5, p90: 0.9, p99: 0.99, max: 1 });
    assert.equal(summarizeLatencies([]).count, 0);
  });

  it('chat request validation: defaults, supported fields, and OpenAI-style refusals', () => {
    const params = parseChatCompletionRequest({ messages: [{ role: 'user', content: 'hi' }] }, 'm');
    assert.deepEqual(params, {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
      includeUsage: false,
      maxTokens: undefined,
      modalities: ['text'],
      voice: 'alloy',
    });
    const audio = parseChatCompletionRequest(
      {
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }],
        modalities: ['text', 'audio'],
        audio: { voice: { id: 'v1' }, format: 'pcm16' },
        max_completion_tokens: 5,
        stream: true,
      },
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

  it('image request validation: defaults, supported fields, and OpenAI-style refusals', () => {
    assert.deepEqual(parseImageGenerationRequest({ prompt: 'a fox' }, 'm'), {
      model: 'm',
      prompt: 'a fox',
      n: 1,
      width: 1024,
      height: 1024,
      numInferenceSteps: undefined,
    });
    assert.deepEqual(
      parseImageGenerationRequest(
        { model: 'm', prompt: 'a fox', n: 3, size: '512x256', response_format: 'b64_json', output_format: 'png', num_inference_steps: 30 },
        'm',
      ),
      { model: 'm', prompt: 'a fox', n: 3, width: 512, height: 256, numInferenceSteps: 30 },
    );
    const status = (body: unknown): number => statusOf((b) => parseImageGenerationRequest(b, 'm'), body);
    const refused: Array<[unknown, number, string | null]> = [
      [[], 400, null],
      [{ prompt: '  ' }, 400, 'prompt'],
      [{ prompt: 'x', n: 0 }, 400, 'n'],
      [{ prompt: 'x', n: 11 }, 400, 'n'],
      [{ prompt: 'x', size: '1024' }, 400, 'size'],
      [{ prompt: 'x', size: '32x32' }, 400, 'size'],
      [{ prompt: 'x', size: '4096x64' }, 400, 'size'],
      [{ prompt: 'x', response_format: 'url' }, 400, 'response_format'],
      [{ prompt: 'x', output_format: 'webp' }, 400, 'output_format'],
      [{ prompt: 'x', num_inference_steps: 0.5 }, 400, 'num_inference_steps'],
      [{ prompt: 'x', model: 'other' }, 404, 'model'],
    ];
    for (const [body, expected, param] of refused) {
      assert.equal(status(body), expected, JSON.stringify(body));
      if (param !== null)
        assert.throws(
          () => parseImageGenerationRequest(body, 'm'),
          (error: HttpError) => error.param === param,
          JSON.stringify(body),
        );
    }
  });

  it('property: any JSON body either parses into a request the image stage can serve or is refused with a 4xx, never a crash', () => {
    const field = fc.oneof(
      fc.constant(undefined),
      fc.integer({ min: -5, max: 300 }),
      fc.double(),
      fc.string(),
      fc.constantFrom('256x256', '64x2048', '2049x64', 'b64_json', 'url', 'png', 'm'),
    );
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          model: field,
          prompt: fc.oneof(field, fc.string({ minLength: 1 })),
          n: field,
          size: field,
          response_format: field,
          output_format: field,
          num_inference_steps: field,
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(body, (value) => {
        try {
          const params = parseImageGenerationRequest(value, 'm');
          assert.ok(Number.isInteger(params.n) && params.n >= 1 && params.n <= 10);
          assert.ok(params.width >= 64 && params.width <= 2048 && params.height >= 64 && params.height <= 2048);
          assert.ok(params.numInferenceSteps === undefined || (Number.isInteger(params.numInferenceSteps) && params.numInferenceSteps >= 1));
          assert.ok(params.prompt.trim() !== '');
        } catch (error) {
          assert.ok(error instanceof HttpError && (error.status === 400 || error.status === 404), String(error));
        }
      }),
      { numRuns: 500 },
    );
  });
});
