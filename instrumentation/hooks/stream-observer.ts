import type { OmniRequestOutput } from '../pipeline/host-contract';
import type { GenerateOutcome } from '../pipeline/pipeline-observer';
import { ResultFollower, type TelemetryGuard } from './telemetry-guard';

export interface StreamCallbacks {
  output(value: OmniRequestOutput): void;
  ended(outcome: GenerateOutcome): void;
  /** False once the instrumentation is disabled: the stream then behaves as if never observed. */
  active(): boolean;
}

type AnyIterator = AsyncIterator<OmniRequestOutput> & Record<PropertyKey, unknown>;
type Step = IteratorResult<OmniRequestOutput>;

/**
 * The intrinsic `next` of async generator objects, read before any host code could replace it:
 * what it returns is always a fresh native promise with nothing of its own, so a stream whose
 * `next` it is needs no per-step check of what its steps are.
 */
const ASYNC_GENERATOR_NEXT = (Object.getPrototypeOf(async function* () {}) as { prototype: AsyncGenerator }).prototype.next;

/**
 * Observes an async iterable of outputs without replacing it: the host's object stays the host's,
 * with its own `next` / `return` / `throw` shadowed on the instance by versions that call the
 * originals, hand back the originals' very promises, and watch them on side branches.
 *
 * Returns the stream's lifetime: a small object that lives exactly as long as the stream (the
 * iterable and the iterator it hands out) and references nothing, to register for collection.
 * A stream that cannot be observed (not iterable, frozen, a Proxy that refuses new properties)
 * is left exactly as it was, and undefined comes back: the caller does not track it.
 */
export function observeStream(iterable: unknown, guard: TelemetryGuard, callbacks: StreamCallbacks): object | undefined {
  if (typeof iterable !== 'object' || iterable === null) return undefined;
  const target = iterable as AnyIterator & AsyncIterable<OmniRequestOutput>;
  const lifetime = { observed: false };
  if (typeof target.next === 'function') return patchIterator(target, guard, callbacks, lifetime) ? lifetime : undefined;
  const makeIterator = target[Symbol.asyncIterator];
  if (typeof makeIterator !== 'function') return undefined;
  // A plain iterable: observe the iterator it hands out (only the first consumer is observed).
  const shadowed = shadowAll(target, [
    [
      Symbol.asyncIterator,
      function (this: unknown) {
        const iterator = makeIterator.call(this) as AnyIterator;
        if (!lifetime.observed && typeof iterator?.next === 'function') {
          // An iterator that cannot be observed ends the request's tracking at once, uncounted.
          if (!patchIterator(iterator, guard, callbacks, lifetime)) guard.run('generate stream end', () => callbacks.ended('unobserved'));
        }
        return iterator;
      },
    ],
  ]);
  return shadowed ? lifetime : undefined;
}

/**
 * One observed iterator: whether its stream has ended, and the reactions that follow its steps,
 * made once per stream (a stream yields hundreds of outputs).
 */
class IteratorWatch {
  ended = false;
  readonly steps: ResultFollower<Step>;

  constructor(
    private readonly guard: TelemetryGuard,
    private readonly callbacks: StreamCallbacks,
    /** Held here so that it lives as long as the iterator's shadows. */
    readonly lifetime: StreamLifetime,
  ) {
    this.steps = new ResultFollower<Step>(
      (step) => this.stepped(step),
      () => this.end('failed'),
    );
  }

  end(outcome: GenerateOutcome): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.callbacks.ended(outcome);
    } catch (error) {
      this.guard.report('generate stream end', error);
    }
  }

  private stepped(step: Step): void {
    // A step is the host's object: a throwing `done` getter must not reach the follower promise.
    try {
      if (step?.done) this.end('completed');
      else this.callbacks.output(step.value);
    } catch (error) {
      this.guard.report('generate stream output', error);
    }
  }
}

/** What `observeStream` hands back: whether the stream's iterator is observed yet. */
interface StreamLifetime {
  observed: boolean;
}

function patchIterator(iterator: AnyIterator, guard: TelemetryGuard, callbacks: StreamCallbacks, lifetime: StreamLifetime): boolean {
  lifetime.observed = true;
  const watch = new IteratorWatch(guard, callbacks, lifetime);
  const next = iterator.next as (...args: unknown[]) => Promise<Step>;
  const plainSteps = next === ASYNC_GENERATOR_NEXT;
  const nextShadow = function (this: unknown): unknown {
    // eslint-disable-next-line prefer-rest-params
    if (watch.ended || !callbacks.active()) return Reflect.apply(next, this, arguments) as unknown;
    let result: Promise<Step>;
    try {
      // eslint-disable-next-line prefer-rest-params
      result = Reflect.apply(next, this, arguments) as Promise<Step>;
    } catch (error) {
      watch.end('failed');
      throw error;
    }
    return watch.steps.follow(result, plainSteps);
  };
  const shadows: Shadow[] = [['next', nextShadow]];
  // The consumer leaving early (`break` out of `for await`, or throwing into the stream) is an abandonment.
  for (const method of LEAVING) {
    const original = iterator[method] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof original !== 'function') continue;
    shadows.push([
      method,
      function (this: unknown) {
        if (callbacks.active()) watch.end('abandoned');
        // eslint-disable-next-line prefer-rest-params
        return Reflect.apply(original, this, arguments) as unknown;
      },
    ]);
  }
  return shadowAll(iterator, shadows);
}

const LEAVING = ['return', 'throw'] as const;

type Shadow = [PropertyKey, (...args: unknown[]) => unknown];

/**
 * Defines every shadow on the instance, or none: an object that refuses one (frozen, sealed, a
 * Proxy whose trap says no or throws) gets back exactly the properties it had, its own methods
 * included.
 */
function shadowAll(target: object, shadows: readonly Shadow[]): boolean {
  // What each shadowed name was before: undefined when inherited (the usual case, read without allocating).
  const before: Array<PropertyDescriptor | undefined> = [];
  try {
    for (const [name, value] of shadows) {
      const own = Object.prototype.hasOwnProperty.call(target, name) ? Reflect.getOwnPropertyDescriptor(target, name) : undefined;
      if (!Reflect.defineProperty(target, name, { configurable: true, writable: true, enumerable: false, value })) break;
      before.push(own);
    }
  } catch {
    // A Proxy trap that throws: treated as a refusal.
  }
  if (before.length === shadows.length) return true;
  try {
    before.forEach((own, i) => {
      const name = (shadows[i] as Shadow)[0];
      if (own === undefined) Reflect.deleteProperty(target, name);
      else Reflect.defineProperty(target, name, own);
    });
  } catch {
    // Nothing more can be undone on an object that refuses.
  }
  return false;
}
