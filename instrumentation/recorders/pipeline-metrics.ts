import type { BoundSeries } from '../../views/store/series';
import type { SeriesStore } from '../../views/store/series-store';
import { SeriesTable } from '../series-table';
import { bindEager } from './eager-series';
import { isPositive } from './never-throw';

export interface RecorderOptions {
  readonly modelName: string;
  /** Upstream `--log-stats`: off makes every method a no-op (families stay declared). */
  readonly logStats: boolean;
}

/**
 * Pipeline-level request metrics (vLLM-Omni `OmniPrometheusMetrics`): running / waiting gauges,
 * completions by reason, pipeline end-to-end latency and token totals, all labelled by model only.
 */
export class OmniPrometheusMetrics {
  private readonly logStats: boolean;
  private readonly running: BoundSeries;
  private readonly waiting: BoundSeries;
  private readonly e2e: BoundSeries;
  private readonly success: SeriesTable;
  // Bound at construction, as vLLM-Omni's `__init__` binds them: a zero series from the start.
  private readonly promptTokens: BoundSeries;
  private readonly generationTokens: BoundSeries;

  /** @internal */
  constructor(store: SeriesStore, options: RecorderOptions) {
    this.logStats = options.logStats;
    const model = [options.modelName];
    this.running = store.bind('pipeline.numRequestsRunning', model);
    this.waiting = store.bind('pipeline.numRequestsWaiting', model);
    this.e2e = bindEager(store, 'pipeline.e2eRequestLatency', model);
    this.promptTokens = bindEager(store, 'pipeline.promptTokens', model);
    this.generationTokens = bindEager(store, 'pipeline.generationTokens', model);
    this.success = new SeriesTable(store, 'pipeline.requestsSuccess', model);
  }

  /** Sets the requests running across all pipeline stages (`num_requests_running`). */
  setRunning(count: number): void {
    if (this.logStats) this.running.record(count);
  }

  /** Sets the requests waiting to be scheduled (`num_requests_waiting`). */
  setWaiting(count: number): void {
    if (this.logStats) this.waiting.record(count);
  }

  /** A request finished at the final stage: one completion for its reason (a label: any value is safe) and one e2e sample. */
  requestSucceeded(e2eSeconds: number, finishedReason: string = 'stop'): void {
    if (!this.logStats) return;
    this.success.get(finishedReason || 'stop').record(1);
    this.e2e.record(e2eSeconds);
  }

  /** A request left without completing (cancel, disconnect, error): `abort`, and no e2e sample. */
  requestFailed(): void {
    if (this.logStats) this.success.get('abort').record(1);
  }

  /** Token totals of a finished request; zero or negative counts are skipped. */
  observeTokens(promptTokens: number, generationTokens: number): void {
    if (!this.logStats) return;
    if (isPositive(promptTokens)) this.promptTokens.record(promptTokens);
    if (isPositive(generationTokens)) this.generationTokens.record(generationTokens);
  }
}

/**
 * Requests the orchestrator is running (vLLM-Omni `OmniRequestCounter`). Advisory: read by the
 * serving side to publish gauges; never below zero; not gated by `logStats`.
 */
export class OmniRequestCounter {
  private count = 0;

  get value(): number {
    return this.count;
  }

  increment(): void {
    this.count += 1;
  }

  decrement(): void {
    this.count = Math.max(0, this.count - 1);
  }
}

/** Waiting = requests the serving side tracks minus those the orchestrator runs, never below 0. */
export function waitingRequests(tracked: number, running: number): number {
  return Math.max(0, tracked - running);
}
