/**
 * Python's `%.Nf` and `%d`, so log lines match vLLM's character for character.
 *
 * `Number.prototype.toFixed` and Python both round the exact binary value, and agree except on exact ties
 * (0.25, 1.25, 2.5, ...): JavaScript rounds those away from zero, Python to the even digit ('%.1f' % 0.25 is '0.2').
 */
export function formatFixed(value: number, digits: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  const sign = value < 0 || Object.is(value, -0) ? '-' : '';
  const magnitude = Math.abs(value);
  const tie = exactTieDigits(magnitude, digits);
  return sign + (tie ?? magnitude.toFixed(digits));
}

/**
 * The digits Python prints when `magnitude` lies exactly halfway between two `digits`-decimal numbers, else
 * undefined. Such a value is m / 2^(digits+1) with m odd (the 5^digits part of the decimal denominator must
 * cancel), so multiplying by a power of two, which is exact, detects it.
 */
function exactTieDigits(magnitude: number, digits: number): string | undefined {
  const halfUnits = magnitude * 2 ** (digits + 1);
  if (!Number.isSafeInteger(halfUnits) || halfUnits % 2 === 0) return undefined;
  const scaledTwice = halfUnits * 5 ** digits; // 2 * magnitude * 10^digits, an odd integer
  if (!Number.isSafeInteger(scaledTwice)) return undefined;
  const below = (scaledTwice - 1) / 2;
  const rounded = below % 2 === 0 ? below : below + 1;
  const text = String(rounded).padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** Python's `%d`: truncates toward zero. */
export function formatInteger(value: number): string {
  if (!Number.isFinite(value)) return formatFixed(value, 0);
  const truncated = Math.trunc(value);
  return String(truncated === 0 ? 0 : truncated);
}
