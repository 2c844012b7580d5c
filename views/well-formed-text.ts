/**
 * Text that reaches an exposition must encode as UTF-8, which a lone UTF-16 surrogate (half of a
 * pair, from a truncated or hostile string) cannot: every encoder replaces it with U+FFFD. Two
 * values that differ only there would then print as one. Values are therefore made well-formed
 * where they are admitted (a series' labels, a request label's value), so that what is counted
 * apart is exactly what prints apart. `\p{Cs}` with the `u` flag matches only lone surrogates: a
 * well-formed pair is one code point.
 */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;

/** Whether `text` has no lone surrogate (`String.prototype.isWellFormed`, of ES2024). */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** `text` with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder would (`String.prototype.toWellFormed`). */
export function wellFormedText(text: string): string {
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\uFFFD') : text;
}
