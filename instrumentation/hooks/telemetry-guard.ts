import { types } from 'node:util';
import { WarnOnce } from '../../views/common/diag-warnings';
import { isThenable } from '../../views/common/thenable';

/**
 * Runs telemetry so that it can never break the host: any error is swallowed and reported through
 * `diag` once per call site (a bounded set of names), never per request.
 */
export class TelemetryGuard {
  private readonly reported = new WarnOnce(Infinity);

  run(site: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      this.report(site, error);
    }
  }

  report(site: string, error: unknown): void {
    this.reported.warn(site, `telemetry failed in ${site}; the host call went on unaffected (reported once)`, error);
  }
}

/** The intrinsic `then`, captured before any host code could replace `Promise.prototype.then`. */
const promiseThen = Promise.prototype.then;

/**
 * Calls `onValue` with a method's result, or with what its promise fulfils with, and `onReason`
 * with what it rejects with; both must not throw (callers pass guarded callbacks).
 *
 * A plain native promise comes back as a promise that follows it: the same value once `onValue`
 * ran, the same reason once `onReason` ran, one microtask after it settles. Any reaction to a promise
 * marks it handled, so reacting to the host's own promise and returning it would silence the
 * `unhandledRejection` of a rejection the host never awaits; the follower is unhandled exactly
 * when the host leaves it so. Anything else that has a `then` (a Promise subclass, a promise
 * carrying its own properties, a custom thenable) is returned as it is and watched on a side
 * branch, since a follower would drop what it carries. A plain value is returned as it is.
 */
export function followResult<T>(result: T, onValue: (value: Awaited<T>) => void, onReason: (reason: unknown) => void): T {
  return new ResultFollower(onValue, onReason).follow(result, false);
}

/**
 * `followResult` for a call site that follows many results with the same callbacks (a stream's
 * steps): the follower's promise reactions are made once, not per result.
 */
export class ResultFollower<V> {
  private readonly passValue: (value: V) => V;
  private readonly passReason: (reason: unknown) => never;

  constructor(
    private readonly onValue: (value: V) => void,
    private readonly onReason: (reason: unknown) => void,
  ) {
    this.passValue = (value) => {
      onValue(value);
      return value;
    };
    this.passReason = (reason) => {
      onReason(reason);
      throw reason;
    };
  }

  /**
   * `plain`: the caller expects `result` to be a plain native promise (what an async generator's
   * own `next` returns), so it is not inspected; should it be anything else after all (the
   * intrinsic `next` replaced before this module loaded), it is followed as below.
   */
  follow<R>(result: R, plain: boolean): R {
    if (plain) {
      try {
        return promiseThen.call(result, this.passValue, this.passReason) as R;
      } catch {
        // Not a native promise: `then` refused its receiver before reacting to anything.
      }
    }
    if (isPlainPromise(result)) return promiseThen.call(result, this.passValue, this.passReason) as R;
    if (isThenable(result)) {
      try {
        result.then(this.onValue as (value: unknown) => void, this.onReason);
      } catch {
        // A thenable whose `then` throws: the host meets the same error when it uses it.
      }
      return result;
    }
    this.onValue(result as unknown as V);
    return result;
  }
}

/** For `followResult`: a rejection of the host's promise is the host's alone. */
export function ignoreReason(): void {
  // The host's rejection belongs to the host's caller.
}

function isPlainPromise(value: unknown): value is Promise<unknown> {
  return types.isPromise(value) && Object.getPrototypeOf(value) === Promise.prototype && Reflect.ownKeys(value).length === 0;
}
