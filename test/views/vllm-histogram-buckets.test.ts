import assert from 'node:assert/strict';
import fc from 'fast-check';
import { resolveOmniSettings } from '../../settings';
import { registerOmniMetrics } from '../../register';
import { OmniOptionError } from '../../views/common/option-checks';
import { vllmHistogramBuckets } from '../../views/catalog/vllm-histogram-buckets';

const fail = (problem: string): never => {
  throw new Error(problem);
};

describe("vLLM's --custom-histogram-buckets JSON", () => {
  it('a family key overrides every histogram of the family (docs example, moved over unchanged)', () => {
    const overrides = vllmHistogramBuckets('{"request_latency": [0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0]}', fail);
    assert.deepEqual(Object.keys(overrides), [
      'vllm:e2e_request_latency_seconds',
      'vllm:request_queue_time_seconds',
      'vllm:request_inference_time_seconds',
      'vllm:request_prefill_time_seconds',
      'vllm:request_decode_time_seconds',
    ]);
    assert.deepEqual(overrides['vllm:request_decode_time_seconds'], [0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 30]);
    assert.deepEqual(vllmHistogramBuckets({ request_num_preemptions: [1, 3] }, fail), { 'vllm:request_num_preemptions': [1, 3] });
  });

  // The cases of vLLM's tests/config/test_observability.py, with its messages.
  const refused: Array<[unknown, RegExp]> = [
    [{ bogus: [1.0, 2.0] }, /unknown bucket family 'bogus'/],
    [{ request_latency: [] }, /must not be empty/],
    [{ request_latency: [0.0, 1.0] }, /must be finite and greater than 0/],
    [{ request_latency: [-1.0, 1.0] }, /must be finite and greater than 0/],
    [{ request_latency: [1.0, 1.0] }, /must be strictly increasing/],
    [{ request_latency: [2.0, 1.0] }, /must be strictly increasing/],
    [{ request_latency: [true, 2.0] }, /must be a number, not a boolean/],
    [{ request_latency: [1.0, 2.0], request_tokens: [16, 8] }, /request_tokens.*must be strictly increasing/],
    ['{not json', /not valid JSON/],
  ];
  for (const [value, message] of refused) {
    it(`refuses ${JSON.stringify(value)}`, () => assert.throws(() => vllmHistogramBuckets(value, fail), message));
  }

  it('refuses keys named like Object.prototype members, and a __proto__ literal, as unknown bucket families (an option error)', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
      for (const given of [`{"${key}": [1, 2]}`, JSON.parse(`{"${key}": [1, 2]}`) as unknown]) {
        assert.throws(
          () => resolveOmniSettings({ modelName: 'm', customHistogramBuckets: given as string }, {}),
          (error: unknown) =>
            error instanceof OmniOptionError &&
            error.option === 'customHistogramBuckets' &&
            error.message.startsWith(`omni-otel-metrics: custom_histogram_buckets: unknown bucket family '${key}'; known families: [`),
        );
      }
    }
    // A literal's `__proto__` sets the prototype: no key at all, so the mapping is refused rather than taken as empty.
    assert.throws(
      () => resolveOmniSettings({ modelName: 'm', customHistogramBuckets: { __proto__: [1, 2] } as unknown as Record<string, number[]> }, {}),
      /^OmniOptionError: omni-otel-metrics: custom_histogram_buckets: must be a JSON mapping from bucket family to a list of bounds$/,
    );
  });

  it('any mapping of any keys to any values is taken or refused with an option error, never a raw TypeError (property)', () => {
    const keys = fc.oneof(fc.constantFrom('constructor', 'toString', '__proto__', 'valueOf', 'request_latency', 'iteration_tokens'), fc.string());
    const values = fc.oneof(fc.array(fc.double({ min: 0.001, max: 100, noNaN: true })), fc.anything());
    fc.assert(
      fc.property(fc.dictionary(keys, values), fc.boolean(), (mapping, asJson) => {
        const given = asJson ? JSON.stringify(mapping) : mapping;
        try {
          resolveOmniSettings({ modelName: 'm', customHistogramBuckets: given as string }, {});
        } catch (error) {
          assert.ok(error instanceof OmniOptionError, String(error));
          assert.equal(error.option, 'customHistogramBuckets');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reaches the exposition through registerOmniMetrics, and a bad one is an OmniOptionError', async () => {
    const handle = await registerOmniMetrics({
      modelName: 'm',
      stagePools: [1],
      logStats: true,
      prometheus: false,
      logIntervalSeconds: 0,
      customHistogramBuckets: '{"time_to_first_token": [0.5, 2]}',
    });
    try {
      assert.deepEqual(handle.catalog.byName('vllm:time_to_first_token_seconds')?.buckets, [0.5, 2]);
    } finally {
      await handle.shutdown();
    }
    await assert.rejects(
      registerOmniMetrics({ modelName: 'm', stagePools: [1], prometheus: false, customHistogramBuckets: { bogus: [1] } }),
      (error: unknown) => error instanceof OmniOptionError && error.option === 'customHistogramBuckets',
    );
  });
});
