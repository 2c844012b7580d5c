import { LimitedWarning } from '../../views/common/diag-warnings';
import type { SeriesStore } from '../../views/store/series-store';
import type { BoundSeries } from '../../views/store/series';

/** A `reason` label value: a short snake_case name, as vLLM's admission checks name their caps. */
const REASON_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** Reasons are a handful of queue caps; more distinct values means the host is passing messages, not reasons. */
const MAX_REASONS = 16;

/**
 * `vllm:admission_rejections_total{model_name, reason}`: one per rejected frontend admission
 * attempt (a request with `n > 1` still counts once), counted before any engine sees the
 * request, so it carries no stage or replica. Reasons are bounded: an unusable or surplus one
 * is dropped with a rate-limited warning.
 */
export class AdmissionRejections {
  private readonly byReason = new Map<string, BoundSeries>();
  private readonly dropped = new LimitedWarning();

  constructor(
    private readonly store: SeriesStore,
    private readonly modelName: string,
  ) {}

  record(reason: string): void {
    let series = this.byReason.get(reason);
    if (series === undefined) {
      if (typeof reason !== 'string' || !REASON_PATTERN.test(reason) || this.byReason.size >= MAX_REASONS) {
        this.dropped.warn(`admission rejection reason ${JSON.stringify(reason)} dropped (want [a-z][a-z0-9_]{0,63}, at most ${MAX_REASONS} reasons)`);
        return;
      }
      series = this.store.bind('upstream.admissionRejections', [this.modelName, reason]);
      this.byReason.set(reason, series);
    }
    series.record(1);
  }
}
