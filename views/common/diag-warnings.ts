import { packageDiag } from './package-diag';

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
    packageDiag.warn(`omni-otel-metrics: ${message}${repeats}`);
  }
}

/**
 * One diag warning per key for a bounded number of keys (an unknown engine index, a failing call
 * site, an engine URL and the kind of its failure): a problem that is the same each time is
 * reported once, and a flood of distinct keys cannot grow memory past `maxKeys`. Key by what the
 * warning is about (a call site, a family and a reason, a kind of mistake) rather than by a value a
 * caller can vary without end (a label name, a request id): a flood of such values would use up the
 * keys and silence every later problem. A key is said again only once `forget` says its problem
 * ended (an engine that answers again).
 */
export class WarnOnce {
  private readonly warned = new Set<string>();

  constructor(private readonly maxKeys: number = 64) {}

  warn(key: string, message: string, error?: unknown): void {
    if (this.warned.has(key) || this.warned.size >= this.maxKeys) return;
    this.warned.add(key);
    if (error === undefined) packageDiag.warn(`omni-otel-metrics: ${message}`);
    else packageDiag.warn(`omni-otel-metrics: ${message}`, error);
  }

  /** The problem of `key` ended: the next `warn` with it is said again. */
  forget(key: string): void {
    this.warned.delete(key);
  }
}
