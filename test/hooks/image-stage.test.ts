import assert from 'node:assert/strict';
import type { EngineCoreOutputs, OmniRequestOutput, ReceiveReceipt, StageRequest } from '../../instrumentation/pipeline/host-contract';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import type { OmniMetricsHandle } from '../../register';
import { monotonicSeconds } from '../../instrumentation/stats/clock';
import { PROMETHEUS_CLIENT_DEFAULT_BUCKETS, SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { histogramOf, sampleValue, seriesOf } from '../support/exposition';
import { assertHistogram, assertSample, stageLabels } from '../recorders/harness';
import { withWarnings } from '../views/store/store-fixture';
import { FakePool } from './fake-host';
import { quietHandle } from '../support/quiet-handle';

const M = { model_name: 'm' };
const DIFFUSION_STAGE = 2;

/** A thinker (stage 0, a vLLM engine) feeding a diffusion stage (stage 2, two replicas, no vLLM engine). */
class ImageOrchestrator {
  readonly stagePools = [new FakePool(1), new FakePool(1), new FakePool(2)];
  addRequest(request: { requestId: string }): void {
    void request;
  }
  cleanupRequest(requestId: string): void {
    void requestId;
  }
  submitToStage(request: StageRequest): void {
    this.stagePools[request.stageId]?.bindings.set(request.requestId, request.replicaId);
  }
  pollEngine(stageId: number, replicaId: number, outputs: EngineCoreOutputs): EngineCoreOutputs {
    void stageId;
    void replicaId;
    return outputs;
  }
  receiveFromPreviousStage(receipt: ReceiveReceipt): ReceiveReceipt {
    return receipt;
  }
}

type Script = { requestId: string; outputs?: OmniRequestOutput[]; failAfter?: number; stopAfter?: number };

class ImageServing {
  aborted: string[] = [];
  async *generate(request: Script): AsyncGenerator<OmniRequestOutput> {
    const outputs = request.outputs ?? [];
    for (let i = 0; i < outputs.length; i++) {
      if (request.failAfter === i) throw new Error('diffusion stage failed');
      if (request.stopAfter === i) return;
      yield outputs[i] as OmniRequestOutput;
    }
  }
  abort(requestId: string | readonly string[]): void {
    this.aborted.push(...(typeof requestId === 'string' ? [requestId] : requestId));
  }
}

function imageOutput(requestId: string): OmniRequestOutput {
  return {
    requestId,
    stageId: DIFFUSION_STAGE,
    replicaId: 1,
    finalOutputType: 'image',
    finished: true,
    finishReason: 'stop',
    multimodalOutput: { images: ['png'] },
    stageMetrics: [
      { stageId: 0, stageType: 'llm', replicaId: 0, stageGenTimeMs: 80, numTokensIn: 12, numTokensOut: 4 },
      {
        stageId: DIFFUSION_STAGE,
        stageType: 'diffusion',
        stageGenTimeMs: 2500,
        outputUnitType: 'image',
        outputUnitCount: 2,
        imagePixels: 2 * 256 * 256,
        numInferenceSteps: 25,
        imageTimeToFirstOutputMs: 2250,
        peakMemoryMb: 6144,
        diffusionMetrics: {
          diffusionEngineExecTimeS: 2,
          preprocessTimeS: 0.01,
          postprocessTimeS: 0.2,
          vaeDecodeTimeS: 0.15,
          forwardTimeS: 1.75,
          kvRecvTimeS: 0.005,
          schedulerQueueWaitS: 0.25,
        },
      },
    ],
  };
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // consume
  }
}

