import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { formatGoFloat, pythonFloatRepr } from '../../views/common/go-float';
import { needPeer } from '../support/peers/need-peer';
import { debianPython } from '../support/python-parity';

describe('formatGoFloat', () => {
  // Pairs produced by Python prometheus_client's floatToGoString (the code vLLM's /metrics uses), as current clients print them.
  const cases: Array<[number, string]> = [
    [0, '0.0'],
    [1, '1.0'],
    [0.3, '0.3'],
    [1024, '1024.0'],
    [1e6, '1e+06'],
    [2097152, '2.097152e+06'],
    [8589934592, '8.589934592e+09'],
    [1e10, '1e+10'],
    [1.0000260000005e12, '1.0000260000005e+12'],
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

describe("pythonFloatRepr (Python's str() of a float), checked against Python itself", function () {
  needPeer('debian-prometheus-client', this);
  it('prints exactly what /usr/bin/python3 prints for edge values and 400 random doubles', () => {
    const edges = [
      4,
      0.9,
      0,
      -0,
      1e16,
      1e15,
      9999999999999998,
      1.5e-5,
      1e-4,
      1.2e-4,
      -2.5,
      1e-7,
      5e-324,
      Number.MAX_VALUE,
      0.1 + 0.2,
      1e22,
      100,
      NaN,
      Infinity,
      -Infinity,
    ];
    const random = fc.sample(fc.double(), { numRuns: 400, seed: 20261124 });
    const values = [...edges, ...random];
    // Python reads each double from its exact bit pattern, so nothing is lost on the way.
    const hex = values.map((value) => Buffer.from(new Float64Array([value]).buffer).toString('hex')).join('\n');
    const python = execFileSync(
      debianPython(),
      ['-c', "import struct,sys\nfor h in sys.stdin.read().split():\n print(str(struct.unpack('<d', bytes.fromhex(h))[0]))"],
      { input: hex, encoding: 'utf8' },
    );
    assert.deepEqual(values.map(pythonFloatRepr), python.trim().split('\n'));
  });
});
