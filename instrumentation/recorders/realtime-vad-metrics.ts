import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';
import { SeriesTable } from '../series-table';
import type { RecorderOptions } from './pipeline-metrics';

/**
 * Realtime server-VAD metrics (vLLM-Omni `RealtimeVADMetrics`): active sessions, inference time per
 * appended batch and endpoint delay (given in milliseconds, recorded in seconds), errors by reason.
 * The three model-level series are bound at construction, as upstream binds them in `__init__`.
 */
export class OmniRealtimeVadMetrics {
  private readonly logStats: boolean;
  private readonly activeSessions: BoundSeries;
  private readonly inferenceLatency: BoundSeries;
  private readonly endpointDelay: BoundSeries;
  private readonly errors: SeriesTable;
  private active = 0;

  /** @internal */
  constructor(store: SeriesStore, options: RecorderOptions) {
    this.logStats = options.logStats;
    const model = [options.modelName];
    this.activeSessions = store.bind('pipeline.realtimeVadActiveSessions', model);
    this.inferenceLatency = store.bind('pipeline.realtimeVadInferenceLatency', model);
    this.endpointDelay = store.bind('pipeline.realtimeVadEndpointDelay', model);
    this.errors = new SeriesTable(store, 'pipeline.realtimeVadErrors', model);
  }

  /** A server-VAD session opened: `realtime_vad_active_sessions` goes up by one. */
  sessionStarted(): void {
    if (this.logStats) this.activeSessions.record(++this.active);
  }

  /** A server-VAD session closed: `realtime_vad_active_sessions` goes down by one. */
  sessionFinished(): void {
    if (this.logStats) this.activeSessions.record(--this.active);
  }

  /** One appended batch's detector time, milliseconds. */
  observeInference(latencyMs: number): void {
    if (this.logStats && typeof latencyMs === 'number') this.inferenceLatency.record(latencyMs / 1000);
  }

  /** One committed endpoint's trailing silence, milliseconds. */
  observeEndpointDelay(delayMs: number): void {
    if (this.logStats && typeof delayMs === 'number') this.endpointDelay.record(delayMs / 1000);
  }

  /** One VAD error or input-overflow rejection; a reason that is not text is `unknown`. */
  error(reason: unknown): void {
    if (this.logStats) this.errors.get(typeof reason === 'string' && reason !== '' ? reason : 'unknown').record(1);
  }
}
