import { normalCdf, normalPdf, normalQuantile, normalSf, studentTCdf, studentTQuantile, studentTSf } from './distributions.js';
import type { EffectMoments } from './effect.js';

/*
 * The two engines, on an effect's moments. Frequentist: Welch's t-test (two-sided, or one-sided for guardrails), or
 * asymptotic confidence sequences (Waudby-Smith et al. 2023, arXiv 2103.06476v7) that stay valid however often the
 * results are looked at. Bayesian: a Gaussian posterior on the effect, flat or with a proper Gaussian prior.
 */

export type Side = 'two-sided' | 'greater' | 'lesser';

export interface FrequentistSettings {
  alpha: number;
  side: Side;
  /** Confidence sequences in place of the fixed-horizon test, tuned to N* (the units at which one expects to decide). */
  sequential?: { tuning: number };
}

export interface FrequentistResult {
  estimate: number;
  standardError: number;
  /** [lower, upper]; a one-sided interval's open end is ±Infinity. */
  interval: [number, number];
  pValue: number;
  degreesOfFreedom: number;
}

/** Welch–Satterthwaite degrees of freedom on the arms' per-unit variances. */
export function welchDegreesOfFreedom(moments: EffectMoments): number {
  const { control: a, treatment: b } = moments;
  const va = a.variance / a.units;
  const vb = b.variance / b.units;
  return (va + vb) ** 2 / ((vb * vb) / (b.units - 1) + (va * va) / (a.units - 1));
}

/** ρ of the confidence sequence (eq. 161), for α, N* and the side; a one-sided sequence spends 2α. */
export function sequentialRho(alpha: number, tuning: number, side: Side): number {
  const spent = side === 'two-sided' ? alpha : 2 * alpha;
  const logTerm = -2 * Math.log(spent);
  return Math.sqrt((logTerm + Math.log(logTerm + 1)) / tuning);
}

function sequentialHalfWidth(variancePerUnit: number, n: number, rho: number, alpha: number, side: Side): number {
  const scale = (2 * (n * rho * rho + 1)) / (n * rho) ** 2;
  const root = Math.sqrt(n * rho * rho + 1);
  // eq. 9 (two-sided) and eq. 134 (one-sided)
  const log = side === 'two-sided' ? Math.log(root / alpha) : Math.log(1 + root / (2 * alpha));
  return Math.sqrt(variancePerUnit * scale * log);
}

/** The smallest and largest one-sided sequential p-value reported (GrowthBook's bounds, so vectors compare). */
const ONE_SIDED_SEQUENTIAL_P = { min: 1e-5, max: 0.4999 };