describe('hooks: image / diffusion stages and failure reasons', () => {
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation;
  beforeEach(async () => {
    // Only the thinker is a vLLM engine: the diffusion stage has no `vllm:*` series.
    metrics = await quietHandle({ stagePools: [1], logStats: true });
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: ImageOrchestrator, servingClass: ImageServing, diagnosticsChannels: false });
  });
  afterEach(async () => {
    instrumentation.disable();
    await metrics.shutdown();
  });

  it('a finished image request records every stage-service and diffusion family from its stage statistics', async () => {
    const orchestrator = new ImageOrchestrator();
    const serving = new ImageServing();
    const stream = serving.generate({ requestId: 'img', outputs: [imageOutput('img')] });
    orchestrator.submitToStage({ requestId: 'img', stageId: 0, replicaId: 0, arrivalTime: Date.now() / 1000, promptTokenCount: 12 });
    await drain(stream);
    const text = await metrics.metricsText();
    const diffusion = stageLabels(DIFFUSION_STAGE, 1);
    assertHistogram(text, 'vllm:omni_stage_gen_time_s', { ...M, stage: '0', stage_type: 'llm' }, SECONDS_BUCKETS, [0.08]);
    assertHistogram(text, 'vllm:omni_stage_gen_time_s', { ...M, stage: '2', stage_type: 'diffusion' }, SECONDS_BUCKETS, [2.5]);
    assertHistogram(text, 'vllm:omni_num_inference_steps', M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, [25]);
    assertHistogram(text, 'vllm:omni_image_pixels', M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, [131072]);
    assertSample(text, 'vllm:omni_image_count_total', M, 2);
    assertSample(text, 'vllm:omni_peak_memory_mb', { ...M, stage: '2' }, 6144);
    assertHistogram(text, 'vllm:omni_stage_in_queue_s', { ...M, stage: '2' }, SECONDS_FAST_BUCKETS, [0.25]);
    assertHistogram(text, 'vllm:omni_image_ttfp_s', diffusion, SECONDS_BUCKETS, [2.25]);
    assertHistogram(text, 'vllm:omni_diffusion_exec_s', diffusion, SECONDS_BUCKETS, [2]);
    assertHistogram(text, 'vllm:omni_diffusion_exec_per_step_s', diffusion, SECONDS_FAST_BUCKETS, [0.08]);
    assertHistogram(text, 'vllm:omni_diffusion_preprocess_s', diffusion, SECONDS_FAST_BUCKETS, [0.01]);
    assertHistogram(text, 'vllm:omni_diffusion_postprocess_s', diffusion, SECONDS_FAST_BUCKETS, [0.2]);
    assertHistogram(text, 'vllm:omni_vae_decode_s', diffusion, SECONDS_BUCKETS, [0.15]);
    assertHistogram(text, 'vllm:omni_diffusion_forward_s', diffusion, SECONDS_BUCKETS, [1.75]);
    assertHistogram(text, 'vllm:omni_denoise_step_latency_s', diffusion, SECONDS_FAST_BUCKETS, [0.07]);
    assertHistogram(text, 'vllm:omni_diffusion_kv_load_s', diffusion, SECONDS_FAST_BUCKETS, [0.005]);
    // One queue-wait sample: arrival at `generate` to the first stage submit.
    const queueWait = histogramOf(text, 'vllm:omni_request_queue_wait_s', M);
    assert.equal(queueWait?.count, 1);
    assert.ok((queueWait?.sum ?? -1) >= 0);
    assertSample(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop' }, 1);
    assert.deepEqual(seriesOf(text, 'vllm:omni_requests_failed_total'), []);
    assert.equal(sampleValue(text, 'vllm:num_requests_running', { ...M, stage: '2', replica: '0' }), undefined, 'no vLLM series for the diffusion stage');
  });

  it('a replica of the diffusion stage (after stagePools) can be removed: its per-replica series go, the rest stay', async () => {
    await drain(new ImageServing().generate({ requestId: 'img', outputs: [imageOutput('img')] }));
    const diffusion = stageLabels(DIFFUSION_STAGE, 1);
    assert.equal(histogramOf(await metrics.metricsText(), 'vllm:omni_vae_decode_s', diffusion)?.count, 1);
    assert.equal(metrics.removeReplica(DIFFUSION_STAGE, 1), true);
    const text = await metrics.metricsText();
    assert.equal(histogramOf(text, 'vllm:omni_vae_decode_s', diffusion), undefined);
    assert.equal(histogramOf(text, 'vllm:omni_image_ttfp_s', diffusion), undefined);
    assert.equal(histogramOf(text, 'vllm:omni_num_inference_steps', M)?.count, 1, 'model-level families stay');
    assert.equal(metrics.removeReplica(DIFFUSION_STAGE, 1), false, 'nothing left to remove');
    assert.equal(metrics.removeReplica(0, 7), false, 'an engine stage without that replica');
  });

  it('a request that never reached a stage has no queue-wait sample', async () => {
    await drain(new ImageServing().generate({ requestId: 'direct', outputs: [imageOutput('direct')] }));
    assert.equal(histogramOf(await metrics.metricsText(), 'vllm:omni_request_queue_wait_s', M)?.count, 0);
  });

  it('engine polls carry the waiting snapshots and KV waits; a receive names its sending stage', async () => {
    const orchestrator = new ImageOrchestrator();
    orchestrator.submitToStage({ requestId: 'kv', stageId: 0, replicaId: 0, arrivalTime: 1, promptTokenCount: 3 });
    orchestrator.submitToStage({ requestId: 'kv', stageId: DIFFUSION_STAGE, replicaId: 1, arrivalTime: 1, promptTokenCount: 3 });
    orchestrator.pollEngine(DIFFUSION_STAGE, 0, { timestamp: 1, outputs: [], numWaitingRequests: 3 });
    orchestrator.pollEngine(DIFFUSION_STAGE, 1, {
      timestamp: 2,
      outputs: [{ requestId: 'kv', numNewTokens: 0, kvTransferParams: { kvWaitS: 0.125, connectorType: 'MooncakeConnector' } }],
      numWaitingRequests: 2,
    });
    orchestrator.pollEngine(DIFFUSION_STAGE, 0, {
      timestamp: 3,
      outputs: [{ requestId: 'x', numNewTokens: 0, kvTransferParams: { connectorType: 'MooncakeConnector' } }],
      numWaitingRequests: 1,
    });
    orchestrator.receiveFromPreviousStage({ requestId: 'kv', stageId: DIFFUSION_STAGE, fromStage: 0, replicaId: 1, rxDecodeTimeMs: 3, inFlightTimeMs: 7 });
    const text = await metrics.metricsText();
    assertSample(text, 'vllm:omni_stage_waiting_requests', { ...M, stage: '2' }, 3);
    assertHistogram(text, 'vllm:omni_kv_wait_s', { ...M, connector_type: 'MooncakeConnector' }, SECONDS_BUCKETS, [0.125]);
    const hop = { model_name: 'm', from_stage: '0', from_replica: '0', to_stage: '2', to_replica: '1' };
    assertHistogram(text, 'vllm:omni_transfer_rx_s', hop, SECONDS_FAST_BUCKETS, [0.003]);
    assertHistogram(text, 'vllm:omni_transfer_in_flight_s', hop, SECONDS_FAST_BUCKETS, [0.007]);
  });

  describe('requests_failed_total: one reason per failed request, the first one wins', () => {
    const failed = async (reason: string): Promise<number> =>
      sampleValue(await metrics.metricsText(), 'vllm:omni_requests_failed_total', { ...M, reason }) ?? 0;

    it('disconnect, stage error, abort, a stream that runs out, and the idle timeout; success + failed = sent', async () => {
      const serving = new ImageServing();
      const partial = (id: string): OmniRequestOutput => ({ ...imageOutput(id), finished: false, stageMetrics: undefined });
      // Succeeds.
      await drain(serving.generate({ requestId: 'ok', outputs: [imageOutput('ok')] }));
      // The client leaves after the first output.
      for await (const _ of serving.generate({ requestId: 'gone', outputs: [partial('gone'), imageOutput('gone')] })) break;
      // The stage fails.
      await assert.rejects(
        drain(serving.generate({ requestId: 'boom', outputs: [partial('boom'), imageOutput('boom')], failAfter: 1 })),
        /diffusion stage failed/,
      );
      // The host aborts; the stream still delivers its final output afterwards, which is not a success.
      const aborted = serving.generate({ requestId: 'ab', outputs: [partial('ab'), imageOutput('ab')] });
      await aborted.next();
      serving.abort(['ab']);
      serving.abort('ab');
      await drain(aborted);
      // The stream ends without its finished output: `stage_error`, vLLM-Omni's cleanup default.
      await drain(serving.generate({ requestId: 'short', outputs: [partial('short'), imageOutput('short')], stopAfter: 1 }));
      // Nobody reads this one; the idle timeout ends it.
      const idle = serving.generate({ requestId: 'idle', outputs: [imageOutput('idle')] });
      withWarnings(() => instrumentation.observer.sweep(monotonicSeconds() + 3600));

      assert.deepEqual(serving.aborted, ['ab', 'ab'], 'the host abort ran');
      assert.equal(await failed('client_disconnect'), 1);
      assert.equal(await failed('stage_error'), 2);
      assert.equal(await failed('client_abort'), 1);
      assert.equal(await failed('unknown'), 1);
      const text = await metrics.metricsText();
      const success = sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop' });
      const abort = sampleValue(text, 'vllm:omni_requests_success_total', { ...M, finished_reason: 'abort' });
      assert.equal(success, 1);
      assert.equal(abort, 5, 'every failure is also in the abort bucket, as upstream pairs them');
      assert.equal(
        (success ?? 0) + (await failed('client_disconnect')) + (await failed('stage_error')) + (await failed('client_abort')) + (await failed('unknown')),
        6,
      );
      assert.ok(idle);
      assert.deepEqual(instrumentation.observer.trackedRequests, { admitted: 0, generating: 0 });
    });

    it('an abort after the finished output changes nothing', async () => {
      const serving = new ImageServing();
      const stream = serving.generate({ requestId: 'done', outputs: [imageOutput('done')] });
      await stream.next();
      serving.abort('done');
      await drain(stream);
      assert.equal(await failed('client_abort'), 0);
      assert.equal(sampleValue(await metrics.metricsText(), 'vllm:omni_requests_success_total', { ...M, finished_reason: 'stop' }), 1);
    });
  });
});
