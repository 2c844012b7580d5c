import { packageDiag } from '../../views/common/package-diag';
import { shown } from '../../views/common/option-checks';

/** vLLM's `VLLM_LOG_STATS_INTERVAL` default. */
export const DEFAULT_LOG_STATS_INTERVAL_SECONDS = 10;

/** Anything with a `log()` to call periodically, e.g. a `LoggingStatLogger`. */
export interface PeriodicLoggable {
  log(): void;
}

/** The part of a Node timer the logger needs. */
export interface IntervalHandle {
  unref(): unknown;
}

/** Timer functions; tests inject fakes, everyone else gets Node's. */
export interface IntervalTimers {
  setInterval(callback: () => void, delayMillis: number): IntervalHandle;
  clearInterval(handle: IntervalHandle): void;
}

export interface PeriodicLoggerOptions {
  loggers?: Iterable<PeriodicLoggable>;
  /** Seconds between two rounds of `log()` calls. Default 10, as vLLM. */
  intervalSeconds?: number;
  /** Told about a `log()` that threw; the other loggers and later rounds still run. Default: `diag.warn`. */
  onError?: (error: unknown) => void;
  timers?: IntervalTimers;
}

const nodeTimers: IntervalTimers = {
  setInterval: (callback, delayMillis) => setInterval(callback, delayMillis),
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
};

/**
 * Calls `log()` on a set of loggers every `intervalSeconds`, starting at construction. The timer is `unref()`ed so
 * it never keeps the process alive; `stop()` ends it.
 */
export class PeriodicLogger {
  readonly intervalSeconds: number;
  private readonly loggers: Set<PeriodicLoggable>;
  private readonly onError: (error: unknown) => void;
  private readonly timers: IntervalTimers;
  private timer: IntervalHandle | undefined;

  constructor({
    loggers = [],
    intervalSeconds = DEFAULT_LOG_STATS_INTERVAL_SECONDS,
    onError = (error) => packageDiag.warn('PeriodicLogger: a stats logger threw', error),
    timers = nodeTimers,
  }: PeriodicLoggerOptions = {}) {
    if (!Number.isFinite(intervalSeconds) || intervalSeconds <= 0) {
      throw new RangeError(`intervalSeconds must be a positive number; got ${shown(intervalSeconds)}`);
    }
    this.intervalSeconds = intervalSeconds;
    this.loggers = new Set(loggers);
    this.onError = onError;
    this.timers = timers;
    this.timer = timers.setInterval(() => this.logAll(), intervalSeconds * 1000);
    this.timer.unref();
  }

  add(logger: PeriodicLoggable): void {
    this.loggers.add(logger);
  }

  delete(logger: PeriodicLoggable): void {
    this.loggers.delete(logger);
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** One round now, e.g. a last line at shutdown. A throwing logger never stops the others. */
  logAll(): void {
    for (const logger of this.loggers) {
      try {
        logger.log();
      } catch (error) {
        this.reportError(error);
      }
    }
  }

  /** Ends the timer; calling it again does nothing. */
  stop(): void {
    if (this.timer === undefined) return;
    this.timers.clearInterval(this.timer);
    this.timer = undefined;
  }

  private reportError(error: unknown): void {
    try {
      this.onError(error);
    } catch {
      // The error handler itself failed; the timer must survive it.
    }
  }
}
