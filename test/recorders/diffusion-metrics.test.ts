import type { OmniMetricsHandle } from '../../register';
import { SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from '../../views/catalog/buckets';
import { assertHistogram, assertNoSeries, register, stageLabels } from './harness';

const EXEC = 'vllm:omni_diffusion_exec_s';
const EXEC_PER_STEP = 'vllm:omni_diffusion_exec_per_step_s';
const PREPROCESS = 'vllm:omni_diffusion_preprocess_s';
const POSTPROCESS = 'vllm:omni_diffusion_postprocess_s';
const VAE = 'vllm:omni_vae_decode_s';
const FORWARD = 'vllm:omni_diffusion_forward_s';
const KV_LOAD = 'vllm:omni_diffusion_kv_load_s';
const IMAGE_TTFP = 'vllm:omni_image_ttfp_s';
const DENOISE = 'vllm:omni_denoise_step_latency_s';
const ALL = [EXEC, EXEC_PER_STEP, PREPROCESS, POSTPROCESS, VAE, FORWARD, KV_LOAD, IMAGE_TTFP, DENOISE];

describe('recorders: OmniDiffusionMetrics (diffusion breakdown families)', () => {
  let handle: OmniMetricsHandle;
  beforeEach(async () => {
    handle = await register({ stagePools: [1] });
  });
  afterEach(() => handle.shutdown());

  it('nothing is exposed before a diffusion stage reports', async () => {
    assertNoSeries(await handle.metricsText(), ...ALL);
  });

  it('a full image breakdown: every family on its buckets, per step values divided by the step count', async () => {
    handle.diffusion.observeDiffusionFinalize({
      stageId: 3,
      replicaId: 1,
      numInferenceSteps: 20,
      outputUnitType: 'image',
      breakdown: {
        diffusionEngineExecTimeS: 2,
        preprocessTimeS: 0.015,
        postprocessTimeS: 0.3,
        vaeDecodeTimeS: 0.25,
        forwardTimeS: 1.5,
        kvRecvTimeS: 0.004,
      },
    });
    handle.diffusion.observeImageTtfp(3, 1, 2.4);
    const text = await handle.metricsText();
    const labels = stageLabels(3, 1);
    assertHistogram(text, EXEC, labels, SECONDS_BUCKETS, [2]);
    assertHistogram(text, EXEC_PER_STEP, labels, SECONDS_FAST_BUCKETS, [0.1]);
    assertHistogram(text, PREPROCESS, labels, SECONDS_FAST_BUCKETS, [0.015]);
    assertHistogram(text, POSTPROCESS, labels, SECONDS_FAST_BUCKETS, [0.3]);
    assertHistogram(text, VAE, labels, SECONDS_BUCKETS, [0.25]);
    assertHistogram(text, FORWARD, labels, SECONDS_BUCKETS, [1.5]);
    assertHistogram(text, DENOISE, labels, SECONDS_FAST_BUCKETS, [0.075]);
    assertHistogram(text, KV_LOAD, labels, SECONDS_FAST_BUCKETS, [0.004]);
    assertHistogram(text, IMAGE_TTFP, labels, SECONDS_BUCKETS, [2.4]);
  });

  it('sparse: only reported measurements are recorded; measured zeros count', async () => {
    // Profiler off, no upstream KV: no forward, no denoise step latency, no KV load.
    handle.diffusion.observeDiffusionFinalize({
      stageId: 0,
      replicaId: 0,
      outputUnitType: 'image',
      breakdown: { diffusionEngineExecTimeS: 0.5, preprocessTimeS: 0, numInferenceSteps: 10 },
    });
    const text = await handle.metricsText();
    const labels = stageLabels(0, 0);
    assertHistogram(text, EXEC, labels, SECONDS_BUCKETS, [0.5]);
    assertHistogram(text, EXEC_PER_STEP, labels, SECONDS_FAST_BUCKETS, [0.05]);
    assertHistogram(text, PREPROCESS, labels, SECONDS_FAST_BUCKETS, [0]);
    assertNoSeries(text, POSTPROCESS, VAE, FORWARD, KV_LOAD, IMAGE_TTFP, DENOISE);
  });

  it('per-step figures need a step count; the denoise step latency needs an image output', async () => {
    handle.diffusion.observeDiffusionFinalize({
      stageId: 0,
      replicaId: 0,
      outputUnitType: 'image',
      breakdown: { diffusionEngineExecTimeS: 1, forwardTimeS: 0.8 },
    });
    handle.diffusion.observeDiffusionFinalize({ stageId: 0, replicaId: 1, outputUnitType: 'video', numInferenceSteps: 4, breakdown: { forwardTimeS: 0.8 } });
    const text = await handle.metricsText();
    assertNoSeries(text, EXEC_PER_STEP, DENOISE);
    assertHistogram(text, FORWARD, stageLabels(0, 0), SECONDS_BUCKETS, [0.8]);
    assertHistogram(text, FORWARD, stageLabels(0, 1), SECONDS_BUCKETS, [0.8]);
  });

  it('negative VAE, forward, KV-load and TTFP values are skipped; exec, pre- and postprocess are kept as reported', async () => {
    handle.diffusion.observeDiffusionFinalize({
      stageId: 1,
      replicaId: 0,
      numInferenceSteps: 2,
      outputUnitType: 'image',
      breakdown: { diffusionEngineExecTimeS: -0.2, preprocessTimeS: -0.01, postprocessTimeS: -0.02, vaeDecodeTimeS: -1, forwardTimeS: -1, kvRecvTimeS: -1 },
    });
    handle.diffusion.observeImageTtfp(1, 0, -0.5);
    const text = await handle.metricsText();
    const labels = stageLabels(1, 0);
    assertHistogram(text, EXEC, labels, SECONDS_BUCKETS, [-0.2]);
    assertHistogram(text, EXEC_PER_STEP, labels, SECONDS_FAST_BUCKETS, [-0.1]);
    assertHistogram(text, PREPROCESS, labels, SECONDS_FAST_BUCKETS, [-0.01]);
    assertHistogram(text, POSTPROCESS, labels, SECONDS_FAST_BUCKETS, [-0.02]);
    assertNoSeries(text, VAE, FORWARD, KV_LOAD, IMAGE_TTFP, DENOISE);
  });

  it('without a replica or a breakdown nothing is recorded', async () => {
    handle.diffusion.observeDiffusionFinalize({ stageId: 1, replicaId: undefined, breakdown: { diffusionEngineExecTimeS: 1 } });
    handle.diffusion.observeDiffusionFinalize({ stageId: 1, replicaId: 0, breakdown: null });
    assertNoSeries(await handle.metricsText(), ...ALL);
  });
});
