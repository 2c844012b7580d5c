import assert from 'node:assert/strict';
import { FINISH_REASONS, PromptTokenStats } from '../../instrumentation/stats/types';
import { parseSamples, seriesOf } from '../support/exposition';
import { register } from './harness';

const POOLS = [1, 2, 1];
const ENGINES = [
  ['0', '0'],
  ['1', '0'],
  ['1', '1'],
  ['2', '0'],
];

describe('eager series: an idle scrape right after registration (logStats on)', () => {
  it('every per-engine series vLLM creates at engine start exists for every (stage, replica), at zero, in vLLM\u2019s creation order', async () => {
    const handle = await register({ stagePools: POOLS, cacheConfig: { block_size: 16 } });
    const text = await handle.metricsText();
    await handle.shutdown();
    const engineFamilies = handle.catalog.families.filter((family) => family.engineLabel && !family.info);
    assert.ok(engineFamilies.length >= 30);
    const engineLabels = ENGINES.map(([stage, replica]) => ({ model_name: 'm', stage, replica }));
    for (const family of engineFamilies) {
      const sampleName = family.type === 'histogram' ? `${family.name}_count` : family.name;
      const series = seriesOf(text, sampleName);
      switch (family.key) {
        case 'upstream.requestSuccess':
          // One child per finish reason, every engine within a reason, as vLLM's dictionary of dictionaries creates them.
          assert.deepEqual(
            series,
            FINISH_REASONS.flatMap((reason) => engineLabels.map((labels) => ({ ...labels, finished_reason: reason }))),
          );
          break;
        case 'upstream.promptTokensBySource':
          assert.deepEqual(
            series,
            PromptTokenStats.ALL_SOURCES.flatMap((source) => engineLabels.map((labels) => ({ ...labels, source }))),
          );
          break;
        case 'upstream.numRequestsWaitingByReason':
          assert.deepEqual(
            series,
            ['capacity', 'deferred'].flatMap((reason) => engineLabels.map((labels) => ({ ...labels, reason }))),
          );
          break;
        case 'upstream.engineSleepState':
          assert.deepEqual(
            series,
            ['awake', 'weights_offloaded', 'discard_all'].flatMap((state) => engineLabels.map((labels) => ({ ...labels, sleep_state: state }))),
          );
          break;
        default:
          assert.deepEqual(series, engineLabels, `${family.name}: one series per engine, in engine order`);
      }
    }
    const values = parseSamples(text).filter((sample) => sample.labels.stage !== undefined && !sample.name.endsWith('_created'));
    for (const sample of values) {
      const expected =
        sample.name === 'vllm:engine_sleep_state' && sample.labels.sleep_state === 'awake' ? 1 : sample.name === 'vllm:cache_config_info' ? 1 : 0;
      assert.equal(sample.value, expected, `${sample.name}${JSON.stringify(sample.labels)}`);
    }
    // Counters and histograms also carry their creation time.
    assert.equal(seriesOf(text, 'vllm:prompt_tokens_created').length, ENGINES.length);
    assert.equal(seriesOf(text, 'vllm:e2e_request_latency_seconds_created').length, ENGINES.length);
  });

  it('pipeline families with an extra label stay lazy; the model-level ones are eager', async () => {
    const handle = await register({ stagePools: POOLS });
    const text = await handle.metricsText();
    await handle.shutdown();
    assert.deepEqual(seriesOf(text, 'vllm:omni_requests_success_total'), []);
    assert.deepEqual(seriesOf(text, 'vllm:omni_audio_continuity_ok_total'), []);
    assert.deepEqual(seriesOf(text, 'vllm:omni_transfer_size_bytes_count'), []);
    assert.deepEqual(seriesOf(text, 'vllm:omni_num_requests_running'), [{ model_name: 'm' }]);
    assert.deepEqual(seriesOf(text, 'vllm:omni_e2e_request_latency_s_count'), [{ model_name: 'm' }]);
  });
});
