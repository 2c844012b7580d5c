/**
 * Checks for options a user passes in: each failure names the option (its dotted path) and what
 * it accepts, so a typo or a wrong type fails at startup with a message that says how to fix it.
 * Every public constructor and `registerOmniMetrics` run these before anything is built.
 */
import { redactedUrl } from './redaction';

/** A bad option: `option` is its dotted path (`prometheus.port`). */
export class OmniOptionError extends TypeError {
  constructor(
    /** The bad option's dotted path (`prometheus.port`). */
    readonly option: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`omni-otel-metrics: ${message}`, options);
    this.name = 'OmniOptionError';
  }
}

/**
 * Runs the check of one option group, so that whatever it refuses reaches the caller as an
 * `OmniOptionError` for `option` (the original error as its `cause`), like every other bad option.
 */
export function checked<T>(option: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof OmniOptionError || !(error instanceof Error)) throw error;
    throw new OmniOptionError(option, error.message, { cause: error });
  }
}

/**
 * How a rejected value is shown: a string quoted and named as one (`'9464'` where a number belongs
 * must not read as `9464`), a URL object redacted (its userinfo), a number as JavaScript prints it
 * (`NaN`, not JSON's `null`), everything else as JSON where it can be. Options that take URLs or
 * headers redact strings themselves.
 */
export function shown(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (value instanceof URL) return `the URL object ${JSON.stringify(redactedUrl(value))}`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'symbol' || value === undefined) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function fail(option: string, expected: string, value: unknown): never {
  throw new OmniOptionError(option, `${option} must be ${expected}; got ${shown(value)}`);
}

/**
 * `value` is a plain options object whose keys are all in `accepted`; an unknown key is refused
 * with the closest accepted one when it differs only in case or by a letter or two.
 */
export function checkObject(value: unknown, option: string, accepted: readonly string[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(option === '' ? 'options' : option, 'an object', value);
  for (const key of Object.keys(value)) {
    if (accepted.includes(key)) continue;
    const path = option === '' ? key : `${option}.${key}`;
    throw new OmniOptionError(
      path,
      `unknown option ${JSON.stringify(path)}${didYouMean(key, accepted)}; ${option === '' ? 'options' : option} accepts ${accepted.join(', ')}`,
    );
  }
}

export function checkOneOf<T>(value: unknown, option: string, accepted: readonly T[]): asserts value is T | undefined {
  if (value !== undefined && !accepted.includes(value as T)) {
    throw new OmniOptionError(
      option,
      `${option} must be one of ${accepted.map((one) => JSON.stringify(one)).join(', ')}; got ${shown(value)}${didYouMean(value, accepted)}`,
    );
  }
}

/**
 * ` (did you mean "x"?)` when a refused value is a string close to exactly one accepted one (a typo,
 * another case, or the start of a longer name: `orchestrator` for `orchestratorClass`), else ''.
 */
export function didYouMean(value: unknown, accepted: readonly unknown[]): string {
  if (typeof value !== 'string') return '';
  const guess = closest(
    value,
    accepted.filter((one): one is string => typeof one === 'string'),
  );
  return guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`;
}

export function checkBoolean(value: unknown, option: string): asserts value is boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') fail(option, 'true or false', value);
}

export function checkString(value: unknown, option: string): asserts value is string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value === '')) fail(option, 'a non-empty string', value);
}

export function checkPositiveInteger(value: unknown, option: string): asserts value is number | undefined {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) > 0)) fail(option, 'a positive integer', value);
}

export function checkNonNegativeNumber(value: unknown, option: string): asserts value is number | undefined {
  if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) fail(option, 'a finite number ≥ 0', value);
}

export function checkPositiveNumber(value: unknown, option: string): asserts value is number | undefined {
  if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) fail(option, 'a finite number > 0', value);
}

export function checkArray(value: unknown, option: string): asserts value is readonly unknown[] | undefined {
  if (value !== undefined && !Array.isArray(value)) fail(option, 'an array', value);
}

/** `value` has every listed method (a duck-typed object from the user: a sink, a provider). */
export function checkMethods(value: unknown, option: string, methods: readonly string[]): void {
  if (value === undefined) return;
  const record = value as Record<string, unknown> | null;
  if (typeof value !== 'object' || record === null || methods.some((name) => typeof record[name] !== 'function')) {
    fail(option, `an object with ${methods.map((name) => `${name}()`).join(' and ')}`, value);
  }
}

/**
 * The accepted name nearest `key` ignoring case, if exactly one is nearest: within edit distance 2,
 * or (for a key of 4 letters or more) one that starts with it or that it starts with.
 */
function closest(key: string, accepted: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const distanceTo = (candidate: string): number => {
    const other = candidate.toLowerCase();
    const distance = editDistance(other, lower);
    if (distance <= 2) return distance;
    return lower.length >= 4 && (other.startsWith(lower) || lower.startsWith(other)) ? 3 : Infinity;
  };
  const ranked = accepted.map((candidate) => ({ candidate, distance: distanceTo(candidate) })).filter((one) => one.distance < Infinity);
  const best = Math.min(...ranked.map((one) => one.distance));
  const nearest = ranked.filter((one) => one.distance === best);
  return nearest.length === 1 ? nearest[0]?.candidate : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The keys of an options type, listed once: the compiler refuses a list that misses a key or
 * names one the type does not have, so the accepted keys cannot drift from the documented type.
 */
export function optionKeys<T>(keys: { readonly [K in keyof Required<T>]: true }): readonly string[] {
  return Object.keys(keys);
}
