import assert from 'node:assert/strict';
import fc from 'fast-check';
import { registerOmniMetrics } from '../../register';
import { MAX_STAGE_NAMES, resolveStageNames } from '../../views/catalog/stage-names';

const base = { modelName: 'm', prometheus: false, selfCheck: false, processMetrics: false, logIntervalSeconds: 0 } as const;

async function stageInfoLines(options: { stageNames?: readonly string[]; logStats?: boolean }): Promise<string[]> {
  const handle = await registerOmniMetrics({ ...base, stagePools: [1, 2], ...options, prometheus: { port: 0 } });
  try {
    return (await handle.metricsText()).split('\n').filter((line) => line.includes('vllm:omni_stage_info'));
  } finally {
    await handle.shutdown();
  }
}

describe('stage names: vllm:omni_stage_info', () => {
  it('serves one series per named stage with value 1, logStats off or on', async () => {
    const expected = [
      '# HELP vllm:omni_stage_info Name of each pipeline stage (value 1); join on stage to show names.',
      '# TYPE vllm:omni_stage_info gauge',
      'vllm:omni_stage_info{model_name="m",stage="0",stage_name="thinker"} 1.0',
      'vllm:omni_stage_info{model_name="m",stage="1",stage_name="talker"} 1.0',
      'vllm:omni_stage_info{model_name="m",stage="2",stage_name="image"} 1.0',
    ];
    assert.deepEqual(await stageInfoLines({ stageNames: ['thinker', 'talker', 'image'] }), expected);
    assert.deepEqual(await stageInfoLines({ stageNames: ['thinker', 'talker', 'image'], logStats: true }), expected);
  });

  it('is not registered without stageNames (no HELP, no TYPE)', async () => {
    assert.deepEqual(await stageInfoLines({}), []);
    assert.deepEqual(await stageInfoLines({ stageNames: [] }), []);
  });

  it('refuses a bad stageNames at registration, naming the entry', async () => {
    await assert.rejects(registerOmniMetrics({ ...base, stageNames: 'thinker' as never }), /stageNames must be an array/);
    await assert.rejects(registerOmniMetrics({ ...base, stageNames: ['thinker', ''] }), /stageNames\[1\] must be a non-empty string/);
    await assert.rejects(registerOmniMetrics({ ...base, stageNames: ['thinker', 3 as never] }), /stageNames\[1\] must be a non-empty string/);
    const holed = ['thinker'];
    holed[2] = 'code2wav';
    await assert.rejects(registerOmniMetrics({ ...base, stageNames: holed }), /stageNames\[1\] must be a non-empty string \(the name of stage 1\)/);
    await assert.rejects(registerOmniMetrics({ ...base, stageNames: Array(MAX_STAGE_NAMES + 1).fill('s') }), /stageNames has 257 entries; at most 256/);
  });

  it('any list of non-empty strings up to the bound is accepted as is; anything else is refused, never half-taken', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1 }), { maxLength: 20 }), (names) => {
        assert.deepEqual(resolveStageNames(names, 0), names);
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { minLength: 1, maxLength: 8 }), (values) => {
        const valid = values.every((value) => typeof value === 'string' && value !== '');
        if (valid) assert.deepEqual(resolveStageNames(values, 0), values);
        else assert.throws(() => resolveStageNames(values, 0), /stageNames\[\d+\] must be a non-empty string/);
      }),
    );
  });
});
