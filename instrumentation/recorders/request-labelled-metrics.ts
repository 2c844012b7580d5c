import type { LabelValue } from '../../views/store/family-series';
import type { SeriesStore } from '../../views/store/series-store';
import { RequestLabeler, type RequestLabelSettings } from './request-labels';
import { SeriesTable } from '../series-table';
import { clampedAtZero, isPositive } from './never-throw';
import type { RecorderOptions } from './pipeline-metrics';
import { normalizeFailureReason } from './stage-service-metrics';

/**
 * The request families with per-request labels (`tenant`, `priority`): completions by reason,
 * failures by reason, end-to-end latency, audio time to first packet, queue wait and token
 * totals, each with the request's label values after the family's own. A value's series is bound
 * the first time a request carries it; the values are bounded by the `RequestLabeler`, the label
 * sets by the family's cardinality limit.
 */
export class OmniRequestLabelledMetrics {
  /** @internal */
  readonly labeler: RequestLabeler;
  private readonly logStats: boolean;
  private readonly success: SeriesTable;
  private readonly failed: SeriesTable;
  private readonly e2e: SeriesTable;
  private readonly ttfp: SeriesTable;
  private readonly queueWait: SeriesTable;
  private readonly promptTokens: SeriesTable;
  private readonly generationTokens: SeriesTable;

  /** @internal */
  constructor(store: SeriesStore, options: RecorderOptions, labels: readonly RequestLabelSettings[]) {
    this.logStats = options.logStats;
    this.labeler = new RequestLabeler(labels);
    const model = [options.modelName];
    this.success = new SeriesTable(store, 'pipeline.requestsSuccess', model);
    this.failed = new SeriesTable(store, 'pipeline.requestsFailed', model);
    this.e2e = new SeriesTable(store, 'pipeline.e2eRequestLatency', model);
    this.ttfp = new SeriesTable(store, 'pipeline.audioTtfp', model);
    this.queueWait = new SeriesTable(store, 'pipeline.requestQueueWait', model);
    this.promptTokens = new SeriesTable(store, 'pipeline.promptTokens', model);
    this.generationTokens = new SeriesTable(store, 'pipeline.generationTokens', model);
  }

  /** A request finished at the final stage: one completion for its reason and one e2e sample. */
  requestSucceeded(values: readonly string[], e2eSeconds: number, finishedReason: string): void {
    if (!this.logStats || !Array.isArray(values)) return;
    const [first, second] = values as readonly LabelValue[];
    this.success.get(typeof finishedReason === 'string' && finishedReason !== '' ? finishedReason : 'stop', first, second).record(1);
    this.e2e.get(first, second).record(e2eSeconds);
  }

  /** A request left without completing: `abort` among the completions, and one failure by bounded reason. */
  requestFailed(values: readonly string[], reason: unknown): void {
    if (!this.logStats || !Array.isArray(values)) return;
    const [first, second] = values as readonly LabelValue[];
    this.success.get('abort', first, second).record(1);
    this.failed.get(normalizeFailureReason(reason), first, second).record(1);
  }

  /** Token totals of a finished request; zero or negative counts are skipped. */
  observeTokens(values: readonly string[], promptTokens: number, generationTokens: number): void {
    if (!this.logStats || !Array.isArray(values)) return;
    const [first, second] = values as readonly LabelValue[];
    if (isPositive(promptTokens)) this.promptTokens.get(first, second).record(promptTokens);
    if (isPositive(generationTokens)) this.generationTokens.get(first, second).record(generationTokens);
  }

  /** The request's first audio packet; negative intervals clamp to 0. */
  observeAudioTtfp(values: readonly string[], stage: LabelValue, replica: LabelValue, seconds: number): void {
    if (!this.logStats || !Array.isArray(values)) return;
    const [first, second] = values as readonly LabelValue[];
    this.ttfp.get(stage, replica, first, second).record(clampedAtZero(seconds));
  }

  /** Arrival to the first stage submit; negative clamps to 0, zero is counted. */
  observeQueueWait(values: readonly string[], seconds: number): void {
    if (!this.logStats || !Array.isArray(values)) return;
    const [first, second] = values as readonly LabelValue[];
    this.queueWait.get(first, second).record(clampedAtZero(seconds));
  }
}
