/**
 * Number formatting exactly as Python's prometheus_client prints it (`floatToGoString`), so our
 * output is byte-identical to vLLM's: `1.0`, `0.3`, `1e-05`, `1e+06`, `2.097152e+06`, `1e+10`,
 * `+Inf`, `NaN`. The exponent is that of current clients (and of Go): prometheus_client 0.16
 * printed `1e+010` for values from 1e10 up, the one place its bytes differ.
 */
export function formatGoFloat(value: number): string {
  // Whole numbers below a million print as `<n>.0` in both languages: the common case (counts), without the float path.
  if (Number.isInteger(value) && value < 1e6 && value > -1e15 && !Object.is(value, -0)) return `${value}.0`;
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  // Between 1e-4 and 1e16 both languages print the shortest round-trip digits in fixed notation:
  // JavaScript's own conversion is Python's repr there (whole numbers were handled above), and much cheaper.
  const magnitude = Math.abs(value);
  const repr = magnitude >= 1e-4 && magnitude < 1e16 && !Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  const dot = repr.indexOf('.');
  // Go switches to exponent form sooner than Python for large positive values; the exponent has two digits at least.
  if (value > 0 && dot > 6) {
    const mantissa = `${repr[0]}.${repr.slice(1, dot)}${repr.slice(dot + 1)}`.replace(/[0.]+$/, '');
    return `${mantissa}e+${String(dot - 1).padStart(2, '0')}`;
  }
  return repr;
}

/** Python's `repr(float)` (also its `str()`): shortest round-trip digits, fixed notation for exponents in [-4, 16). */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Object.is(value, -0)) return '-0.0';
  if (value === 0) return '0.0';
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  let fixed: string;
  if (exponent < 0) {
    fixed = `0.${'0'.repeat(-exponent - 1)}${digits}`;
  } else if (digits.length > exponent + 1) {
    fixed = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
  } else {
    fixed = `${digits}${'0'.repeat(exponent + 1 - digits.length)}.0`;
  }
  return negative ? `-${fixed}` : fixed;
}
