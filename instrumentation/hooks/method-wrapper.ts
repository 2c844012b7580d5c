import type { HandleFeed } from './handle-feed';
import { NO_LISTENERS, type HostMethodFn, type MethodPatch } from './host-patches';
import { followResult, ignoreReason } from './telemetry-guard';
import { isThenable } from '../../views/common/thenable';

/** A wrapper factory: the original method and its patch, whose listeners the wrapper reads per call. */
export type WrapperFactory = (original: HostMethodFn, patch: MethodPatch<HandleFeed>) => HostMethodFn;

/**
 * One step of a call's observation, told to one handle: the object the method ran on, the call's
 * first two arguments, and the value of the step (the result, or the error for `failed`).
 */
export type Observe = (feed: HandleFeed, source: unknown, first: unknown, second: unknown, value: unknown) => void;

/** What a patched host method tells each listening handle, and when. */
export interface MethodObservation {
  /** Where a telemetry failure of this method is reported from. */
  readonly site: string;
  /** Before the original runs, for what holds even if it throws (a call counted, an abort settling the streams it ends). */
  readonly before?: Observe;
  /** After the original: its value, or what its promise fulfils with (see `when`). */
  readonly observe?: Observe;
  /** The original threw, or its promise rejected: told the error, which then reaches the host untouched. */
  readonly failed?: Observe;
  /**
   * When `observe` runs: `settled` once the value is known (a promise followed, see `followResult`);
   * `returned` as soon as the original returns or throws, with no value (a cleanup or a close
   * holds whatever the host's method did); `as-returned` with the returned object itself, a
   * promise not followed (a stream is followed by its own observer).
   */
  readonly when: 'settled' | 'returned' | 'as-returned';
  /**
   * After `observe`, the returned object followed once for all listening handles together (a
   * stream is wrapped once, however many handles listen).
   */
  readonly together?: (feeds: readonly HandleFeed[], first: unknown, result: unknown) => void;
}

/**
 * The one shape of every patched host method. Nobody listening: the original alone, one
 * comparison with a constant. Otherwise each listening handle runs the method's observation inside
 * the never-throw guard (a telemetry failure is reported once per call site, never reaches the
 * host), and the host gets the original's value (or a promise of the same outcome) and errors
 * untouched. The named parameters are read, never passed on: `arguments` carries every argument
 * the host gave, and `Reflect.apply`, unlike `original.apply`, needs no check of what `apply` is.
 */
export function wrapperOf(method: MethodObservation): WrapperFactory {
  return (original, patch) =>
    function (this: unknown, first?: unknown, second?: unknown) {
      const feeds = patch.listeners;
      // eslint-disable-next-line prefer-rest-params
      if (feeds === NO_LISTENERS) return Reflect.apply(original, this, arguments) as unknown;
      if (method.before !== undefined) tell(feeds, method.site, method.before, this, first, second, undefined);
      let result: unknown;
      try {
        // eslint-disable-next-line prefer-rest-params
        result = Reflect.apply(original, this, arguments) as unknown;
      } catch (error) {
        if (method.when === 'returned') observeValue(method, feeds, this, first, second, undefined);
        else if (method.failed !== undefined) tell(feeds, method.site, method.failed, this, first, second, error);
        throw error;
      }
      return observeReturn(method, feeds, this, first, second, result);
    };
}

/** The original returned `result`: observed now, or once its promise settles. */
function observeReturn(method: MethodObservation, feeds: readonly HandleFeed[], source: unknown, first: unknown, second: unknown, result: unknown): unknown {
  // A plain value is observed in place: no callback to allocate per call.
  if (method.when !== 'settled' || !isThenable(result)) {
    observeValue(method, feeds, source, first, second, method.when === 'returned' ? undefined : result);
    return result;
  }
  const failed = method.failed;
  return followResult(
    result,
    (value) => observeValue(method, feeds, source, first, second, value),
    failed === undefined ? ignoreReason : (reason) => tell(feeds, method.site, failed, source, first, second, reason),
  );
}

function observeValue(method: MethodObservation, feeds: readonly HandleFeed[], source: unknown, first: unknown, second: unknown, value: unknown): void {
  if (method.observe !== undefined) tell(feeds, method.site, method.observe, source, first, second, value);
  if (method.together === undefined) return;
  try {
    method.together(feeds, first, value);
  } catch (error) {
    for (const feed of feeds) feed.guard.report(method.site, error);
  }
}

/**
 * Tells each listening handle one step of the call, each inside its own guard. The loop indexes
 * the list: one engine poll per replica per tick runs it.
 */
function tell(feeds: readonly HandleFeed[], site: string, step: Observe, source: unknown, first: unknown, second: unknown, value: unknown): void {
  for (let i = 0; i < feeds.length; i++) {
    const feed = feeds[i] as HandleFeed;
    try {
      step(feed, source, first, second, value);
    } catch (error) {
      feed.guard.report(site, error);
    }
  }
}
