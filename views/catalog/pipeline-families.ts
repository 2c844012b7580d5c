import { BYTES_BUCKETS, RTF_BUCKETS, SECONDS_BUCKETS, SECONDS_FAST_BUCKETS } from './buckets';
import type { FamilyDefinition } from './family-definition';
import { REALTIME_VAD_FAMILIES } from './realtime-vad-families';
import { SLO_FAMILIES } from './slo-families';
import { DIFFUSION_FAMILIES, STAGE_SERVICE_FAMILIES } from './stage-service-families';

/** Label sets of the multi-stage design (vLLM-Omni `metrics/definitions.py`). */
export const PIPELINE_LABELS = ['model_name'] as const;
export const SUCCESS_LABELS = ['model_name', 'finished_reason'] as const;
export const STAGE_LABELS = ['model_name', 'stage', 'replica'] as const;
export const AUDIO_CONTINUITY_LABELS = ['model_name', 'stage', 'replica', 'threshold_ms'] as const;
export const AUDIO_SKIPPED_LABELS = ['model_name', 'stage', 'replica', 'reason'] as const;
export const TRANSFER_LABELS = ['model_name', 'from_stage', 'from_replica', 'to_stage', 'to_replica'] as const;

/**
 * The pipeline-level families: the 15 of the seed design (4 pipeline, 7 audio, 4 transfer), then
 * the newer token counters and per-replica queue gauges, then the stage-service and diffusion
 * families of image / diffusion stages, then the realtime server-VAD families, then the goodput
 * families of the `slo` option. Names are relative to the configurable prefix (`vllm:omni_` by default, `vllm_omni:` as newer upstream spells it).
 */
