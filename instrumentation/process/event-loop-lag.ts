/**
 * The event loop's lag, sampled only when asked: no timer or histogram runs between
 * collections (unlike `monitorEventLoopDelay`, which wakes the loop every few milliseconds).
 *
 * A sample is one turn of the loop: it starts in the check phase after the collection, in an
 * immediate, and ends in the immediate that one queues, which runs on the next turn after that
 * turn's timers and I/O callbacks. Starting after the collection keeps the scrape's own
 * rendering out of the figure. Each call returns the last completed sample (undefined before the
 * first) and starts the next, as prom-client's `nodejs_eventloop_lag_seconds` reports the lag it
 * measured after the previous scrape.
 */
export class EventLoopLag {
  private sampling = false;
  private lastSeconds: number | undefined;

  sample(): number | undefined {
    if (!this.sampling) {
      this.sampling = true;
      setImmediate(() => this.startTurn());
    }
    return this.lastSeconds;
  }

  private startTurn(): void {
    const start = process.hrtime.bigint();
    // Not unref'd: an unref'd immediate lets the loop block in its poll phase, which would be counted as lag.
    setImmediate(() => {
      this.lastSeconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.sampling = false;
    });
  }
}
