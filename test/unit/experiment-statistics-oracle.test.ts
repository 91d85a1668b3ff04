import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { adjustPValues, sampleRatioMismatchP } from '../../src/domain/experiments/statistics/checks.js';
import { chiSquareSf, normalQuantile, studentTQuantile } from '../../src/domain/experiments/statistics/distributions.js';
import { type ArmSums, effectOf, type EffectMoments } from '../../src/domain/experiments/statistics/effect.js';
import { bayesianTest, frequentistTest } from '../../src/domain/experiments/statistics/tests.js';
import { seededRandom } from '../helpers/seeded-random.js';

/*
 * An independent oracle: SciPy and statsmodels (Debian's python3-scipy and python3-statsmodels, not a port of the
 * engine) compute Welch's test, the normal and t quantiles, χ², truncated-normal risk, CUPED's θ from unit-level data
 * and the multiple-testing corrections for 1,000 random inputs; Vexil agrees to 1e-9 relative.
 */

const PYTHON = '/usr/bin/python3';
const ORACLE = fileURLToPath(new URL('../../scripts/statistics-oracle.py', import.meta.url));
const oracleMissing = (() => {
  if (!existsSync(PYTHON)) return `${PYTHON} is missing`;
  const probe = spawnSync(PYTHON, ['-c', 'import scipy, statsmodels'], { encoding: 'utf8' });
  return probe.status === 0 ? false : 'SciPy or statsmodels is missing (apt-get install python3-scipy python3-statsmodels)';
})();

