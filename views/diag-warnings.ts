import { diag } from '@opentelemetry/api';

const DEFAULT_INTERVAL_MILLIS = 60_000;

/**
 * One diag warning per interval for a kind of problem that may repeat on a record path (a NaN
 * observation, a series over the cardinality cap): the first occurrence warns at once, later ones
 * are counted and reported with the next warning, so a flood costs a comparison, not a log line.
 */
export class LimitedWarning {
  private nextAllowedMillis = 0;
  private suppressed = 0;

  constructor(
    private readonly intervalMillis: number = DEFAULT_INTERVAL_MILLIS,
    private readonly now: () => number = Date.now,
  ) {}

  warn(message: string): void {
    const now = this.now();
    if (now < this.nextAllowedMillis) {
      this.suppressed++;
      return;
    }
    const repeats = this.suppressed > 0 ? ` (${this.suppressed} more like it since the last warning)` : '';
    this.suppressed = 0;
    this.nextAllowedMillis = now + this.intervalMillis;
    diag.warn(`omni-otel-metrics: ${message}${repeats}`);
  }
}
