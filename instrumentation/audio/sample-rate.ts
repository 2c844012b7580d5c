/** vLLM-Omni's `DEFAULT_AUDIO_SAMPLE_RATE`: the rate of most of its talker models. */
export const DEFAULT_AUDIO_SAMPLE_RATE = 24000;

/** The keys tried, in order (vLLM-Omni's `_SAMPLE_RATE_KEYS` since `output_sample_rate` was put first). */
export const SAMPLE_RATE_KEYS: readonly string[] = Object.freeze(['output_sample_rate', 'audio_sample_rate', 'sample_rate', 'sampling_rate', 'sr']);

/**
 * Where a sample rate may be found: a `Map`, a plain object (a `multimodal_output` dict), or any object exposing
 * the keys as properties (a config object).
 */
export type SampleRateSource = ReadonlyMap<string, unknown> | object | null | undefined;

/**
 * The first positive rate found under `SAMPLE_RATE_KEYS`, or `defaultRate`. `source` may also be an array of
 * sources: the first one that yields a rate wins (each source tries every key before the next source).
 * Port of vLLM-Omni's `resolve_audio_sample_rate`; see `coercePositiveInteger` for the accepted values.
 */
export function resolveAudioSampleRate(source: SampleRateSource | readonly SampleRateSource[], defaultRate: number = DEFAULT_AUDIO_SAMPLE_RATE): number {
  return resolveAudioSampleRateOrUndefined(source) ?? defaultRate;
}

/** Like `resolveAudioSampleRate`, but undefined when no source sets a usable rate. */
export function resolveAudioSampleRateOrUndefined(source: SampleRateSource | readonly SampleRateSource[]): number | undefined {
  if (Array.isArray(source)) {
    for (const item of source as readonly SampleRateSource[]) {
      const rate = resolveFromSingleSource(item);
      if (rate !== undefined) return rate;
    }
    return undefined;
  }
  return resolveFromSingleSource(source as SampleRateSource);
}

function resolveFromSingleSource(source: SampleRateSource): number | undefined {
  if (source === null || source === undefined || typeof source !== 'object') return undefined;
  for (const key of SAMPLE_RATE_KEYS) {
    const raw = source instanceof Map ? source.get(key) : (source as Record<string, unknown>)[key];
    const rate = coercePositiveInteger(raw);
    if (rate !== undefined) return rate;
  }
  return undefined;
}

/**
 * vLLM-Omni's `coerce_positive_int_scalar`: the value as Python's `int()` would read it, if that is positive.
 * - number: truncated toward zero (`int(24000.9)` is 24000); NaN and ±Infinity are skipped;
 * - string: only an integer literal, as `int()` parses it (surrounding whitespace, sign, `_` between digits);
 *   `"24000.0"` is skipped because `int("24000.0")` fails;
 * - bigint;
 * - array or typed array (a list / tuple): its first element that coerces;
 * - object with an `item()` method (a tensor or numpy scalar): the scalar it returns; a throwing `item()` is skipped.
 * Anything else (null, undefined, booleans, non-positive values) is skipped.
 */
export function coercePositiveInteger(value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView))) {
    for (const element of value as ArrayLike<unknown> & Iterable<unknown>) {
      const coerced = coercePositiveInteger(element);
      if (coerced !== undefined) return coerced;
    }
    return undefined;
  }
  let scalar: unknown = value;
  const item = typeof value === 'object' ? (value as { item?: unknown }).item : undefined;
  if (typeof item === 'function') {
    try {
      scalar = (item as () => unknown).call(value);
    } catch {
      return undefined;
    }
  }
  const integer = pythonInt(scalar);
  return integer !== undefined && integer > 0 ? integer : undefined;
}

/** Python's `int()` literal grammar: optional sign, decimal digits, single underscores between digits. */
const INTEGER_LITERAL = /^[+-]?\d+(?:_\d+)*$/;

function pythonInt(value: unknown): number | undefined {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? Math.trunc(value) : undefined;
    case 'bigint':
      return Number(value);
    case 'string': {
      const text = value.trim();
      return INTEGER_LITERAL.test(text) ? Number(text.replace(/_/g, '')) : undefined;
    }
    default:
      // Booleans are ints in Python (int(True) == 1), but a flag is never a sample rate.
      return undefined;
  }
}

// The reference pairs the RTF helper with the sample-rate helpers; it lives in its own file.
