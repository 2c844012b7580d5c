import { LimitedWarning } from '../../views/diag-warnings';

type Method = (this: unknown, a?: unknown, b?: unknown, c?: unknown, d?: unknown, e?: unknown) => unknown;

/**
 * Makes the named methods of a recorder unable to throw into the host: a call that fails (an
 * argument of a type no caller should pass, a getter that throws) is dropped with one
 * rate-limited diag warning per method, and returns undefined. Called at the end of a recorder's
 * constructor; the wrapper takes up to five arguments, as many as any recorder method has.
 */
export function neverThrow<T extends object>(recorder: T, owner: string, names: ReadonlyArray<keyof T & string>): void {
  for (const name of names) {
    const method = recorder[name] as unknown as Method;
    const warning = new LimitedWarning();
    Object.defineProperty(recorder, name, {
      configurable: true,
      writable: true,
      value: function (this: unknown, a?: unknown, b?: unknown, c?: unknown, d?: unknown, e?: unknown): unknown {
        try {
          return method.call(this, a, b, c, d, e);
        } catch (error) {
          warning.warn(`${owner}.${name} dropped a call it could not record (${error instanceof Error ? error.message : typeof error})`);
          return undefined;
        }
      },
    });
  }
}

/** A number above zero; `false` for anything else, without converting it (a Symbol would throw). */
export function isPositive(value: unknown): value is number {
  return typeof value === 'number' && value > 0;
}
