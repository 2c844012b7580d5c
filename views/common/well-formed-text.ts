/**
 * Text that reaches an exposition must encode as UTF-8, which a lone UTF-16 surrogate (half of a
 * pair, from a truncated or hostile string) cannot: every encoder replaces it with U+FFFD. Two
 * values that differ only there would then print as one. Values are therefore made well-formed
 * where they are admitted (a series' labels, a request label's value), so that what is counted
 * apart is exactly what prints apart.
 *
 * Node's own `String.prototype.isWellFormed` / `toWellFormed` (ES2024, in every supported Node)
 * do the work; the compiler's `ES2022` library does not declare them yet, hence the one type.
 */
type Es2024String = string & { isWellFormed(): boolean; toWellFormed(): string };

/** Whether `text` has no lone surrogate. */
export function isWellFormedText(text: string): boolean {
  return (text as Es2024String).isWellFormed();
}

/** `text` with every lone surrogate replaced by U+FFFD, as a UTF-8 encoder would. */
export function wellFormedText(text: string): string {
  return (text as Es2024String).toWellFormed();
}
