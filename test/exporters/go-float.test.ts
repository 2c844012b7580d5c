import assert from 'node:assert/strict';
import { formatGoFloat } from '../../views/go-float';

describe('formatGoFloat', () => {
  // Pairs produced by Python prometheus_client's floatToGoString (the code vLLM's /metrics uses).
  const cases: Array<[number, string]> = [
    [0, '0.0'],
    [1, '1.0'],
    [0.3, '0.3'],
    [1024, '1024.0'],
    [1e6, '1e+06'],
    [2097152, '2.097152e+06'],
    [8589934592, '8.589934592e+09'],
    [1e10, '1e+010'],
    [0.00001, '1e-05'],
    [0.0001, '0.0001'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [123.456, '123.456'],
    [-1, '-1.0'],
    [-1000000, '-1000000.0'],
    [0.30000000000000004, '0.30000000000000004'],
    [1700000000.123, '1.700000000123e+09'],
    [1e-7, '1e-07'],
    [1234567.5, '1.2345675e+06'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [NaN, 'NaN'],
    [-0, '-0.0'],
  ];
  for (const [value, expected] of cases) {
    it(`${String(value)} → ${expected}`, () => assert.equal(formatGoFloat(value), expected));
  }
});
