import assert from 'node:assert/strict';
import type { OmniMetricsHandle } from '../../register';
import { OmniRequestCounter, waitingRequests } from '../../instrumentation/recorders/pipeline-metrics';
import { SECONDS_BUCKETS } from '../../views/catalog/buckets';
import { PIPELINE_FAMILIES } from '../../views/catalog/pipeline-families';
import { declaredFamilyNames, parseSamples, sampleValue, seriesOf } from '../support/exposition';
import { assertHistogram, assertSample, register } from './harness';

const M = { model_name: 'm' };
const E2E = 'vllm:omni_e2e_request_latency_s';
const SUCCESS = 'vllm:omni_requests_success_total';

describe('recorders: OmniPrometheusMetrics (pipeline families)', () => {
  describe('with logStats on', () => {
    let handle: OmniMetricsHandle;
    beforeEach(async () => {
      handle = await register({ stagePools: [1] });
    });
    afterEach(() => handle.shutdown());

    it('exposes the eager running / waiting / e2e series with zero values before any record', async () => {
      const text = await handle.metricsText();
      assertSample(text, 'vllm:omni_num_requests_running', M, 0);
      assertSample(text, 'vllm:omni_num_requests_waiting', M, 0);
      assertHistogram(text, E2E, M, SECONDS_BUCKETS, []);
      // requests_success is not pre-bound: no series until the first completion.
      assert.deepEqual(seriesOf(text, SUCCESS), []);
    });

    it('requestSucceeded counts by reason and observes e2e; requestFailed counts abort without an e2e sample', async () => {
      const e2eValues = [0.04, 0.3, 7.5];
      handle.pipeline.requestSucceeded(e2eValues[0] as number, 'stop');
      handle.pipeline.requestSucceeded(e2eValues[1] as number, 'length');
      handle.pipeline.requestSucceeded(e2eValues[2] as number); // default reason: stop
      handle.pipeline.requestFailed();
      const text = await handle.metricsText();

      assertSample(text, SUCCESS, { ...M, finished_reason: 'stop' }, 2);
      assertSample(text, SUCCESS, { ...M, finished_reason: 'length' }, 1);
      assertSample(text, SUCCESS, { ...M, finished_reason: 'abort' }, 1);
      assert.equal(seriesOf(text, SUCCESS).length, 3, 'exactly the three reasons used');

      // 3 successes + 1 failure: e2e _count stays 3.
      const e2e = assertHistogram(text, E2E, M, SECONDS_BUCKETS, e2eValues);
      assert.equal(e2e.count, 3);
      assert.deepEqual(e2e.buckets.slice(0, 8), [
        ['0.05', 1],
        ['0.1', 1],
        ['0.25', 1],
        ['0.5', 2],
        ['1.0', 2],
        ['2.0', 2],
        ['5.0', 2],
        ['10.0', 3],
      ]);
      assert.equal(e2e.sum, 0.04 + 0.3 + 7.5);
    });

    it('a failure alone creates the abort series and leaves e2e at its zero series', async () => {
      handle.pipeline.requestFailed();
      handle.pipeline.requestFailed();
      const text = await handle.metricsText();
      assertSample(text, SUCCESS, { ...M, finished_reason: 'abort' }, 2);
      assertHistogram(text, E2E, M, SECONDS_BUCKETS, []);
    });

    it('an empty finished_reason falls back to stop', async () => {
      handle.pipeline.requestSucceeded(1.0, '');
      const text = await handle.metricsText();
      assert.deepEqual(seriesOf(text, SUCCESS), [{ ...M, finished_reason: 'stop' }]);
      assertSample(text, SUCCESS, { ...M, finished_reason: 'stop' }, 1);
    });

    it('running / waiting gauges keep the last value set', async () => {
      handle.pipeline.setRunning(4);
      handle.pipeline.setWaiting(9);
      handle.pipeline.setRunning(2);
      handle.pipeline.setWaiting(waitingRequests(5, 2));
      const text = await handle.metricsText();
      assertSample(text, 'vllm:omni_num_requests_running', M, 2);
      assertSample(text, 'vllm:omni_num_requests_waiting', M, 3);
      assert.equal(seriesOf(text, 'vllm:omni_num_requests_running').length, 1, 'the eager series is the written one');
    });

    it('observeTokens adds positive counts only', async () => {
      handle.pipeline.observeTokens(10, 0);
      handle.pipeline.observeTokens(0, 5);
      handle.pipeline.observeTokens(-3, -1);
      handle.pipeline.observeTokens(7, 3);
      const text = await handle.metricsText();
      assertSample(text, 'vllm:omni_prompt_tokens_total', M, 10 + 7);
      assertSample(text, 'vllm:omni_generation_tokens_total', M, 5 + 3);
    });

    it('observeTokens with only non-positive counts leaves the token series (bound at construction, as upstream) at zero', async () => {
      handle.pipeline.observeTokens(0, 0);
      handle.pipeline.observeTokens(-1, -20);
      const text = await handle.metricsText();
      assertSample(text, 'vllm:omni_prompt_tokens_total', M, 0);
      assertSample(text, 'vllm:omni_generation_tokens_total', M, 0);
    });
  });

  describe('helpers', () => {
    it('waitingRequests is tracked minus running, clamped at 0', () => {
      assert.equal(waitingRequests(5, 3), 2);
      assert.equal(waitingRequests(4, 4), 0);
      assert.equal(waitingRequests(3, 5), 0);
      assert.equal(waitingRequests(0, 0), 0);
    });

    it('OmniRequestCounter counts up and never goes below 0', () => {
      const counter = new OmniRequestCounter();
      assert.equal(counter.value, 0);
      counter.decrement();
      assert.equal(counter.value, 0);
      counter.increment();
      counter.increment();
      counter.increment();
      assert.equal(counter.value, 3);
      counter.decrement();
      assert.equal(counter.value, 2);
      counter.decrement();
      counter.decrement();
      counter.decrement();
      counter.decrement();
      assert.equal(counter.value, 0);
      counter.increment();
      assert.equal(counter.value, 1);
    });
  });

  describe('with the vllm_omni: prefix', () => {
    it('records under the newer names', async () => {
      const handle = await register({ stagePools: [1], prefix: 'vllm_omni:' });
      try {
        handle.pipeline.requestSucceeded(0.5, 'stop');
        handle.pipeline.observeTokens(3, 4);
        const text = await handle.metricsText();
        assertSample(text, 'vllm_omni:requests_success_total', { ...M, finished_reason: 'stop' }, 1);
        assertSample(text, 'vllm_omni:prompt_tokens_total', M, 3);
        assertSample(text, 'vllm_omni:generation_tokens_total', M, 4);
        assertHistogram(text, 'vllm_omni:e2e_request_latency_s', M, SECONDS_BUCKETS, [0.5]);
        assert.equal(parseSamples(text).filter((s) => s.name.startsWith('vllm:omni_')).length, 0);
      } finally {
        await handle.shutdown();
      }
    });
  });

  describe('with logStats off', () => {
    let handle: OmniMetricsHandle;
    before(async () => {
      handle = await register({ stagePools: [1, 2], logStats: false });
    });
    after(() => handle.shutdown());

    it('every recorder method is a no-op: only the eager zero series are exposed', async () => {
      const { pipeline, audio, transfer, stageService, diffusion } = handle;
      stageService.observeStageFinished({
        stageId: 1,
        stageType: 'diffusion',
        stageGenTimeMs: 900,
        outputUnitType: 'image',
        outputUnitCount: 1,
        imagePixels: 4096,
        numInferenceSteps: 20,
        peakMemoryMb: 512,
        schedulerQueueWaitS: 0,
      });
      stageService.observeQueueWait(0.1);
      stageService.setReplicaWaiting(1, 0, 4);
      stageService.incRequestsFailed('stage_error');
      stageService.observeKvWait('SharedMemoryConnector', 0.02);
      diffusion.observeImageTtfp(1, 0, 0.5);
      diffusion.observeDiffusionFinalize({
        stageId: 1,
        replicaId: 0,
        breakdown: { diffusionEngineExecTimeS: 0.8, forwardTimeS: 0.7 },
        numInferenceSteps: 20,
        outputUnitType: 'image',
      });
      pipeline.setRunning(3);
      pipeline.setWaiting(2);
      pipeline.requestSucceeded(1.5, 'stop');
      pipeline.requestFailed();
      pipeline.observeTokens(10, 20);
      audio.observeAudioTtfp(1, 0, 0.2);
      audio.observeAudioDuration(1, 0, 2);
      audio.observeAudioRtf(1, 0, 0.5);
      audio.incAudioFrames(1, 0, 480);
      audio.observeAudioUnderrun(1, 0, 0.3);
      audio.incAudioContinuityOk(1, 0, 100);
      audio.incAudioSkipped(1, 0, 'no_audio_data');
      audio.observeModalityAtFinalize({
        outputType: 'audio',
        stageId: 1,
        replicaId: 0,
        stageMetrics: { stageGenTimeMs: 100, audioGeneratedFrames: 24000 },
      });
      audio.observeAudioFirstPacket({ stageId: 1, replicaId: 0, arrivalTs: 10, nowTs: 10.5 });
      audio.observeAudioStreamingFinalize({
        stageId: 1,
        replicaId: 0,
        chunkArrivalTimesS: [0, 1],
        chunkBytes: [100, 100],
        sampleRate: 24000,
      });
      transfer.observeSize(0, 0, 1, 1, 4096);
      transfer.observeTxTime(0, 0, 1, 1, 0.01);
      transfer.observeRxTime(0, 0, 1, 1, 0.01);
      transfer.observeInFlightTime(0, 0, 1, 1, 0.01);
      assert.equal(handle.statLogger, undefined, 'no upstream stat logger without logStats');

      const text = await handle.metricsText();
      const samples = parseSamples(text);
      const names = [...new Set(samples.map((s) => s.name))].sort();
      assert.deepEqual(names, [
        'vllm:omni_e2e_request_latency_s_bucket',
        'vllm:omni_e2e_request_latency_s_count',
        'vllm:omni_e2e_request_latency_s_created',
        'vllm:omni_e2e_request_latency_s_sum',
        'vllm:omni_generation_tokens_created',
        'vllm:omni_generation_tokens_total',
        'vllm:omni_image_count_created',
        'vllm:omni_image_count_total',
        'vllm:omni_image_pixels_bucket',
        'vllm:omni_image_pixels_count',
        'vllm:omni_image_pixels_created',
        'vllm:omni_image_pixels_sum',
        'vllm:omni_num_inference_steps_bucket',
        'vllm:omni_num_inference_steps_count',
        'vllm:omni_num_inference_steps_created',
        'vllm:omni_num_inference_steps_sum',
        'vllm:omni_num_requests_running',
        'vllm:omni_num_requests_waiting',
        'vllm:omni_prompt_tokens_created',
        'vllm:omni_prompt_tokens_total',
        'vllm:omni_realtime_vad_active_sessions',
        'vllm:omni_realtime_vad_endpoint_delay_s_bucket',
        'vllm:omni_realtime_vad_endpoint_delay_s_count',
        'vllm:omni_realtime_vad_endpoint_delay_s_created',
        'vllm:omni_realtime_vad_endpoint_delay_s_sum',
        'vllm:omni_realtime_vad_inference_latency_s_bucket',
        'vllm:omni_realtime_vad_inference_latency_s_count',
        'vllm:omni_realtime_vad_inference_latency_s_created',
        'vllm:omni_realtime_vad_inference_latency_s_sum',
        'vllm:omni_request_queue_wait_s_bucket',
        'vllm:omni_request_queue_wait_s_count',
        'vllm:omni_request_queue_wait_s_created',
        'vllm:omni_request_queue_wait_s_sum',
      ]);
      assertSample(text, 'vllm:omni_image_count_total', M, 0);
      assertHistogram(text, 'vllm:omni_request_queue_wait_s', M, SECONDS_BUCKETS, []);
      assertSample(text, 'vllm:omni_num_requests_running', M, 0);
      assertSample(text, 'vllm:omni_num_requests_waiting', M, 0);
      assertHistogram(text, E2E, M, SECONDS_BUCKETS, []);
      assert.ok(
        samples.every((s) => sameModelOnly(s.labels)),
        'the zero series carry model_name only',
      );
    });

    it('every pipeline family is still declared, and no upstream family is', async () => {
      const text = await handle.metricsText();
      const declared = declaredFamilyNames(text);
      // The stage-name info family is registered only with the stageNames option.
      const expected = Object.values(PIPELINE_FAMILIES)
        .filter((def) => def.group === 'pipeline')
        .map((def) => `vllm:omni_${def.baseName}${def.type === 'counter' ? '_total' : ''}`);
      assert.equal(expected.length, 42);
      // An eager histogram's or counter's `_created` companion is its own gauge family in the 0.0.4 text format, as prometheus_client prints it.
      const eager = Object.values(PIPELINE_FAMILIES).filter((def) => def.group === 'pipeline' && 'eager' in def && def.eager && def.type !== 'gauge');
      const createdOf = new Map(
        eager.map((def) => [`vllm:omni_${def.baseName}${def.type === 'counter' ? '_total' : ''}`, `vllm:omni_${def.baseName}_created`]),
      );
      assert.deepEqual(
        [...createdOf.values()],
        [
          'vllm:omni_e2e_request_latency_s_created',
          'vllm:omni_prompt_tokens_created',
          'vllm:omni_generation_tokens_created',
          'vllm:omni_request_queue_wait_s_created',
          'vllm:omni_num_inference_steps_created',
          'vllm:omni_image_count_created',
          'vllm:omni_image_pixels_created',
          'vllm:omni_realtime_vad_inference_latency_s_created',
          'vllm:omni_realtime_vad_endpoint_delay_s_created',
        ],
      );
      const withCreated = expected.flatMap((name) => (createdOf.has(name) ? [name, createdOf.get(name) as string] : [name]));
      assert.deepEqual(declared, withCreated);
      assert.equal(sampleValue(text, 'vllm:num_requests_running', { model_name: 'm', stage: '0', replica: '0' }), undefined);
    });
  });
});

function sameModelOnly(labels: Record<string, string>): boolean {
  const { le: _le, ...rest } = labels;
  return Object.keys(rest).length === 1 && rest.model_name === 'm';
}
