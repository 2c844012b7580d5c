import { PROMETHEUS_CLIENT_DEFAULT_BUCKETS, SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from './buckets';
import type { FamilyDefinition } from './family-definition';

/** Label sets of the stage-service and diffusion families (vLLM-Omni `metrics/definitions.py`). */
export const STAGE_TYPE_LABELS = ['model_name', 'stage', 'stage_type'] as const;
export const PER_STAGE_LABELS = ['model_name', 'stage'] as const;
export const FAILED_LABELS = ['model_name', 'reason'] as const;
export const KV_WAIT_LABELS = ['model_name', 'connector_type'] as const;
const MODEL_LABELS = ['model_name'] as const;
const STAGE_REPLICA_LABELS = ['model_name', 'stage', 'replica'] as const;

/** The bounded `reason` values of `requests_failed_total`; anything else is recorded as `unknown`. */
export const FAILURE_REASONS = ['client_abort', 'client_disconnect', 'stage_error', 'unknown'] as const;
/** The `reason` label of `vllm:omni_requests_failed_total`. */
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * Stage-service families: per-stage generation time and queueing, request failures by reason,
 * KV-transfer waits, and the image / diffusion workload (steps, images, pixels, peak memory).
 * `num_inference_steps` and `image_pixels` use prometheus_client's default buckets because
 * vLLM-Omni declares them without buckets; every pixel count lands in `+Inf` there, so a
 * deployment that wants a pixel distribution overrides the buckets (config file `buckets`).
 */
export const STAGE_SERVICE_FAMILIES = {
  stageGenTime: {
    baseName: 'stage_gen_time_s',
    type: 'histogram',
    help: 'Per-stage generation time in seconds for diffusion / image stages.',
    labels: STAGE_TYPE_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  requestQueueWait: {
    baseName: 'request_queue_wait_s',
    type: 'histogram',
    help: 'Per-request queue wait between submit arrival and stage submit, in seconds.',
    labels: MODEL_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
    eager: true,
  },
  stageWaitingRequests: {
    baseName: 'stage_waiting_requests',
    type: 'gauge',
    help: "Sum of the latest scheduler waiting snapshots across a stage's replicas; diffusion snapshots update when outputs arrive.",
    labels: PER_STAGE_LABELS,
    unit: '{request}',
    group: 'pipeline',
  },
  numInferenceSteps: {
    baseName: 'num_inference_steps',
    type: 'histogram',
    help: 'Diffusion step count distribution per request.',
    labels: MODEL_LABELS,
    buckets: PROMETHEUS_CLIENT_DEFAULT_BUCKETS,
    unit: '{step}',
    group: 'pipeline',
    eager: true,
  },
  imageCount: {
    baseName: 'image_count',
    type: 'counter',
    help: 'Cumulative image count; per-model rate. Throughput recovered via rate().',
    labels: MODEL_LABELS,
    unit: '{image}',
    group: 'pipeline',
    eager: true,
  },
  imagePixels: {
    baseName: 'image_pixels',
    type: 'histogram',
    help: 'Image pixel count distribution per request.',
    labels: MODEL_LABELS,
    buckets: PROMETHEUS_CLIENT_DEFAULT_BUCKETS,
    unit: '{pixel}',
    group: 'pipeline',
    eager: true,
  },
  peakMemory: {
    baseName: 'peak_memory_mb',
    type: 'gauge',
    help: "Peak GPU memory in MB observed during a stage's generation.",
    labels: PER_STAGE_LABELS,
    unit: 'MBy',
    group: 'pipeline',
  },
  stageInQueue: {
    baseName: 'stage_in_queue_s',
    type: 'histogram',
    help: 'Time in seconds from diffusion scheduler enqueue to initial execution admission. ' + 'Zero is the healthy low-load baseline and is counted.',
    labels: PER_STAGE_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  requestsFailed: {
    baseName: 'requests_failed',
    type: 'counter',
    help:
      'Total requests by failure reason. Pairs with requests_success_total (abort bucket) to give the full ' +
      'failure surface. Reasons are bounded to client_abort, client_disconnect, stage_error, and unknown.',
    labels: FAILED_LABELS,
    unit: '{request}',
    group: 'pipeline',
  },
  kvWait: {
    baseName: 'kv_wait_s',
    type: 'histogram',
    help: 'KV cache transfer wait time per request, sliced by connector backend.',
    labels: KV_WAIT_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
} as const satisfies Record<string, FamilyDefinition>;

/** Per (stage, replica) diffusion timing breakdowns, recorded when a diffusion stage reports them. */
export const DIFFUSION_FAMILIES = {
  diffusionExec: {
    baseName: 'diffusion_exec_s',
    type: 'histogram',
    help: 'DiT forward pass execution time per request in seconds.',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  diffusionExecPerStep: {
    baseName: 'diffusion_exec_per_step_s',
    type: 'histogram',
    help: 'DiT forward pass execution time per denoising step in seconds.',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  diffusionPreprocess: {
    baseName: 'diffusion_preprocess_s',
    type: 'histogram',
    help: 'Diffusion input preprocessing time per request in seconds.',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  diffusionPostprocess: {
    baseName: 'diffusion_postprocess_s',
    type: 'histogram',
    help: 'Diffusion output postprocessing (VAE decode) time per request in seconds.',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  vaeDecode: {
    baseName: 'vae_decode_s',
    type: 'histogram',
    help: 'VAE decode latency in seconds (latents -> pixels/audio/video).',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  diffusionForward: {
    baseName: 'diffusion_forward_s',
    type: 'histogram',
    help:
      'Diffusion forward-only latency in seconds (denoise loop; excludes preprocess / postprocess / VAE decode / ' +
      'KV load). Absent when the pipeline profiler is off.',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  diffusionKvLoad: {
    baseName: 'diffusion_kv_load_s',
    type: 'histogram',
    help: 'Diffusion KV-recv latency in seconds (AR\u2192diffusion KV fetch; absent when the stage has no upstream KV to receive).',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  imageTtfp: {
    baseName: 'image_ttfp_s',
    type: 'histogram',
    help:
      'Image time-to-first-output in seconds (stage submit \u2192 first image materialized; non-streaming single-image). ' +
      'Stage-level, not e2e \u2014 excludes API queue and inter-stage transfer before the image stage.',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  denoiseStepLatency: {
    baseName: 'denoise_step_latency_s',
    type: 'histogram',
    help: 'Mean per-step denoise forward latency in seconds (forward_time / num_inference_steps).',
    labels: STAGE_REPLICA_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
} as const satisfies Record<string, FamilyDefinition>;
