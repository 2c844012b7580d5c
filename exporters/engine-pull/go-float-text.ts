/**
 * Number tokens of the Prometheus text format read by a hand-written scanner: one pass over the
 * characters, no regular expression, so a hostile token costs time linear in its length (a
 * backtracking pattern took seconds on a hundred thousand digits). Every token is bounded first.
 */

/** Longest number accepted (`-1.7976931348623157e+308` is 24; exact decimal expansions stay well under). */
export const MAX_NUMBER_CHARS = 128;
/**
 * Longest timestamp accepted: an int64 of milliseconds (0.0.4) has at most 20 characters, a float
 * of seconds as OpenMetrics writers print it (`1.7966091707885659e+09`) about 24.
 */
export const MAX_TIMESTAMP_CHARS = 32;

/**
 * A Go float as Prometheus reads it: decimals, exponents, `±Inf`, `NaN` (case-insensitive, as Go's
 * ParseFloat). Undefined for anything else, for a token longer than `MAX_NUMBER_CHARS`, and for a
 * finite literal beyond the float range (`1e999`: Go's ParseFloat reports a range error there).
 */
export function readGoFloat(text: string): number | undefined {
  if (text.length === 0 || text.length > MAX_NUMBER_CHARS) return undefined;
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf' || lower === '+infinity' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  if (lower === 'nan') return NaN;
  if (!isDecimalLiteral(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** `[+-]?(digits[.digits?] | .digits)([eE][+-]?digits)?`, scanned once. */
function isDecimalLiteral(text: string): boolean {
  let pos = 0;
  if (text[pos] === '+' || text[pos] === '-') pos++;
  const integerStart = pos;
  pos = skipDigits(text, pos);
  const integerDigits = pos - integerStart;
  let fractionDigits = 0;
  if (text[pos] === '.') {
    const fractionStart = ++pos;
    pos = skipDigits(text, pos);
    fractionDigits = pos - fractionStart;
  }
  if (integerDigits === 0 && fractionDigits === 0) return false;
  if (text[pos] === 'e' || text[pos] === 'E') {
    pos++;
    if (text[pos] === '+' || text[pos] === '-') pos++;
    const exponentStart = pos;
    pos = skipDigits(text, pos);
    if (pos === exponentStart) return false;
  }
  return pos === text.length;
}

/** A sample's timestamp, at most `MAX_TIMESTAMP_CHARS` long: `-?digits` (0.0.4's milliseconds) or a decimal number (OpenMetrics' seconds). */
export function isTimestamp(text: string): boolean {
  return text.length > 0 && text.length <= MAX_TIMESTAMP_CHARS && isDecimalLiteral(text);
}

function skipDigits(text: string, start: number): number {
  let pos = start;
  while (pos < text.length) {
    const code = text.charCodeAt(pos);
    if (code < 48 || code > 57) break;
    pos++;
  }
  return pos;
}
