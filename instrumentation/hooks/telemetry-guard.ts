import { diag } from '@opentelemetry/api';

/**
 * Runs telemetry so that it can never break the host: any error is swallowed and reported through
 * `diag` once per call site (a bounded set of names), never per request.
 */
export class TelemetryGuard {
  private readonly reported = new Set<string>();

  run(site: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      this.report(site, error);
    }
  }

  report(site: string, error: unknown): void {
    if (this.reported.has(site)) return;
    this.reported.add(site);
    diag.warn(`omni-otel-metrics: telemetry failed in ${site}; the host call went on unaffected (reported once)`, error);
  }
}

/**
 * Lets `observe` see a method's result without touching it: a plain value is observed at once; a
 * promise is observed when it fulfils, on a side branch whose own rejection is swallowed, and the
 * caller still gets the very same promise object.
 */
export function observeResult<T>(result: T, guard: TelemetryGuard, site: string, observe: (value: Awaited<T>) => void): T {
  if (isThenable(result)) {
    result.then(
      (value) => guard.run(site, () => observe(value as Awaited<T>)),
      () => {
        // The host's rejection belongs to the host's caller, who still holds the original promise.
      },
    );
  } else {
    guard.run(site, () => observe(result as Awaited<T>));
  }
  return result;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
