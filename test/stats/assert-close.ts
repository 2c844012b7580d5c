import * as assert from 'node:assert/strict';

/** Microsecond agreement: the precision the brief asks for on interval values that are not exactly representable. */
export const MICROSECOND = 1e-6;

export function assertClose(actual: number, expected: number, label: string, tolerance = MICROSECOND): void {
  assert.ok(Number.isFinite(actual) && Math.abs(actual - expected) < tolerance, `${label}: expected ${expected} (±${tolerance}), got ${actual}`);
}

export function assertAllClose(actual: readonly number[], expected: readonly number[], label: string): void {
  assert.equal(actual.length, expected.length, `${label}: expected ${expected.length} values, got [${actual.join(', ')}]`);
  expected.forEach((value, index) => assertClose(actual[index], value, `${label}[${index}]`));
}
