import betainc from '@stdlib/math-base-special-betainc';
import erfc from '@stdlib/math-base-special-erfc';
import gammainc from '@stdlib/math-base-special-gammainc';
import gammaln from '@stdlib/math-base-special-gammaln';
import normalQuantileOf from '@stdlib/stats-base-dists-normal-quantile';
import studentTQuantileOf from '@stdlib/stats-base-dists-t-quantile';

/*
 * The distributions the engine needs, on stdlib's special functions (ports of Cephes and Boost). Tails are computed
 * as tails (the regularized upper incomplete gamma, erfc), never as 1 − cdf, so a p-value of 1e-12 keeps its digits.
 */

/** Φ(x), the standard normal's distribution function. */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / Math.SQRT2);
}

/** 1 − Φ(x), computed as a tail. */
export function normalSf(x: number): number {
  return 0.5 * erfc(x / Math.SQRT2);
}

/** φ(x), the standard normal's density. */
export function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
}

/** Φ⁻¹(p). */
export function normalQuantile(p: number): number {
  return normalQuantileOf(p, 0, 1);
}

/** P(T > t) for Student's t with `df` degrees of freedom (df may be fractional, as Welch's is). */
export function studentTSf(t: number, df: number): number {
  // P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2); for small |t| the upper form of the mirrored integral keeps the digits near ½.
  const t2 = t * t;
  const twoTailed = t2 < df ? betainc(t2 / (df + t2), 0.5, df / 2, true, true) : betainc(df / (df + t2), df / 2, 0.5);
  return t >= 0 ? twoTailed / 2 : 1 - twoTailed / 2;
}

/** P(T ≤ t). */
export function studentTCdf(t: number, df: number): number {
  return studentTSf(-t, df);
}

/** The t distribution's density. */
export function studentTPdf(t: number, df: number): number {
  const logNormalizer = gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * Math.log(df * Math.PI);
  return Math.exp(logNormalizer - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/**
 * The t distribution's quantile: stdlib's inversion, polished by two Newton steps on the distribution function
 * (stdlib's answer alone is off by up to ~1e-9 relative at fractional degrees of freedom; the steps take it to ~1e-15).
 */
export function studentTQuantile(p: number, df: number): number {
  let t = studentTQuantileOf(p, df);
  if (!Number.isFinite(t)) return t;
  for (let step = 0; step < 2; step++) {
    const density = studentTPdf(t, df);
    if (!(density > 0)) break;
    t -= (studentTCdf(t, df) - p) / density;
  }
  return t;
}

/** P(X > x) for χ² with `df` degrees of freedom. */
export function chiSquareSf(x: number, df: number): number {
  if (x <= 0) return 1;
  return gammainc(x / 2, df / 2, true, true);
}
