import type { OmniRequestOutput } from './host-contract';
import type { GenerateOutcome } from './pipeline-observer';
import type { TelemetryGuard } from './telemetry-guard';

export interface StreamCallbacks {
  output(value: OmniRequestOutput): void;
  ended(outcome: GenerateOutcome): void;
  /** False once the instrumentation is disabled: the stream then behaves as if never observed. */
  active(): boolean;
}

type AnyIterator = AsyncIterator<OmniRequestOutput> & Record<PropertyKey, unknown>;

/**
 * Observes an async iterable of outputs without replacing it: the host's object is returned as is,
 * with its own `next` / `return` / `throw` shadowed on the instance by versions that call the
 * originals, hand back the originals' very promises, and watch them on side branches.
 */
export function observeStream<T>(iterable: T, guard: TelemetryGuard, callbacks: StreamCallbacks): T {
  if (typeof iterable !== 'object' || iterable === null) return iterable;
  const target = iterable as unknown as AnyIterator & AsyncIterable<OmniRequestOutput>;
  if (typeof target.next === 'function') {
    patchIterator(target, guard, callbacks);
    return iterable;
  }
  const makeIterator = target[Symbol.asyncIterator];
  if (typeof makeIterator !== 'function') return iterable;
  // A plain iterable: observe the iterator it hands out (only the first consumer is observed).
  let observed = false;
  Object.defineProperty(target, Symbol.asyncIterator, {
    configurable: true,
    writable: true,
    value: function (this: unknown) {
      const iterator = makeIterator.call(this) as AnyIterator;
      if (!observed && typeof iterator?.next === 'function') {
        observed = true;
        patchIterator(iterator, guard, callbacks);
      }
      return iterator;
    },
  });
  return iterable;
}

function patchIterator(iterator: AnyIterator, guard: TelemetryGuard, callbacks: StreamCallbacks): void {
  let ended = false;
  const end = (outcome: GenerateOutcome): void => {
    if (ended) return;
    ended = true;
    guard.run('generate stream end', () => callbacks.ended(outcome));
  };

  const next = iterator.next as (...args: unknown[]) => Promise<IteratorResult<OmniRequestOutput>>;
  shadow(iterator, 'next', function (this: unknown, ...args: unknown[]) {
    if (ended || !callbacks.active()) return next.apply(this, args);
    let result: Promise<IteratorResult<OmniRequestOutput>>;
    try {
      result = next.apply(this, args);
    } catch (error) {
      end('failed');
      throw error;
    }
    Promise.resolve(result).then(
      (step) => {
        if (step?.done) end('completed');
        else guard.run('generate stream output', () => callbacks.output(step.value));
      },
      () => end('failed'),
    );
    return result;
  });

  for (const method of ['return', 'throw'] as const) {
    const original = iterator[method] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof original !== 'function') continue;
    shadow(iterator, method, function (this: unknown, ...args: unknown[]) {
      if (callbacks.active()) end('abandoned');
      return original.apply(this, args);
    });
  }
}

function shadow(target: object, name: string, value: (...args: unknown[]) => unknown): void {
  Object.defineProperty(target, name, { configurable: true, writable: true, enumerable: false, value });
}
