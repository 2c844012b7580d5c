import assert from 'node:assert/strict';
import type { EngineCoreOutputs, OmniRequestOutput, StageOutputMetrics, StageRequest } from '../../instrumentation/pipeline/host-contract';
import { OmniInstrumentation } from '../../instrumentation/hooks/omni-instrumentation';
import { registerOmniMetrics, type OmniMetricsHandle } from '../../register';
import { PROMETHEUS_CLIENT_DEFAULT_BUCKETS, SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { histogramOf, sampleValue, seriesOf } from '../support/exposition';
import { assertHistogram, assertSample, stageLabels } from '../recorders/harness';
import { FakePool } from './fake-host';
import { quietHandle } from '../support/quiet-handle';

/*
 * One test per emit-site rule of vLLM-Omni's metrics, each naming the upstream file and quoting
 * the line it follows (vllm-project/vllm-omni, the index versions cited in the README).
 */

const M = { model_name: 'm' };
const DIFFUSION = 2;

class Orchestrator {
  readonly stagePools = [new FakePool(2), new FakePool(1), new FakePool(2)];
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
  removeReplica(stageId: number, replicaId: number): void {
    void stageId;
    void replicaId;
  }
}

class Serving {
  async *generate(request: { requestId: string; outputs: OmniRequestOutput[]; stopAfter?: number }): AsyncGenerator<OmniRequestOutput> {
    for (let i = 0; i < request.outputs.length; i++) {
      if (request.stopAfter === i) return;
      yield request.outputs[i] as OmniRequestOutput;
    }
  }
}

/** A finished output of the diffusion stage (replica 1) carrying one stage's statistics. */
function finished(requestId: string, stage: StageOutputMetrics): OmniRequestOutput {
  return {
    requestId,
    stageId: DIFFUSION,
    replicaId: 1,
    finalOutputType: stage.outputUnitType ?? 'image',
    finished: true,
    finishReason: 'stop',
    stageMetrics: [{ stageId: DIFFUSION, stageType: 'diffusion', ...stage }],
  };
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
    // consume
  }
}

