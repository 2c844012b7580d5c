import { LimitedWarning } from '../../views/common/diag-warnings';

// Recorder methods are public API and take values from untyped hosts. They never throw because
// they never convert a value they have not checked: `typeof` comes before any arithmetic,
// comparison or text, and the series drop what is not a finite number with their own warning.

/** A number above zero; `false` for anything else, without converting it (a Symbol would throw). */
export function isPositive(value: unknown): value is number {
  return typeof value === 'number' && value > 0;
}

/**
 * A negative number becomes 0; anything else is returned as it is, for the series to record or,
 * not being a finite number, to drop with its warning (`Math.max` would throw on a Symbol).
 */
export function clampedAtZero(value: number): number {
  return typeof value === 'number' && value < 0 ? 0 : value;
}

/**
 * The one warning of a recorder that drops a call because the object it was handed could not be
 * read: the caller's getters, proxies and iterators are the caller's code and may throw. A
 * recorder reads such an object into locals inside a `try` of its own and records after it.
 */
export class UnreadableInput {
  private readonly warning = new LimitedWarning();

  constructor(private readonly owner: string) {}

  dropped(method: string): void {
    this.warning.warn(`${this.owner}.${method} dropped a call: reading the object it was given threw`);
  }
}
