/**
 * Whether `value` has a callable `then`: a promise, or anything `await` would treat as one. Never
 * throws: a `then` getter that throws makes `value` no thenable here (whoever awaits it meets the
 * error itself).
 */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  try {
    return typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return false;
  }
}