export function frequentistTest(moments: EffectMoments, settings: FrequentistSettings, testValue = 0): FrequentistResult {
  const { estimate, standardError } = moments;
  const { alpha, side } = settings;
  const degreesOfFreedom = welchDegreesOfFreedom(moments);
  if (settings.sequential) {
    const n = moments.control.units + moments.treatment.units;
    const variancePerUnit = standardError * standardError * n;
    const rho = sequentialRho(alpha, settings.sequential.tuning, side);
    const halfWidth = sequentialHalfWidth(variancePerUnit, n, rho, alpha, side);
    const nRho = n * rho * rho + 1;
    if (side === 'two-sided') {
      // eq. 155: the confidence sequence's e-value, a normal-mixture SPRT with mixing variance ρ²s².
      const t2 = ((estimate - testValue) ** 2 * n) / (standardError * standardError);
      const eValue = Math.exp((rho * rho * t2) / (2 * nRho)) / Math.sqrt(nRho);
      return {
        estimate,
        standardError,
        interval: [estimate - halfWidth, estimate + halfWidth],
        pValue: Math.min(1, 1 / eValue),
        degreesOfFreedom,
      };
    }
    // The one-sided p-value is the α at which the sequence's bound reaches the tested value (with ρ held), solved from
    // eq. 134 in closed form: ln(1 + √(nρ²+1)/(2α)) = Δ²(nρ)² / (2s²(nρ²+1)).
    const distance = side === 'greater' ? estimate - testValue : testValue - estimate;
    let pValue: number;
    if (distance <= 0) pValue = ONE_SIDED_SEQUENTIAL_P.max;
    else {
      const exponent = (distance * distance * (n * rho) ** 2) / (2 * variancePerUnit * nRho);
      pValue = Math.sqrt(nRho) / (2 * Math.expm1(exponent));
    }
    pValue = Math.min(ONE_SIDED_SEQUENTIAL_P.max, Math.max(ONE_SIDED_SEQUENTIAL_P.min, pValue));
    const interval: [number, number] =
      side === 'greater' ? [estimate - halfWidth, Number.POSITIVE_INFINITY] : [Number.NEGATIVE_INFINITY, estimate + halfWidth];
    return { estimate, standardError, interval, pValue, degreesOfFreedom };
  }
  const t = (estimate - testValue) / standardError;
  if (side === 'two-sided') {
    const halfWidth = studentTQuantile(1 - alpha / 2, degreesOfFreedom) * standardError;
    return {
      estimate,
      standardError,
      interval: [estimate - halfWidth, estimate + halfWidth],
      pValue: 2 * studentTSf(Math.abs(t), degreesOfFreedom),
      degreesOfFreedom,
    };
  }
  const halfWidth = studentTQuantile(1 - alpha, degreesOfFreedom) * standardError;
  return side === 'greater'
    ? {
        estimate,
        standardError,
        interval: [estimate - halfWidth, Number.POSITIVE_INFINITY],
        pValue: studentTSf(t, degreesOfFreedom),
        degreesOfFreedom,
      }
    : {
        estimate,
        standardError,
        interval: [Number.NEGATIVE_INFINITY, estimate + halfWidth],
        pValue: studentTCdf(t, degreesOfFreedom),
        degreesOfFreedom,
      };
}

export interface GaussianPrior {
  mean: number;
  variance: number;
}

export interface BayesianSettings {
  alpha: number;
  /** A proper prior on the relative effect; none is the improper flat prior, which leaves the data as they are. */
  prior?: GaussianPrior;
  /** Lower is better (a latency, a churn): chance to win and risk turn around. */
  inverse?: boolean;
}

export interface BayesianResult {
  estimate: number;
  standardDeviation: number;
  interval: [number, number];
  chanceToWin: number;
  /** Expected loss of choosing the control, and of choosing the treatment. */
  risk: [number, number];
}

/**
 * P(Δ > 0)·E[Δ | Δ > 0] and −P(Δ < 0)·E[Δ | Δ < 0] of a normal posterior, in closed form: μΦ(μ/σ) + σφ(μ/σ) and
 * σφ(μ/σ) − μΦ(−μ/σ). Past |μ/σ| = 37 one side has no mass left in double precision.
 */
export function expectedLosses(mean: number, sd: number): [number, number] {
  const a = mean / sd;
  if (Math.abs(a) > 37) return [Math.max(mean, 0), Math.max(-mean, 0)];
  const density = sd * normalPdf(a);
  return [mean * normalCdf(a) + density, density - mean * normalCdf(-a)];
}

export function bayesianTest(moments: EffectMoments, settings: BayesianSettings, difference: 'relative' | 'absolute'): BayesianResult {
  const dataVariance = moments.standardError ** 2;
  let prior = settings.prior;
  // The prior is stated on the relative effect; an absolute analysis scales it by the control's mean.
  if (prior && difference === 'absolute') {
    const baseline = moments.control.unadjustedMean;
    prior = { mean: prior.mean * Math.abs(baseline), variance: prior.variance * baseline * baseline };
  }
  const precision = 1 / dataVariance + (prior ? 1 / prior.variance : 0);
  const mean = prior ? (moments.estimate / dataVariance + prior.mean / prior.variance) / precision : moments.estimate;
  const sd = Math.sqrt(1 / precision);
  const ahead = normalSf(-mean / sd);
  const z = normalQuantile(1 - settings.alpha / 2);
  const [lossOfControl, lossOfTreatment] = expectedLosses(mean, sd);
  return {
    estimate: mean,
    standardDeviation: sd,
    interval: [mean - z * sd, mean + z * sd],
    chanceToWin: settings.inverse ? 1 - ahead : ahead,
    risk: settings.inverse ? [lossOfTreatment, lossOfControl] : [lossOfControl, lossOfTreatment],
  };
}
