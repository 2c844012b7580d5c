/** Welch's two-sample t-test: is the difference of two means larger than their noise? */
export interface WelchResult {
  readonly meanA: number;
  readonly meanB: number;
  readonly t: number;
  /** Welch–Satterthwaite degrees of freedom. */
  readonly df: number;
  /** Two-sided p-value. */
  readonly p: number;
}

export function welch(a: readonly number[], b: readonly number[]): WelchResult {
  const meanA = mean(a);
  const meanB = mean(b);
  const va = variance(a, meanA) / a.length;
  const vb = variance(b, meanB) / b.length;
  const t = (meanA - meanB) / Math.sqrt(va + vb);
  const df = (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1));
  const p = Number.isFinite(t) ? incompleteBeta(df / (df + t * t), df / 2, 0.5) : Number.NaN;
  return { meanA, meanB, t, df, p };
}

export function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function variance(values: readonly number[], m: number): number {
  return values.reduce((sum, value) => sum + (value - m) ** 2, 0) / (values.length - 1);
}

/** The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  if (x > (a + 1) / (a + b + 2)) return 1 - (front * continuedFraction(1 - x, b, a)) / b;
  return (front * continuedFraction(x, a, b)) / a;
}

function continuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let result = d;
  for (let m = 1; m <= 300; m++) {
    for (const numerator of [(m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)), (-(a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))]) {
      d = 1 + numerator * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + numerator / c;
      if (Math.abs(c) < tiny) c = tiny;
      result *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-12) break;
  }
  return result;
}

/** ln Γ(z), Lanczos approximation (g = 7, n = 9). */
function logGamma(z: number): number {
  const coefficients = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  const x = z - 1;
  let sum = coefficients[0] as number;
  for (let i = 1; i < 9; i++) sum += (coefficients[i] as number) / (x + i);
  const t = x + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(sum);
}
