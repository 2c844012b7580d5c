import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { OmniMetricsHandle } from '../../register';
import { normalizeFailureReason } from '../../instrumentation/recorders/stage-service-metrics';
import { PROMETHEUS_CLIENT_DEFAULT_BUCKETS, SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { seriesOf } from '../support/exposition';
import { expectPrinted } from '../support/console-capture';
import { assertHistogram, assertNoSeries, assertSample, register } from './harness';

const GEN_TIME = 'vllm:omni_stage_gen_time_s';
const QUEUE_WAIT = 'vllm:omni_request_queue_wait_s';
const WAITING = 'vllm:omni_stage_waiting_requests';
const IN_QUEUE = 'vllm:omni_stage_in_queue_s';
const STEPS = 'vllm:omni_num_inference_steps';
const IMAGES = 'vllm:omni_image_count_total';
const PIXELS = 'vllm:omni_image_pixels';
const PEAK = 'vllm:omni_peak_memory_mb';
const FAILED = 'vllm:omni_requests_failed_total';
const KV_WAIT = 'vllm:omni_kv_wait_s';
const M = { model_name: 'm' };

describe('recorders: OmniStageServiceMetrics (stage-service and image workload families)', () => {
  let handle: OmniMetricsHandle;
  beforeEach(async () => {
    handle = await register({ stagePools: [1, 1] });
  });
  afterEach(() => handle.shutdown());

  it('at startup exposes only the eager model-level series, at zero', async () => {
    const text = await handle.metricsText();
    assertHistogram(text, QUEUE_WAIT, M, SECONDS_BUCKETS, []);
    assertHistogram(text, STEPS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, []);
    assertHistogram(text, PIXELS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, []);
    assertSample(text, IMAGES, M, 0);
    assertNoSeries(text, GEN_TIME, WAITING, IN_QUEUE, PEAK, FAILED, KV_WAIT);
  });

  it('a finished diffusion image stage: generation time, steps, pixels, images, in-queue wait and peak memory', async () => {
    handle.stageService.observeStageFinished({
      stageId: 3,
      stageType: 'diffusion',
      stageGenTimeMs: 1500,
      outputUnitType: 'image',
      outputUnitCount: 2,
      imagePixels: 2 * 512 * 512,
      numInferenceSteps: 20,
      peakMemoryMb: 8192.5,
      schedulerQueueWaitS: 0,
    });
    handle.stageService.observeStageFinished({ stageId: 0, stageGenTimeMs: 40 });
    const text = await handle.metricsText();
    assertHistogram(text, GEN_TIME, { ...M, stage: '3', stage_type: 'diffusion' }, SECONDS_BUCKETS, [1.5]);
    assertHistogram(text, GEN_TIME, { ...M, stage: '0', stage_type: 'llm' }, SECONDS_BUCKETS, [0.04]);
    assertHistogram(text, STEPS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, [20]);
    assertHistogram(text, PIXELS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, [524288]);
    assertSample(text, IMAGES, M, 2);
    assertHistogram(text, IN_QUEUE, { ...M, stage: '3' }, SECONDS_FAST_BUCKETS, [0]);
    assertSample(text, PEAK, { ...M, stage: '3' }, 8192.5);
    assert.deepEqual(seriesOf(text, PEAK), [{ ...M, stage: '3' }], 'the llm stage reported no peak');
    assert.deepEqual(seriesOf(text, `${IN_QUEUE}_count`), [{ ...M, stage: '3' }], 'the llm stage reported no in-queue wait');
  });

  it('scopes the workload as upstream: steps for diffusion stages, pixels and images for image outputs', async () => {
    // A diffusion stage producing video: steps only.
    handle.stageService.observeStageFinished({
      stageId: 1,
      stageType: 'diffusion',
      outputUnitType: 'video',
      numInferenceSteps: 30,
      imagePixels: 100,
      outputUnitCount: 1,
    });
    // An llm stage producing an image: image workload only.
    handle.stageService.observeStageFinished({
      stageId: 0,
      stageType: 'llm',
      outputUnitType: 'image',
      numInferenceSteps: 50,
      imagePixels: 64,
      outputUnitCount: 1,
    });
    // A text stage: nothing beyond its generation time (absent here).
    handle.stageService.observeStageFinished({ stageId: 0, outputUnitType: 'text', numInferenceSteps: 7 });
    const text = await handle.metricsText();
    assertHistogram(text, STEPS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, [30]);
    assertHistogram(text, PIXELS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, [64]);
    assertSample(text, IMAGES, M, 1);
    assertNoSeries(text, GEN_TIME, PEAK, IN_QUEUE);
  });

  it('sparse: absent, zero and negative workload values record nothing; negative times clamp to 0', async () => {
    const service = handle.stageService;
    service.observeStageFinished({
      stageId: 2,
      stageType: 'diffusion',
      outputUnitType: 'image',
      numInferenceSteps: 0,
      imagePixels: 0,
      outputUnitCount: 0,
      peakMemoryMb: 0,
    });
    service.observeNumInferenceSteps(-3);
    service.incImageCount(-1);
    service.observeImagePixels(-10);
    service.setPeakMemory(2, -5);
    service.observeStageGenTime(2, 'diffusion', -0.5);
    service.observeStageInQueue(2, -0.1);
    service.observeQueueWait(-1);
    service.observeQueueWait(0);
    const text = await handle.metricsText();
    assertHistogram(text, STEPS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, []);
    assertHistogram(text, PIXELS, M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, []);
    assertSample(text, IMAGES, M, 0);
    assertNoSeries(text, PEAK);
    assertHistogram(text, GEN_TIME, { ...M, stage: '2', stage_type: 'diffusion' }, SECONDS_BUCKETS, [0]);
    assertHistogram(text, IN_QUEUE, { ...M, stage: '2' }, SECONDS_FAST_BUCKETS, [0]);
    assertHistogram(text, QUEUE_WAIT, M, SECONDS_BUCKETS, [0, 0]);
  });

  it('stage_waiting_requests is the sum of the latest snapshot of each replica, per stage', async () => {
    const service = handle.stageService;
    service.setReplicaWaiting(1, 0, 3);
    service.setReplicaWaiting(1, 1, 5);
    service.setReplicaWaiting(2, 0, 7);
    let text = await handle.metricsText();
    assertSample(text, WAITING, { ...M, stage: '1' }, 8);
    assertSample(text, WAITING, { ...M, stage: '2' }, 7);
    service.setReplicaWaiting(1, 0, 0);
    service.setReplicaWaiting(1, 1, -2);
    service.setReplicaWaiting(1, 1, Number.NaN);
    text = await handle.metricsText();
    assertSample(text, WAITING, { ...M, stage: '1' }, 0);
    assertSample(text, WAITING, { ...M, stage: '2' }, 7);
  });

  it('stage_waiting_requests equals the sum of the latest counts through any sequence of reports, repeats and leaves (property)', async () => {
    // Few ids and small counts, so that a replica often reports the count it reported last.
    const operation = fc.record({
      stage: fc.integer({ min: 0, max: 1 }),
      replica: fc.integer({ min: 0, max: 2 }),
      count: fc.option(fc.integer({ min: 0, max: 2 })),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 40 }), async (operations) => {
        const fresh = await register({ stagePools: [3, 3] });
        try {
          const latest = new Map<string, number>();
          const reported = new Set<number>();
          for (const { stage, replica, count } of operations) {
            reported.add(stage);
            if (count === null) {
              fresh.stageService.forgetReplicaWaiting(stage, replica);
              latest.delete(`${stage}/${replica}`);
            } else {
              fresh.stageService.setReplicaWaiting(stage, replica, count);
              latest.set(`${stage}/${replica}`, count);
            }
          }
          const text = await fresh.metricsText();
          for (const stage of [0, 1]) {
            let expected = 0;
            for (const [key, value] of latest) if (key.startsWith(`${stage}/`)) expected += value;
            if (reported.has(stage)) assertSample(text, WAITING, { ...M, stage: String(stage) }, expected);
          }
        } finally {
          await fresh.shutdown();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('requests_failed_total keeps its reason label bounded', async () => {
    for (const reason of ['client_abort', 'client_disconnect', 'client_disconnect', 'stage_error', 'unknown', 'CUDA error for req-1', '', undefined, 42]) {
      handle.stageService.incRequestsFailed(reason);
    }
    const text = await handle.metricsText();
    assert.deepEqual(
      seriesOf(text, FAILED).map((labels) => labels.reason),
      ['client_abort', 'client_disconnect', 'stage_error', 'unknown'],
    );
    assertSample(text, FAILED, { ...M, reason: 'client_abort' }, 1);
    assertSample(text, FAILED, { ...M, reason: 'client_disconnect' }, 2);
    assertSample(text, FAILED, { ...M, reason: 'stage_error' }, 1);
    assertSample(text, FAILED, { ...M, reason: 'unknown' }, 5);
    assert.equal(normalizeFailureReason('toString'), 'unknown');
  });

  it('kv_wait_s by connector: zero kept, negative skipped, a missing connector is unknown', async () => {
    handle.stageService.observeKvWait('SharedMemoryConnector', 0.25);
    handle.stageService.observeKvWait('SharedMemoryConnector', 0);
    handle.stageService.observeKvWait('SharedMemoryConnector', -0.1);
    handle.stageService.observeKvWait(undefined, 1.5);
    handle.stageService.observeKvWait('', Number.NaN);
    const text = await handle.metricsText();
    assertHistogram(text, KV_WAIT, { ...M, connector_type: 'SharedMemoryConnector' }, SECONDS_BUCKETS, [0.25, 0]);
    assertHistogram(text, KV_WAIT, { ...M, connector_type: 'unknown' }, SECONDS_BUCKETS, [1.5]);
  });

  it('never throws into the host, whatever it passes', async () => {
    const hostile = {
      get stageId(): never {
        throw new Error('getter');
      },
    } as unknown as Parameters<typeof handle.stageService.observeStageFinished>[0];
    await expectPrinted(['omni-otel-metrics: OmniStageServiceMetrics.observeStageFinished dropped a call: reading the object it was given threw'], () =>
      assert.doesNotThrow(() => handle.stageService.observeStageFinished(hostile)),
    );
    assert.doesNotThrow(() => handle.stageService.setReplicaWaiting(Symbol('s') as unknown as number, 0, 1));
  });
});
