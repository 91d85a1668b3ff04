/*
 * A metric's effect between two variants, from per-variant sufficient statistics (GrowthBook's gbstats method, from
 * its published formulas): each variant's metric is a smooth function of the means of a few per-unit variables, and
 * its variance the delta method's ∇ᵀΛ∇ over their covariance matrix Λ.
 *
 *   shape            variables                      metric value
 *   plain            y                              ȳ
 *   ratio            m, d                           m̄ / d̄
 *   adjusted         y, x (pre-exposure y)          ȳ − θ x̄                (CUPED)
 *   adjusted-ratio   m, d, m′, d′ (pre-exposure)    m̄/d̄ − θ m̄′/d̄′          (CUPED on a ratio)
 */

/** One per-unit variable summed over a variant's units; a binary one (did the unit convert) has Σy² = Σy. */
export interface VariableSums {
  sum: number;
  sumSquares: number;
  /** 0/1 per unit: its variance is p(1 − p), as a proportion's is, not the sample variance. */
  binary: boolean;
}

export type MetricShape = 'plain' | 'ratio' | 'adjusted' | 'adjusted-ratio';

/** What the analysis query returns for one variant and metric. */
export interface ArmSums {
  units: number;
  /** In the shape's order (table above). */
  variables: VariableSums[];
  /** Σ vᵢvⱼ for i < j, keyed `${i},${j}`; only the pairs the shape uses are needed. */
  products: Record<string, number>;
}

const VARIABLE_COUNT: Record<MetricShape, number> = { plain: 1, ratio: 2, adjusted: 2, 'adjusted-ratio': 4 };

export type DifferenceType = 'relative' | 'absolute';

/** The effect of the treatment against the control, before any test: what both engines start from. */
export interface EffectMoments {
  /** Absolute: μ_B − μ_A; relative: (μ_B − μ_A) / |μ_A unadjusted|. */
  estimate: number;
  standardError: number;
  /** Per-unit variances and unit counts of both arms (Welch's degrees of freedom need them). */
  control: { units: number; variance: number; mean: number; unadjustedMean: number };
  treatment: { units: number; variance: number; mean: number; unadjustedMean: number };
  /** θ of CUPED (0 without). */
  theta: number;
}

export type EffectProblem = 'zero-variance' | 'zero-baseline';

export type Effect = { ok: true; moments: EffectMoments } | { ok: false; problem: EffectProblem };

function variance(n: number, v: VariableSums): number {
  if (v.binary) {
    if (n === 0) return 0;
    const p = v.sum / n;
    return p * (1 - p);
  }
  if (n <= 1) return 0;
  return (v.sumSquares - (v.sum * v.sum) / n) / (n - 1);
}

function covariance(n: number, a: VariableSums, b: VariableSums, product: number): number {
  if (n <= 1) return 0;
  if (a.binary && b.binary) return product / n - (a.sum * b.sum) / (n * n);
  return (product - (a.sum * b.sum) / n) / (n - 1);
}

function productOf(arm: ArmSums, i: number, j: number): number {
  if (i === j) return arm.variables[i]!.sumSquares;
  const key = i < j ? `${i},${j}` : `${j},${i}`;
  const product = arm.products[key];
  if (product === undefined) throw new Error(`The sums lack the product of variables ${key}`);
  return product;
}

function covarianceMatrix(arm: ArmSums, count: number): number[][] {
  const { units, variables } = arm;
  return Array.from({ length: count }, (_, i) =>
    Array.from({ length: count }, (_, j) =>
      i === j ? variance(units, variables[i]!) : covariance(units, variables[i]!, variables[j]!, productOf(arm, i, j)),
    ),
  );
}

function quadratic(gradient: number[], matrix: number[][], other: number[] = gradient): number {
  let total = 0;
  for (let i = 0; i < gradient.length; i++) for (let j = 0; j < other.length; j++) total += gradient[i]! * matrix[i]![j]! * other[j]!;
  return total;
}

function means(arm: ArmSums): number[] {
  return arm.variables.map((v) => (arm.units === 0 ? 0 : v.sum / arm.units));
}

/** The post-exposure value h and its gradient, over all the shape's variables. */
function postValue(shape: MetricShape, arm: ArmSums): { value: number; gradient: number[] } {
  const mean = means(arm);
  const count = VARIABLE_COUNT[shape];
  const gradient = new Array<number>(count).fill(0);
  if (shape === 'plain' || shape === 'adjusted') {
    gradient[0] = 1;
    return { value: mean[0]!, gradient };
  }
  const [m, d] = [mean[0]!, mean[1]!];
  if (d === 0) return { value: 0, gradient };
  gradient[0] = 1 / d;
  gradient[1] = -m / (d * d);
  return { value: m / d, gradient };
}

/** The pre-exposure value k of an adjusted shape and its gradient. */
function preValue(shape: MetricShape, arm: ArmSums): { value: number; gradient: number[] } {
  const mean = means(arm);
  const gradient = new Array<number>(VARIABLE_COUNT[shape]).fill(0);
  if (shape === 'adjusted') {
    gradient[1] = 1;
    return { value: mean[1]!, gradient };
  }
  const [m, d] = [mean[2]!, mean[3]!];
  if (d === 0) return { value: 0, gradient };
  gradient[2] = 1 / d;
  gradient[3] = -m / (d * d);
  return { value: m / d, gradient };
}

