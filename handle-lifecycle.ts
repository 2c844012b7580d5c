/** Thrown by a handle's methods once `shutdown()` has been called. */
export class OmniShutdownError extends Error {
  constructor(
    /** The handle method that was called, e.g. `metricsText()`. */
    readonly method: string,
    /** Whether the handle was still shutting down or already shut down when the method was called. */
    readonly state: 'shutting down' | 'shut down',
  ) {
    super(
      `omni-otel-metrics: ${method} called on a handle that is ${state} (shutdown() was called): its server, exporters and replica map are gone; register again to serve metrics`,
    );
    this.name = 'OmniShutdownError';
  }
}

/**
 * Running, then shutting down, then shut down. After `shutdown()` the handle's methods throw an
 * `OmniShutdownError` naming the method and the state, rather than an SDK error about one of its
 * parts; `shutdown()` itself may be called again and resolves with the first call's outcome. The
 * recorders are not guarded: a record path never throws, and records after shutdown go nowhere.
 */
export class HandleLifecycle {
  private shutdown: Promise<void> | undefined;
  private done = false;

  assertRunning(method: string): void {
    if (this.shutdown !== undefined) throw new OmniShutdownError(method, this.done ? 'shut down' : 'shutting down');
  }

  shutDownOnce(stop: () => Promise<void>): Promise<void> {
    this.shutdown ??= stop().finally(() => {
      this.done = true;
    });
    return this.shutdown;
  }
}