describe('hooks: vLLM-Omni emit-site semantics, line by line', () => {
  let metrics: OmniMetricsHandle;
  let instrumentation: OmniInstrumentation;
  beforeEach(async () => {
    metrics = await quietHandle({ stagePools: [2], logStats: true });
    instrumentation = new OmniInstrumentation({ metrics, orchestratorClass: Orchestrator, servingClass: Serving, diagnosticsChannels: false });
  });
  afterEach(async () => {
    instrumentation.disable();
    await metrics.shutdown();
  });

  it('stage_waiting_requests: engine/orchestrator.py `self._stage_replica_waiting[(stage_id, replica_id)] = max(int(n_waiting), 0)`', async () => {
    const orchestrator = new Orchestrator();
    orchestrator.pollEngine(DIFFUSION, 0, { timestamp: 1, outputs: [], numWaitingRequests: 2.9 });
    orchestrator.pollEngine(DIFFUSION, 1, { timestamp: 1, outputs: [], numWaitingRequests: 1.5 });
    assertSample(await metrics.metricsText(), 'vllm:omni_stage_waiting_requests', { ...M, stage: '2' }, 3);
    orchestrator.pollEngine(DIFFUSION, 1, { timestamp: 2, outputs: [], numWaitingRequests: -0.5 });
    assertSample(await metrics.metricsText(), 'vllm:omni_stage_waiting_requests', { ...M, stage: '2' }, 2);
  });

  it('stage_waiting_requests: engine/orchestrator.py `_remove_stage_replica_waiting` pops the snapshot, then `self._set_stage_waiting_total(stage_id)` even when the replica never reported', async () => {
    const orchestrator = new Orchestrator();
    // Stage 0 is a vLLM-engine stage with two replicas; neither reported a waiting snapshot.
    assert.deepEqual(seriesOf(await metrics.metricsText(), 'vllm:omni_stage_waiting_requests'), []);
    orchestrator.removeReplica(0, 1);
    assertSample(await metrics.metricsText(), 'vllm:omni_stage_waiting_requests', { ...M, stage: '0' }, 0);
  });

  it('kv_wait_s: engine/orchestrator.py `and (kv_wait_s := kv_params.get("kv_wait_s")) is not None` (a null from the host is no wait)', async () => {
    const orchestrator = new Orchestrator();
    orchestrator.pollEngine(0, 0, {
      timestamp: 1,
      outputs: [
        // What a Python host sends for `None` across a bridge.
        { requestId: 'a', numNewTokens: 0, kvTransferParams: { kvWaitS: null, connectorType: 'MooncakeConnector' } },
        { requestId: 'b', numNewTokens: 0, kvTransferParams: { kvWaitS: 0, connectorType: null } },
      ],
    });
    const text = await metrics.metricsText();
    assert.deepEqual(
      seriesOf(text, 'vllm:omni_kv_wait_s_count').map((labels) => labels.connector_type),
      ['unknown'],
      'only the measured wait; `connector_type or "unknown"`',
    );
    assertHistogram(text, 'vllm:omni_kv_wait_s', { ...M, connector_type: 'unknown' }, SECONDS_BUCKETS, [0]);
  });

  it('requests_failed_total: tests/metrics/test_prometheus.py `obj._log_summary_and_cleanup("req-1")` then `prom.inc_requests_failed.assert_called_once_with("stage_error")`', async () => {
    const partial: OmniRequestOutput = { ...finished('short', { outputUnitType: 'image' }), finished: false, stageMetrics: undefined };
    // The stream runs out without its finished output.
    await drain(new Serving().generate({ requestId: 'short', outputs: [partial, finished('short', {})], stopAfter: 1 }));
    const text = await metrics.metricsText();
    assert.deepEqual(seriesOf(text, 'vllm:omni_requests_failed_total'), [{ ...M, reason: 'stage_error' }]);
    assertSample(text, 'vllm:omni_requests_failed_total', { ...M, reason: 'stage_error' }, 1);
  });

  it('prompt_tokens / generation_tokens: metrics/prometheus.py `self._prompt_tokens = _prompt_tokens_family.labels(model_name=model_name)` in `__init__`', async () => {
    const text = await metrics.metricsText();
    assertSample(text, 'vllm:omni_prompt_tokens_total', M, 0);
    assertSample(text, 'vllm:omni_generation_tokens_total', M, 0);
  });

  it('prompt_tokens / generation_tokens are created at construction with logStats off too (`.labels()` runs before any `log_stats` check)', async () => {
    const off = await registerOmniMetrics({ selfCheck: false, modelName: 'off', stagePools: [1], logStats: false, prometheus: false, exporters: [] });
    try {
      const text = await off.metricsText();
      assertSample(text, 'vllm:omni_prompt_tokens_total', { model_name: 'off' }, 0);
      assertSample(text, 'vllm:omni_generation_tokens_total', { model_name: 'off' }, 0);
    } finally {
      await off.shutdown();
    }
  });

  it('diffusion_exec_per_step_s: metrics/utils.py `num_steps = int(getattr(stage_metrics, "num_inference_steps", 0) or diff_metrics.get("num_inference_steps") or 0)` before `float(exec_s) / num_steps`', async () => {
    await drain(
      new Serving().generate({
        requestId: 'frac',
        outputs: [finished('frac', { outputUnitType: 'image', numInferenceSteps: 4.9, diffusionMetrics: { diffusionEngineExecTimeS: 2 } })],
      }),
    );
    // int(4.9) == 4: 2 / 4, not 2 / 4.9.
    assertHistogram(await metrics.metricsText(), 'vllm:omni_diffusion_exec_per_step_s', stageLabels(DIFFUSION, 1), SECONDS_FAST_BUCKETS, [0.5]);
  });

  it('denoise_step_latency_s: metrics/utils.py the same `int(...)` step count before `float(forward_s) / num_steps`; `int(0.5)` is 0 and records nothing', async () => {
    const serving = new Serving();
    await drain(
      serving.generate({
        requestId: 'frac',
        outputs: [finished('frac', { outputUnitType: 'image', diffusionMetrics: { forwardTimeS: 1, numInferenceSteps: 8.5 } })],
      }),
    );
    await drain(
      serving.generate({
        requestId: 'half',
        outputs: [finished('half', { outputUnitType: 'image', diffusionMetrics: { forwardTimeS: 1, numInferenceSteps: 0.5 } })],
      }),
    );
    const text = await metrics.metricsText();
    // int(8.5) == 8 (from the breakdown, as upstream falls back for the per-step figures).
    assertHistogram(text, 'vllm:omni_denoise_step_latency_s', stageLabels(DIFFUSION, 1), SECONDS_FAST_BUCKETS, [0.125]);
    assert.equal(histogramOf(text, 'vllm:omni_diffusion_forward_s', stageLabels(DIFFUSION, 1))?.count, 2);
  });

  it('image_ttfp_s: only for an image output unit (tests/metrics/test_prometheus.py pins `obj.mod_metrics.observe_image_ttfp.assert_called_once_with("1", "0", 0.25)` for `output_unit_type="image"`)', async () => {
    const serving = new Serving();
    await drain(serving.generate({ requestId: 'video', outputs: [finished('video', { outputUnitType: 'video', imageTimeToFirstOutputMs: 900 })] }));
    await drain(serving.generate({ requestId: 'image', outputs: [finished('image', { outputUnitType: 'image', imageTimeToFirstOutputMs: 250 })] }));
    assertHistogram(await metrics.metricsText(), 'vllm:omni_image_ttfp_s', stageLabels(DIFFUSION, 1), SECONDS_BUCKETS, [0.25]);
  });

  it('num_inference_steps: metrics/utils.py `prom_metrics.observe_num_inference_steps(stage_metrics.num_inference_steps)`, the stage count only (no breakdown fallback)', async () => {
    const serving = new Serving();
    await drain(
      serving.generate({
        requestId: 'nostage',
        outputs: [finished('nostage', { outputUnitType: 'image', diffusionMetrics: { numInferenceSteps: 30 } })],
      }),
    );
    await drain(serving.generate({ requestId: 'own', outputs: [finished('own', { outputUnitType: 'image', numInferenceSteps: 20 })] }));
    assertHistogram(await metrics.metricsText(), 'vllm:omni_num_inference_steps', M, PROMETHEUS_CLIENT_DEFAULT_BUCKETS, [20]);
    assert.equal(sampleValue(await metrics.metricsText(), 'vllm:omni_num_inference_steps_count', M), 1);
  });
});
