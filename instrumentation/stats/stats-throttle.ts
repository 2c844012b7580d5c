import { monotonicSeconds, type SecondsClock } from './clock';
import { checkNonNegativeNumber, checkObject } from '../../views/common/option-checks';

/** vLLM-Omni's `_STATS_INTERVAL_S`: scheduler stats are built at most once per second per scheduler. */
export const DEFAULT_STATS_INTERVAL_SECONDS = 1;

/** Options of `StatsThrottle`. */
export interface StatsThrottleOptions {
  /** Minimum gap between two emissions of the same key. Default 1 s. */
  readonly intervalSeconds?: number;
  /**
   * Monotonic seconds; tests inject a fake one.
   * @internal
   */
  readonly clock?: SecondsClock;
}

/**
 * The `make_stats` 1 Hz gate of vLLM-Omni's scheduler mixin, one gate per key. Upstream keeps the state on each
 * scheduler instance, i.e. per (stage, replica), so one busy replica never silences another: keys here are
 * independent, and there is no global throttle.
 *
 * Keys are meant to be bounded by the caller (one per stage/replica, known at startup); a key is never evicted, so
 * an unbounded key space (request ids, say) would grow this map forever. `forget()` drops a retired key.
 */
export class StatsThrottle {
  /** Minimum seconds between two emissions of the same key (default 1). */
  readonly intervalSeconds: number;
  private readonly clock: SecondsClock;
  private readonly lastEmitSeconds = new Map<string, number>();

  constructor(options: StatsThrottleOptions = {}) {
    checkObject(options, 'StatsThrottle options', ['intervalSeconds', 'clock']);
    checkNonNegativeNumber(options.intervalSeconds, 'intervalSeconds');
    const { intervalSeconds = DEFAULT_STATS_INTERVAL_SECONDS, clock = monotonicSeconds } = options;
    this.intervalSeconds = intervalSeconds;
    this.clock = clock;
  }

  /**
   * True when stats for `key` may be built now; the emission is then recorded. A call exactly `intervalSeconds`
   * after the last emission passes, as upstream rejects only `now - last < interval`.
   *
   * Upstream seeds "last" with 0.0 and relies on `time.monotonic()` being far above 1 s; this clock may start near
   * 0, so a key that never emitted passes unconditionally instead.
   */
  shouldEmit(key: string): boolean {
    const now = this.clock();
    const last = this.lastEmitSeconds.get(key);
    if (last !== undefined && now - last < this.intervalSeconds) return false;
    // Recorded before the caller builds the stats, as upstream sets `_last_stats_time` before `super().make_stats()`.
    this.lastEmitSeconds.set(key, now);
    return true;
  }

  /** Drops the state of a key that will not be used again (a retired replica). */
  forget(key: string): void {
    this.lastEmitSeconds.delete(key);
  }
}