/**
 * CUPED's θ, pooled over both arms (Deng et al. 2013): for a mean, cov(y, x) / var(x) over the two arms' units taken
 * as one sample; for a ratio, the arms' delta-method covariances and variances summed. 0 when the pre-period varies
 * not at all, which falls back to the unadjusted analysis.
 */
function thetaOf(shape: MetricShape, control: ArmSums, treatment: ArmSums): number {
  if (shape === 'adjusted') {
    const units = control.units + treatment.units;
    const pooled = (i: number): VariableSums => ({
      sum: control.variables[i]!.sum + treatment.variables[i]!.sum,
      sumSquares: control.variables[i]!.sumSquares + treatment.variables[i]!.sumSquares,
      binary: control.variables[i]!.binary,
    });
    const [y, x] = [pooled(0), pooled(1)];
    const [varianceY, varianceX] = [variance(units, y), variance(units, x)];
    if (varianceX === 0 || varianceY === 0) return 0;
    return covariance(units, y, x, productOf(control, 0, 1) + productOf(treatment, 0, 1)) / varianceX;
  }
  let sharedCovariance = 0;
  let preVariance = 0;
  for (const arm of [control, treatment]) {
    const matrix = covarianceMatrix(arm, 4);
    const post = postValue(shape, arm).gradient;
    const pre = preValue(shape, arm).gradient;
    sharedCovariance += quadratic(pre, matrix, post);
    preVariance += quadratic(pre, matrix);
  }
  return preVariance === 0 ? 0 : sharedCovariance / preVariance;
}

interface Arm {
  units: number;
  /** The metric's value, adjusted by θ where the shape is. */
  mean: number;
  unadjustedMean: number;
  /** ∇ of the adjusted value, and the per-unit variance ∇ᵀΛ∇. */
  gradient: number[];
  unadjustedGradient: number[];
  matrix: number[][];
  variance: number;
}

function armOf(shape: MetricShape, sums: ArmSums, theta: number): Arm {
  const count = VARIABLE_COUNT[shape];
  if (sums.variables.length !== count) throw new Error(`A ${shape} metric has ${count} variables, got ${sums.variables.length}`);
  const matrix = covarianceMatrix(sums, count);
  const post = postValue(shape, sums);
  const adjusted = shape === 'adjusted' || shape === 'adjusted-ratio';
  const pre = adjusted ? preValue(shape, sums) : { value: 0, gradient: new Array<number>(count).fill(0) };
  // An adjusted ratio with no denominator in either period has no value (and no gradient) at all.
  const undefinedRatio = shape === 'adjusted-ratio' && (sums.variables[1]!.sum === 0 || sums.variables[3]!.sum === 0);
  const gradient = undefinedRatio ? new Array<number>(count).fill(0) : post.gradient.map((g, i) => g - theta * pre.gradient[i]!);
  return {
    units: sums.units,
    mean: undefinedRatio ? 0 : post.value - theta * pre.value,
    unadjustedMean: post.value,
    gradient,
    unadjustedGradient: post.gradient,
    matrix,
    variance: sums.units <= 1 ? 0 : quadratic(gradient, matrix),
  };
}

/**
 * The effect and its standard error (CLT on the sufficient statistics; arms independent). The relative effect's
 * variance is the delta method's on (μ_B − μ_A) / |μ_A|; for CUPED on a mean, the control's gradient takes the
 * treatment's unadjusted mean in place of its adjusted one, the two being equal in expectation under randomization
 * (GrowthBook's choice, kept so that its published vectors hold to the digit).
 */
export function effectOf(shape: MetricShape, control: ArmSums, treatment: ArmSums, difference: DifferenceType): Effect {
  const adjusted = shape === 'adjusted' || shape === 'adjusted-ratio';
  const theta = adjusted ? thetaOf(shape, control, treatment) : 0;
  const a = armOf(shape, control, theta);
  const b = armOf(shape, treatment, theta);
  if (a.variance <= 0 || b.variance <= 0) return { ok: false, problem: 'zero-variance' };
  if (a.mean === 0 || a.unadjustedMean === 0) return { ok: false, problem: 'zero-baseline' };

  let estimate: number;
  let effectVariance: number;
  if (difference === 'absolute') {
    estimate = b.mean - a.mean;
    effectVariance = b.variance / b.units + a.variance / a.units;
  } else {
    const baseline = a.unadjustedMean;
    const scale = Math.abs(baseline);
    estimate = (b.mean - a.mean) / scale;
    // r = (g_B − g_A) / |h_A|: ∂r/∂B = ∇g_B / |h_A|, ∂r/∂A = −∇g_A / |h_A| − (g_B − g_A)·sign(h_A)·∇h_A / h_A².
    const lift = (shape === 'adjusted' ? b.unadjustedMean - a.unadjustedMean : b.mean - a.mean) * Math.sign(baseline);
    const treatmentGradient = b.gradient.map((g) => g / scale);
    const controlGradient = a.gradient.map((g, i) => -g / scale - (lift * a.unadjustedGradient[i]!) / (baseline * baseline));
    effectVariance = quadratic(treatmentGradient, b.matrix) / b.units + quadratic(controlGradient, a.matrix) / a.units;
  }
  if (!(effectVariance > 0)) return { ok: false, problem: 'zero-variance' };
  const summary = (arm: Arm) => ({ units: arm.units, variance: arm.variance, mean: arm.mean, unadjustedMean: arm.unadjustedMean });
  return {
    ok: true,
    moments: { estimate, standardError: Math.sqrt(effectVariance), control: summary(a), treatment: summary(b), theta },
  };
}
