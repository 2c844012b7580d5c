import * as assert from 'node:assert/strict';

import { formatFixed, formatInteger } from '../../instrumentation/stats/python-format';

describe("python-format (Python's %.Nf and %d)", () => {
  // Expected strings printed by CPython 3: '%.1f' % value and '%.0f' % value.
  const cases: Array<[number, string, string]> = [
    [0.25, '0.2', '0'],
    [0.35, '0.3', '0'],
    [0.75, '0.8', '1'],
    [1.25, '1.2', '1'],
    [0.05, '0.1', '0'],
    [-0.25, '-0.2', '-0'],
    [-0, '-0.0', '-0'],
    [-0.01, '-0.0', '-0'],
    [0.15, '0.1', '0'],
    [10.85, '10.8', '11'],
    [2.5, '2.5', '2'],
    [1e-9, '0.0', '0'],
    [12345.65, '12345.6', '12346'],
    [0.001 * 100, '0.1', '0'],
    [(6 / 7) * 100, '85.7', '86'],
  ];
  for (const [value, oneDecimal, noDecimal] of cases) {
    it(`formats ${Object.is(value, -0) ? '-0' : value} as ${oneDecimal} / ${noDecimal}`, () => {
      assert.equal(formatFixed(value, 1), oneDecimal);
      assert.equal(formatFixed(value, 0), noDecimal);
    });
  }

  it('prints non-finite values as Python does', () => {
    assert.equal(formatFixed(Number.NaN, 1), 'nan');
    assert.equal(formatFixed(Number.POSITIVE_INFINITY, 1), 'inf');
    assert.equal(formatFixed(Number.NEGATIVE_INFINITY, 1), '-inf');
  });

  it('truncates integers like %d', () => {
    assert.equal(formatInteger(3.7), '3');
    assert.equal(formatInteger(-3.7), '-3');
    assert.equal(formatInteger(-0.5), '0');
    assert.equal(formatInteger(42), '42');
  });
});
