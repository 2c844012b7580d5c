import type { OmniRequestOutput } from '../pipeline/host-contract';
import type { GenerateOutcome } from '../pipeline/pipeline-observer';
import { followResult, type TelemetryGuard } from './telemetry-guard';

export interface StreamCallbacks {
  output(value: OmniRequestOutput): void;
  ended(outcome: GenerateOutcome): void;
  /** False once the instrumentation is disabled: the stream then behaves as if never observed. */
  active(): boolean;
}

type AnyIterator = AsyncIterator<OmniRequestOutput> & Record<PropertyKey, unknown>;

/**
 * Observes an async iterable of outputs without replacing it: the host's object stays the host's,
 * with its own `next` / `return` / `throw` shadowed on the instance by versions that call the
 * originals, hand back the originals' very promises, and watch them on side branches.
 *
 * Returns whether the stream is observed. One that cannot be (not iterable, frozen, a Proxy that
 * refuses new properties) is left exactly as it was, and the caller does not track it.
 */
export function observeStream(iterable: unknown, guard: TelemetryGuard, callbacks: StreamCallbacks): boolean {
  if (typeof iterable !== 'object' || iterable === null) return false;
  const target = iterable as AnyIterator & AsyncIterable<OmniRequestOutput>;
  if (typeof target.next === 'function') return patchIterator(target, guard, callbacks);
  const makeIterator = target[Symbol.asyncIterator];
  if (typeof makeIterator !== 'function') return false;
  // A plain iterable: observe the iterator it hands out (only the first consumer is observed).
  let observed = false;
  return shadowAll(target, [
    [
      Symbol.asyncIterator,
      function (this: unknown) {
        const iterator = makeIterator.call(this) as AnyIterator;
        if (!observed && typeof iterator?.next === 'function') {
          observed = true;
          // An iterator that cannot be observed ends the request's tracking at once, uncounted.
          if (!patchIterator(iterator, guard, callbacks)) guard.run('generate stream end', () => callbacks.ended('unobserved'));
        }
        return iterator;
      },
    ],
  ]);
}

function patchIterator(iterator: AnyIterator, guard: TelemetryGuard, callbacks: StreamCallbacks): boolean {
  let ended = false;
  const end = (outcome: GenerateOutcome): void => {
    if (ended) return;
    ended = true;
    guard.run('generate stream end', () => callbacks.ended(outcome));
  };

  // Made once per stream, not per step: a stream yields hundreds of outputs.
  const stepped = (step: IteratorResult<OmniRequestOutput>): void => {
    // A step is the host's object: a throwing `done` getter must not reach the follower promise.
    try {
      if (step?.done) end('completed');
      else callbacks.output(step.value);
    } catch (error) {
      guard.report('generate stream output', error);
    }
  };
  const failed = (): void => end('failed');
  const next = iterator.next as (...args: unknown[]) => Promise<IteratorResult<OmniRequestOutput>>;
  const shadows: Array<[PropertyKey, (...args: unknown[]) => unknown]> = [];
  shadows.push([
    'next',
    function (this: unknown) {
      // eslint-disable-next-line prefer-rest-params
      if (ended || !callbacks.active()) return Reflect.apply(next, this, arguments) as unknown;
      let result: Promise<IteratorResult<OmniRequestOutput>>;
      try {
        // eslint-disable-next-line prefer-rest-params
        result = Reflect.apply(next, this, arguments) as Promise<IteratorResult<OmniRequestOutput>>;
      } catch (error) {
        end('failed');
        throw error;
      }
      return followResult(result, stepped, failed);
    },
  ]);

  for (const method of ['return', 'throw'] as const) {
    const original = iterator[method] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof original !== 'function') continue;
    shadows.push([
      method,
      function (this: unknown, ...args: unknown[]) {
        if (callbacks.active()) end('abandoned');
        return Reflect.apply(original, this, args) as unknown;
      },
    ]);
  }
  return shadowAll(iterator, shadows);
}

/**
 * Defines every shadow on the instance, or none: an object that refuses one (frozen, sealed, a
 * Proxy whose trap says no or throws) gets back exactly the properties it had.
 */
function shadowAll(target: object, shadows: ReadonlyArray<[PropertyKey, (...args: unknown[]) => unknown]>): boolean {
  const done: PropertyKey[] = [];
  try {
    for (const [name, value] of shadows) {
      if (!Reflect.defineProperty(target, name, { configurable: true, writable: true, enumerable: false, value })) break;
      done.push(name);
    }
  } catch {
    // A Proxy trap that throws: treated as a refusal.
  }
  if (done.length === shadows.length) return true;
  try {
    for (const name of done) Reflect.deleteProperty(target, name);
  } catch {
    // Nothing more can be undone on an object that refuses; its own methods were never replaced.
  }
  return false;
}
