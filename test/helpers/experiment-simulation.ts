import { sampleRatioMismatchP } from '../../src/domain/experiments/statistics/checks.js';
import { type ArmSums, effectOf } from '../../src/domain/experiments/statistics/effect.js';
import { bayesianTest, frequentistTest } from '../../src/domain/experiments/statistics/tests.js';
import { seededRandom } from './seeded-random.js';

/*
 * Simulated experiments with a known truth, unit by unit, summed as the analysis query sums them: what the engine's
 * error rates are measured on (test/unit/experiment-statistics-simulation.test.ts runs 1,000 of each;
 * `npm run bench:experiments` runs 10,000).
 */

export interface SimulationFigures {
  experiments: number;
  /** A/A, fixed horizon, α = 0.05: the share called significant. */
  falsePositiveRate: number;
  /** A/B with a known lift: the share of 95 % intervals that hold it. */
  coverage: number;
  /** A/A looked at daily for 30 days: the share ever called significant, fixed-horizon test and confidence sequence. */
  peekingFalsePositiveRate: { fixedHorizon: number; sequential: number };
  /** A/A: the share whose Bayesian chance to win passes 95 % (it should be near 5 %, CTW being uniform). */
  bayesianFalseWinRate: number;
  /** CUPED's interval width over the unadjusted one, on data whose pre-period correlates at ρ = 0.7 (√(1 − ρ²) ≈ 0.71). */
  cupedWidthRatio: number;
  /** SRM alarms (p < 0.001) under the configured 50/50 split, and with an injected 48/52 split at 100,000 units. */
  sampleRatioAlarms: { configured: number; skewed: number };
}

function gaussian(random: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const u = 1 - random();
    const v = random();
    const radius = Math.sqrt(-2 * Math.log(u));
    spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };
}

interface Accumulator {
  units: number;
  sum: number;
  sumSquares: number;
}

const empty = (): Accumulator => ({ units: 0, sum: 0, sumSquares: 0 });
const add = (arm: Accumulator, value: number) => {
  arm.units++;
  arm.sum += value;
  arm.sumSquares += value * value;
};
const sumsOf = (arm: Accumulator): ArmSums => ({
  units: arm.units,
  variables: [{ sum: arm.sum, sumSquares: arm.sumSquares, binary: false }],
  products: {},
});

export function simulateExperiments(experiments: number, seed = 20261129): SimulationFigures {
  const random = seededRandom(seed);
  const normal = gaussian(random);
  const unitsPerArm = 1000;
  // A revenue-like metric: skewed, not normal per unit (the CLT has to earn its keep).
  const revenue = (lift: number) => Math.exp(normal() * 0.8) * 10 * (1 + lift);
  const trueMean = 10 * Math.exp(0.32);

  let falsePositives = 0;
  let covered = 0;
  let bayesianFalseWins = 0;
  for (let e = 0; e < experiments; e++) {
    const [a, b, c, d] = [empty(), empty(), empty(), empty()];
    for (let u = 0; u < unitsPerArm; u++) {
      add(a, revenue(0));
      add(b, revenue(0));
      add(c, revenue(0));
      add(d, revenue(0.05));
    }
    const aa = effectOf('plain', sumsOf(a), sumsOf(b), 'absolute');
    if (aa.ok) {
      if (frequentistTest(aa.moments, { alpha: 0.05, side: 'two-sided' }).pValue < 0.05) falsePositives++;
      if (bayesianTest(aa.moments, { alpha: 0.05 }, 'absolute').chanceToWin > 0.95) bayesianFalseWins++;
    }
    const ab = effectOf('plain', sumsOf(c), sumsOf(d), 'absolute');
    if (ab.ok) {
      const [low, high] = frequentistTest(ab.moments, { alpha: 0.05, side: 'two-sided' }).interval;
      const truth = trueMean * 0.05;
      if (low <= truth && truth <= high) covered++;
    }
  }

  // Peeking: 30 daily looks at a growing A/A experiment; a test "fires" if any look is significant.
  const peekingExperiments = Math.max(100, Math.floor(experiments / 2));
  let fixedFired = 0;
  let sequentialFired = 0;
  for (let e = 0; e < peekingExperiments; e++) {
    const [a, b] = [empty(), empty()];
    let fixed = false;
    let sequential = false;
    for (let day = 0; day < 30; day++) {
      for (let u = 0; u < 100; u++) {
        add(a, revenue(0));
        add(b, revenue(0));
      }
      const effect = effectOf('plain', sumsOf(a), sumsOf(b), 'absolute');
      if (!effect.ok) continue;
      fixed ||= frequentistTest(effect.moments, { alpha: 0.05, side: 'two-sided' }).pValue < 0.05;
      sequential ||= frequentistTest(effect.moments, { alpha: 0.05, side: 'two-sided', sequential: { tuning: 3000 } }).pValue < 0.05;
    }
    if (fixed) fixedFired++;
    if (sequential) sequentialFired++;
  }

  // CUPED: y = 0.7·x + noise, where x (the pre-period) has the same spread.
  const cupedExperiments = Math.max(50, Math.floor(experiments / 10));
  let widthRatios = 0;
  for (let e = 0; e < cupedExperiments; e++) {
    const arms = [0, 0.1].map((lift) => {
      const sums = { y: empty(), x: empty(), product: 0 };
      for (let u = 0; u < unitsPerArm; u++) {
        const x = 10 + normal();
        const y = 10 + lift + 0.7 * (x - 10) + Math.sqrt(1 - 0.49) * normal();
        add(sums.y, y);
        add(sums.x, x);
        sums.product += x * y;
      }
      return sums;
    });
    const plain = effectOf('plain', sumsOf(arms[0]!.y), sumsOf(arms[1]!.y), 'absolute');
    const [control, treatment] = arms.map(
      (arm): ArmSums => ({
        units: arm.y.units,
        variables: [
          { sum: arm.y.sum, sumSquares: arm.y.sumSquares, binary: false },
          { sum: arm.x.sum, sumSquares: arm.x.sumSquares, binary: false },
        ],
        products: { '0,1': arm.product },
      }),
    );
    const adjusted = effectOf('adjusted', control!, treatment!, 'absolute');
    if (plain.ok && adjusted.ok) widthRatios += adjusted.moments.standardError / plain.moments.standardError;
  }

  // SRM: 100,000 units assigned 50/50, and the same with 48/52.
  let configuredAlarms = 0;
  let skewedAlarms = 0;
  const srmExperiments = Math.max(100, Math.floor(experiments / 5));
  for (let e = 0; e < srmExperiments; e++) {
    let [first, skewedFirst] = [0, 0];
    for (let u = 0; u < 100_000; u++) {
      const draw = random();
      if (draw < 0.5) first++;
      if (draw < 0.48) skewedFirst++;
    }
    if (sampleRatioMismatchP([first, 100_000 - first], [0.5, 0.5]) < 0.001) configuredAlarms++;
    if (sampleRatioMismatchP([skewedFirst, 100_000 - skewedFirst], [0.5, 0.5]) < 0.001) skewedAlarms++;
  }

  return {
    experiments,
    falsePositiveRate: falsePositives / experiments,
    coverage: covered / experiments,
    peekingFalsePositiveRate: { fixedHorizon: fixedFired / peekingExperiments, sequential: sequentialFired / peekingExperiments },
    bayesianFalseWinRate: bayesianFalseWins / experiments,
    cupedWidthRatio: widthRatios / cupedExperiments,
    sampleRatioAlarms: { configured: configuredAlarms / srmExperiments, skewed: skewedAlarms / srmExperiments },
  };
}
