import { SECONDS_FAST_BUCKETS } from './buckets';
import type { FamilyDefinition } from './family-definition';

/**
 * Realtime sessions with server-side voice activity detection (vLLM-Omni `metrics/realtime.py`):
 * sessions open, the detector's time per appended audio batch, the silence it waited before
 * committing an endpoint, and its errors by reason. The three model-level series are bound when
 * the realtime server starts, as upstream's `RealtimeVADMetrics.__init__` binds them.
 */
export const REALTIME_VAD_FAMILIES = {
  realtimeVadActiveSessions: {
    baseName: 'realtime_vad_active_sessions',
    type: 'gauge',
    help: 'Number of active Realtime sessions using server-side VAD.',
    labels: ['model_name'],
    unit: '{session}',
    group: 'pipeline',
    eager: true,
  },
  realtimeVadInferenceLatency: {
    baseName: 'realtime_vad_inference_latency_s',
    type: 'histogram',
    help: 'Server VAD inference time for one appended audio batch, in seconds.',
    labels: ['model_name'],
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
    eager: true,
  },
  realtimeVadEndpointDelay: {
    baseName: 'realtime_vad_endpoint_delay_s',
    type: 'histogram',
    help: 'Detected silence between the last speech frame and the committed endpoint, in seconds.',
    labels: ['model_name'],
    buckets: SECONDS_FAST_BUCKETS,
    unit: 's',
    group: 'pipeline',
    eager: true,
  },
  realtimeVadErrors: {
    baseName: 'realtime_vad_errors',
    type: 'counter',
    help: 'Server VAD errors and input-overflow rejections by reason.',
    labels: ['model_name', 'reason'],
    unit: '{error}',
    group: 'pipeline',
  },
} as const satisfies Record<string, FamilyDefinition>;