function askOracle(cases: object[]): Record<string, unknown>[] {
  const run = spawnSync(PYTHON, [ORACLE], { input: JSON.stringify({ cases }), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.status, 0, run.stderr);
  return (JSON.parse(run.stdout) as { results: Record<string, unknown>[] }).results;
}

function close(actual: number, expected: number, what: string, relative = 1e-9) {
  const tolerance = relative * Math.max(Math.abs(actual), Math.abs(expected)) + 1e-300;
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: Vexil ${actual}, oracle ${expected} (${Math.abs(actual - expected) / Math.abs(expected)} relative)`,
  );
}

const CASES = 1000;

interface ArmDraw {
  n: number;
  mean: number;
  sd: number;
  binary: boolean;
}

function sumsOf(arm: ArmDraw): ArmSums {
  const sum = arm.n * arm.mean;
  const sumSquares = arm.binary ? sum : (arm.n - 1) * arm.sd * arm.sd + arm.n * arm.mean * arm.mean;
  return { units: arm.n, variables: [{ sum, sumSquares, binary: arm.binary }], products: {} };
}

describe('the statistics engine against SciPy and statsmodels', { skip: oracleMissing }, () => {
  const random = seededRandom(20261129);
  const between = (low: number, high: number) => low + (high - low) * random();
  const units = () => Math.round(Math.exp(between(Math.log(20), Math.log(200_000))));

  it(`Welch's test, absolute and relative, two- and one-sided, on ${CASES} random pairs of means and proportions`, () => {
    const draws = Array.from({ length: CASES }, (_, i) => {
      const binary = i % 3 === 0;
      const arm = (): ArmDraw => {
        const n = units();
        if (binary) {
          const converted = Math.max(1, Math.min(n - 1, Math.round(n * between(0.01, 0.9))));
          const p = converted / n;
          return { n, mean: p, sd: Math.sqrt(p * (1 - p)), binary };
        }
        const scale = 10 ** between(-2, 4);
        const mean = scale * between(0.2, 3);
        return { n, mean, sd: mean * between(0.1, 5), binary };
      };
      return { kind: 'welch', a: arm(), b: arm(), alpha: [0.05, 0.1, 0.01][i % 3]! };
    });
    const answers = askOracle(draws);
    draws.forEach((draw, i) => {
      const oracle = answers[i] as Record<string, number>;
      const [a, b] = [sumsOf(draw.a), sumsOf(draw.b)];
      const absolute = effectOf('plain', a, b, 'absolute');
      const relative = effectOf('plain', a, b, 'relative');
      assert.ok(absolute.ok && relative.ok);
      const twoSided = frequentistTest(absolute.moments, { alpha: draw.alpha, side: 'two-sided' });
      close(twoSided.estimate / twoSided.standardError, oracle.t!, `t of case ${i}`);
      close(twoSided.pValue, oracle.p!, `p of case ${i}`);
      close(twoSided.degreesOfFreedom, oracle.df!, `df of case ${i}`);
      close(twoSided.standardError, oracle.se!, `standard error of case ${i}`);
      close((twoSided.interval[1] - twoSided.interval[0]) / 2, oracle.halfWidth!, `interval of case ${i}`);
      close(
        frequentistTest(absolute.moments, { alpha: draw.alpha, side: 'greater' }).pValue,
        oracle.greaterP!,
        `one-sided p (greater) of case ${i}`,
      );
      close(
        frequentistTest(absolute.moments, { alpha: draw.alpha, side: 'lesser' }).pValue,
        oracle.lesserP!,
        `one-sided p (lesser) of case ${i}`,
      );
      const lift = frequentistTest(relative.moments, { alpha: draw.alpha, side: 'two-sided' });
      close(lift.estimate, oracle.relative!, `relative lift of case ${i}`);
      close(lift.standardError, oracle.relativeSe!, `relative standard error of case ${i}`);
      close(lift.pValue, oracle.relativeP!, `relative p of case ${i}`);
      close((lift.interval[1] - lift.interval[0]) / 2, oracle.relativeHalfWidth!, `relative interval of case ${i}`);
    });
  });

  it(`the Bayesian posterior's chance to win, credible interval and risk on ${CASES} random posteriors`, () => {
    const draws = Array.from({ length: CASES }, (_, i) => {
      const sd = 10 ** between(-3, 0);
      return { kind: 'bayes', mean: sd * between(-6, 6), sd, alpha: [0.05, 0.1][i % 2]! };
    });
    const answers = askOracle(draws);
    draws.forEach((draw, i) => {
      const oracle = answers[i] as Record<string, number>;
      const moments: EffectMoments = {
        estimate: draw.mean,
        standardError: draw.sd,
        control: { units: 1000, variance: 1, mean: 1, unadjustedMean: 1 },
        treatment: { units: 1000, variance: 1, mean: 1, unadjustedMean: 1 },
        theta: 0,
      };
      const result = bayesianTest(moments, { alpha: draw.alpha }, 'relative');
      close(result.chanceToWin, oracle.chanceToWin!, `chance to win of case ${i}`);
      close(result.interval[0], oracle.lower!, `credible interval lower of case ${i}`);
      close(result.interval[1], oracle.upper!, `credible interval upper of case ${i}`);
      close(result.risk[0], oracle.riskOfControl!, `risk of the control of case ${i}`);
      close(result.risk[1], oracle.riskOfTreatment!, `risk of the treatment of case ${i}`);
    });
  });

  it(`sample-ratio mismatch on ${CASES} random splits, and quantiles and χ² tails at random points`, () => {
    const splits = Array.from({ length: CASES }, () => {
      const arms = 2 + Math.floor(random() * 4);
      const weights = Array.from({ length: arms }, () => (random() < 0.1 ? 0 : between(0.05, 1)));
      if (weights.filter((w) => w > 0).length < 2) weights[0] = weights[1] = 0.5;
      const total = units();
      return { kind: 'srm', units: weights.map((w) => Math.round(total * (w + between(-0.02, 0.02) * w))), weights };
    });
    const points = Array.from({ length: CASES }, () => ({
      kind: 'quantiles',
      p: between(1e-6, 1 - 1e-6),
      df: between(1.5, 5000),
      chiDf: 1 + Math.floor(random() * 20),
      x: between(0.01, 60),
    }));
    const answers = askOracle([...splits, ...points]);
    splits.forEach((split, i) => {
      close(sampleRatioMismatchP(split.units, split.weights), (answers[i] as { p: number }).p, `SRM of split ${i}`);
    });
    points.forEach((point, i) => {
      const oracle = answers[CASES + i] as Record<string, number>;
      close(normalQuantile(point.p), oracle.normal!, `normal quantile at ${point.p}`);
      close(studentTQuantile(point.p, point.df), oracle.t!, `t quantile at ${point.p}, df ${point.df}`);
      close(chiSquareSf(point.x, point.chiDf), oracle.chiSquareSf!, `χ² tail at ${point.x}, df ${point.chiDf}`);
    });
  });

  it(`Holm–Bonferroni and Benjamini–Hochberg on ${CASES} random families of p-values`, () => {
    const families = Array.from({ length: CASES }, () => ({
      kind: 'corrections',
      pValues: Array.from({ length: 2 + Math.floor(random() * 12) }, () => (random() < 0.3 ? between(0, 0.01) : random())),
    }));
    const answers = askOracle(families);
    families.forEach((family, i) => {
      const oracle = answers[i] as { holm: number[]; benjaminiHochberg: number[] };
      adjustPValues(family.pValues, 'holm').forEach((p, j) => {
        close(p, oracle.holm[j]!, `Holm of family ${i}`);
      });
      adjustPValues(family.pValues, 'benjamini-hochberg').forEach((p, j) => {
        close(p, oracle.benjaminiHochberg[j]!, `BH of family ${i}`);
      });
    });
  });

  it("CUPED's θ, adjusted means and variances from the sums equal numpy's from the units themselves", () => {
    const experiments = Array.from({ length: 50 }, () => {
      const correlation = between(-0.9, 0.9);
      const arm = (lift: number) => {
        const n = 50 + Math.floor(random() * 400);
        const x: number[] = [];
        const y: number[] = [];
        for (let u = 0; u < n; u++) {
          const pre = between(0, 10);
          x.push(pre);
          y.push(lift + correlation * pre + between(0, 10) * Math.sqrt(1 - correlation * correlation));
        }
        return { x, y };
      };
      return { kind: 'cuped', a: arm(0), b: arm(between(-1, 1)) };
    });
    const answers = askOracle(experiments);
    experiments.forEach((experiment, i) => {
      const oracle = answers[i] as { theta: number; adjustedMeans: number[]; adjustedVariances: number[] };
      const sums = ({ x, y }: { x: number[]; y: number[] }): ArmSums => ({
        units: x.length,
        variables: [
          { sum: y.reduce((s, v) => s + v, 0), sumSquares: y.reduce((s, v) => s + v * v, 0), binary: false },
          { sum: x.reduce((s, v) => s + v, 0), sumSquares: x.reduce((s, v) => s + v * v, 0), binary: false },
        ],
        products: { '0,1': y.reduce((s, v, j) => s + v * x[j]!, 0) },
      });
      const effect = effectOf('adjusted', sums(experiment.a), sums(experiment.b), 'absolute');
      assert.ok(effect.ok);
      // Sums of a few hundred squares lose a few digits to cancellation that numpy's two-pass variance does not.
      close(effect.moments.theta, oracle.theta, `θ of experiment ${i}`, 1e-9);
      close(effect.moments.control.mean, oracle.adjustedMeans[0]!, `adjusted control mean of experiment ${i}`);
      close(effect.moments.treatment.mean, oracle.adjustedMeans[1]!, `adjusted treatment mean of experiment ${i}`);
      close(effect.moments.control.variance, oracle.adjustedVariances[0]!, `adjusted control variance of experiment ${i}`);
      close(effect.moments.treatment.variance, oracle.adjustedVariances[1]!, `adjusted treatment variance of experiment ${i}`);
    });
  });
});
