import assert from 'node:assert/strict';
import { registerOmniMetrics } from '../../register';
import { OmniOptionError } from '../../views/option-checks';
import { vllmHistogramBuckets } from '../../views/vllm-histogram-buckets';

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