export const PIPELINE_FAMILIES = {
  numRequestsRunning: {
    baseName: 'num_requests_running',
    type: 'gauge',
    help: 'Number of requests currently running across all pipeline stages.',
    labels: PIPELINE_LABELS,
    unit: '{request}',
    group: 'pipeline',
    eager: true,
  },
  numRequestsWaiting: {
    baseName: 'num_requests_waiting',
    type: 'gauge',
    help: 'Number of requests waiting to be scheduled.',
    labels: PIPELINE_LABELS,
    unit: '{request}',
    group: 'pipeline',
    eager: true,
  },
  requestsSuccess: {
    baseName: 'requests_success',
    type: 'counter',
    help:
      'Total requests by completion reason (stop / length / abort / ...). Aborts cover client-disconnect / ' +
      'cancellation paths in addition to upstream FinishReason.ABORT.',
    labels: SUCCESS_LABELS,
    unit: '{request}',
    group: 'pipeline',
  },
  e2eRequestLatency: {
    baseName: 'e2e_request_latency_s',
    type: 'histogram',
    help: 'Pipeline-global end-to-end request latency in seconds (user arrival to complete response).',
    labels: PIPELINE_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
    eager: true,
  },
  audioTtfp: {
    baseName: 'audio_ttfp_s',
    type: 'histogram',
    help: 'Time from request arrival to first audio packet/frame, in seconds.',
    labels: STAGE_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  audioDuration: {
    baseName: 'audio_duration_s',
    type: 'histogram',
    help: 'Generated audio content duration in seconds (audio_frames / sample_rate).',
    labels: STAGE_LABELS,
    buckets: SECONDS_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  audioRtf: {
    baseName: 'audio_rtf',
    type: 'histogram',
    help: 'Audio real-time factor (stage_gen_time_s / audio_duration_s); streaming TTS requires < 1.',
    labels: STAGE_LABELS,
    buckets: RTF_BUCKETS,
    unit: '1',
    group: 'pipeline',
  },
  audioFrames: {
    baseName: 'audio_frames',
    type: 'counter',
    help: 'Cumulative audio frame count; per-model rate (not summable across models). Throughput recovered via rate().',
    labels: STAGE_LABELS,
    unit: '{frame}',
    group: 'pipeline',
  },
  audioUnderrun: {
    baseName: 'audio_underrun_s',
    type: 'histogram',
    help:
      'Per-request worst-case player-deficit in seconds (max time the player ran out of buffered audio). ' + '> 0 indicates listener experienced silent gaps.',
    labels: STAGE_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  audioContinuityOk: {
    baseName: 'audio_continuity_ok',
    type: 'counter',
    help:
      "Incremented when the request's worst underrun stayed below threshold_ms. Pair with requests_success_total " +
      'to compute streaming-continuity health rate.',
    labels: AUDIO_CONTINUITY_LABELS,
    unit: '{request}',
    group: 'pipeline',
  },
  audioSkippedRequests: {
    baseName: 'audio_skipped_requests',
    type: 'counter',
    help: 'Silent-loss counter \u2014 code2wav rejected malformed codec input and returned 200 OK with empty audio.',
    labels: AUDIO_SKIPPED_LABELS,
    unit: '{request}',
    group: 'pipeline',
  },
  transferSize: {
    baseName: 'transfer_size_bytes',
    type: 'histogram',
    help: 'Per-transfer payload size in bytes (one observation per physical hop).',
    labels: TRANSFER_LABELS,
    buckets: BYTES_BUCKETS,
    unit: 'By',
    group: 'pipeline',
  },
  transferTx: {
    baseName: 'transfer_tx_s',
    type: 'histogram',
    help: 'Sender-side time in seconds (serialize + submit to connector).',
    labels: TRANSFER_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  transferRx: {
    baseName: 'transfer_rx_s',
    type: 'histogram',
    help: 'Receiver-side time in seconds (recv + deserialize).',
    labels: TRANSFER_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  transferInFlight: {
    baseName: 'transfer_in_flight_s',
    type: 'histogram',
    help: 'Network in-flight time in seconds (TX done -> RX recv start).',
    labels: TRANSFER_LABELS,
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
  },
  promptTokens: {
    baseName: 'prompt_tokens',
    type: 'counter',
    help: 'Total prompt (input) tokens processed across all pipeline stages.',
    labels: PIPELINE_LABELS,
    unit: '{token}',
    group: 'pipeline',
    eager: true,
  },
  generationTokens: {
    baseName: 'generation_tokens',
    type: 'counter',
    help: 'Total generation (output) tokens produced across all pipeline stages.',
    labels: PIPELINE_LABELS,
    unit: '{token}',
    group: 'pipeline',
    eager: true,
  },
  stageOutputsQueueSize: {
    baseName: 'stage_outputs_queue_size',
    type: 'gauge',
    help: 'Number of completed stage outputs waiting in a replica client queue.',
    labels: STAGE_LABELS,
    unit: '{output}',
    group: 'pipeline',
  },
  stageInflightRequests: {
    baseName: 'stage_inflight_requests',
    type: 'gauge',
    help: 'Number of requests currently routed to a stage replica.',
    labels: STAGE_LABELS,
    unit: '{request}',
    group: 'pipeline',
  },
  ...STAGE_SERVICE_FAMILIES,
  ...DIFFUSION_FAMILIES,
  ...REALTIME_VAD_FAMILIES,
  ...SLO_FAMILIES,
  /**
   * The name of each stage, for dashboards: the other families say `stage="0"`, and a join on
   * `stage` turns that into `thinker`. Neither vLLM-Omni's families nor its labels carry stage
   * names (its `stage` label is the stage id), so this is an info family of this package, in
   * vLLM's `*_info` style (a gauge of 1 whose labels carry the information).
   */
  stageInfo: {
    baseName: 'stage_info',
    type: 'gauge',
    help: 'Name of each pipeline stage (value 1); join on stage to show names.',
    labels: ['model_name', 'stage', 'stage_name'],
    unit: '',
    group: 'stageNames',
  },
} as const satisfies Record<string, FamilyDefinition>;

export type PipelineFamilyKey = keyof typeof PIPELINE_FAMILIES;
