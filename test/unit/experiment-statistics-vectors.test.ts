import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adjustPValues, sampleRatioMismatchP } from '../../src/domain/experiments/statistics/checks.js';
import { type ArmSums, type DifferenceType, effectOf, type MetricShape } from '../../src/domain/experiments/statistics/effect.js';
import {
  bayesianTest,
  type BayesianSettings,
  type FrequentistSettings,
  frequentistTest,
  sequentialRho,
} from '../../src/domain/experiments/statistics/tests.js';

/*
 * Golden vectors: the inputs and expected figures of GrowthBook's gbstats test suite (github.com/growthbook/growthbook,
 * packages/stats/tests and packages/back-end/test/stats.test.ts at 8f1db44, MIT), numbers only. Each figure must agree
 * to the digits gbstats asserts: 5 decimals in its test_tests.py files, 9 in test_gbstats.py.
 */

const mean = (n: number, sum: number, sumSquares: number): ArmSums => ({
  units: n,
  variables: [{ sum, sumSquares, binary: false }],
  products: {},
});
const proportion = (n: number, sum: number): ArmSums => ({ units: n, variables: [{ sum, sumSquares: sum, binary: true }], products: {} });

function roundedTo(decimals: number, actual: number, expected: number, what: string) {
  const scale = 10 ** decimals;
  // Python's np.round is round-half-even on the binary value; at these magnitudes rounding both is the same test.
  assert.equal(Math.round(actual * scale) / scale, Math.round(expected * scale) / scale, `${what}: ${actual} vs ${expected}`);
}

function moments(shape: MetricShape, a: ArmSums, b: ArmSums, difference: DifferenceType) {
  const effect = effectOf(shape, a, b, difference);
  assert.ok(effect.ok, `the effect is defined (${effect.ok ? '' : effect.problem})`);
  return effect.moments;
}

function bayesian(
  shape: MetricShape,
  a: ArmSums,
  b: ArmSums,
  settings: Partial<BayesianSettings> = {},
  difference: DifferenceType = 'relative',
) {
  return bayesianTest(moments(shape, a, b, difference), { alpha: 0.05, ...settings }, difference);
}

function frequentist(
  shape: MetricShape,
  a: ArmSums,
  b: ArmSums,
  settings: Partial<FrequentistSettings> = {},
  difference: DifferenceType = 'relative',
) {
  return frequentistTest(moments(shape, a, b, difference), { alpha: 0.05, side: 'two-sided', ...settings });
}

function expectBayesian(
  result: ReturnType<typeof bayesian>,
  expected: { estimate: number; interval: [number, number]; sd: number; chanceToWin: number; risk: [number, number] },
  decimals = 5,
) {
  roundedTo(decimals, result.estimate, expected.estimate, 'estimate');
  roundedTo(decimals, result.interval[0], expected.interval[0], 'interval lower');
  roundedTo(decimals, result.interval[1], expected.interval[1], 'interval upper');
  roundedTo(decimals, result.standardDeviation, expected.sd, 'standard deviation');
  roundedTo(decimals, result.chanceToWin, expected.chanceToWin, 'chance to win');
  roundedTo(decimals, result.risk[0], expected.risk[0], 'risk of the control');
  roundedTo(decimals, result.risk[1], expected.risk[1], 'risk of the treatment');
}

function expectFrequentist(
  result: ReturnType<typeof frequentist>,
  expected: { estimate: number; interval: [number, number]; se: number; p: number },
  decimals = 5,
) {
  roundedTo(decimals, result.estimate, expected.estimate, 'estimate');
  for (const [i, end] of ['lower', 'upper'].entries()) {
    const [actual, wanted] = [result.interval[i]!, expected.interval[i]!];
    if (Number.isFinite(wanted)) roundedTo(decimals, actual, wanted, `interval ${end}`);
    else assert.equal(actual, wanted, `interval ${end}`);
  }
  roundedTo(decimals, result.standardError, expected.se, 'standard error');
  roundedTo(decimals, result.pValue, expected.p, 'p-value');
}

// gbstats' frequentist test fixtures: a mean metric, two arms.
const F_A = mean(3407, 1396.87, 52377.9767);
const F_B = mean(3461, 2422.7, 134698.29);
const F_A3000 = mean(3000, 1396.87, 52377.9767);

/** gbstats' regression-adjusted ratio fixture (n = 100 per arm): m, d, m′, d′ and the six products. */
function adjustedRatio(
  [m, mSquares, d, dSquares, mPre, mPreSquares, dPre, dPreSquares]: number[],
  products: { mmPre: number; ddPre: number; mPreDPre: number; md: number; mDPre: number; mPreD: number },
): ArmSums {
  const v = (sum: number, sumSquares: number) => ({ sum, sumSquares, binary: false });
  return {
    units: 100,
    variables: [v(m!, mSquares!), v(d!, dSquares!), v(mPre!, mPreSquares!), v(dPre!, dPreSquares!)],
    products: {
      '0,1': products.md,
      '0,2': products.mmPre,
      '0,3': products.mDPre,
      '1,2': products.mPreD,
      '1,3': products.ddPre,
      '2,3': products.mPreDPre,
    },
  };
}
const RA_RATIO_A = adjustedRatio(
  [
    485.112236689623, 2715.484666118136, 679.9093275844917, 4939.424001640236, 192.59138069991536, 460.076026390857, 290.1398399750233,
    920.9461385038898,
  ],
  {
    mmPre: 1113.6215759318352,
    ddPre: 2130.9404074446747,
    mPreDPre: 634.239482353647,
    md: 3602.146836776702,
    mDPre: 1559.2878434944676,
    mPreD: 1460.3181079276983,
  },
);
const RA_RATIO_B = adjustedRatio(
  [
    514.7757826608777, 2994.897482705013, 705.4090874383759, 5291.36604146392, 206.94157227402536, 514.2903702246757, 302.54389139107326,
    994.4506208125663,
  ],
  {
    mmPre: 1237.0953021125997,
    ddPre: 2292.081739775257,
    mPreDPre: 698.4173425817908,
    md: 3918.1561431600717,
    mDPre: 1701.0287270040265,
    mPreD: 1604.0759503266522,
  },
);

const adjustedMean = (n: number, y: [number, number], x: [number, number], product: number, binary = false): ArmSums => ({
  units: n,
  variables: [
    { sum: y[0], sumSquares: y[1], binary },
    { sum: x[0], sumSquares: x[1], binary },
  ],
  products: { '0,1': product },
});

describe('the statistics engine reproduces gbstats test vectors', () => {
  it('B1: Bayesian, proportions 49/100 and 51/100, relative, flat prior', () => {
    expectBayesian(bayesian('plain', proportion(100, 49), proportion(100, 51)), {
      estimate: 0.04082,
      interval: [-0.24779, 0.32943],
      sd: 0.14725,
      chanceToWin: 0.60918,
      risk: [0.0814, 0.04058],
    });
  });

  it('B2: Bayesian, means, relative, flat prior', () => {
    expectBayesian(bayesian('plain', mean(10, 100, 1002.25), mean(10, 105, 1111.5)), {
      estimate: 0.05,
      interval: [-0.02, 0.12],
      sd: 0.03572,
      chanceToWin: 0.91923,
      risk: [0.05131, 0.00131],
    });
  });

  it('B3: Bayesian, means, with a proper prior N(0.1, 0.1)', () => {
    expectBayesian(bayesian('plain', mean(10, 100, 1002.25), mean(10, 105, 1111.5), { prior: { mean: 0.1, variance: 0.1 } }), {
      estimate: 0.05063,
      interval: [-0.01893, 0.12019],
      sd: 0.03549,
      chanceToWin: 0.92315,
      risk: [0.05186, 0.00123],
    });
  });

  it('F1–F3: Welch two-sided, relative, absolute and on proportions', () => {
    expectFrequentist(frequentist('plain', F_A, F_B), { estimate: 0.70732, interval: [-0.03526, 1.44989], se: 0.37879, p: 0.06191 });
    expectFrequentist(frequentist('plain', F_A, F_B, {}, 'absolute'), {
      estimate: 0.29,
      interval: [0.04538, 0.53462],
      se: 0.12478,
      p: 0.02016,
    });
    expectFrequentist(frequentist('plain', proportion(28, 14), proportion(30, 16)), {
      estimate: 0.06667,
      interval: [-0.47767, 0.61101],
      se: 0.2717,
      p: 0.80707,
    });
  });

  it('F4: Welch two-sided on a CUPED-adjusted ratio', () => {
    expectFrequentist(frequentist('adjusted-ratio', RA_RATIO_A, RA_RATIO_B), {
      estimate: -0.0007,
      interval: [-0.00841, 0.007],
      se: 0.00391,
      p: 0.85771,
    });
  });

  it('F5: one-sided tests, relative and absolute', () => {
    const cases: [FrequentistSettings['side'], DifferenceType, { estimate: number; interval: [number, number]; se: number; p: number }][] =
      [
        [
          'greater',
          'relative',
          { estimate: 0.5033610858562358, interval: [-0.045136675850396046, Infinity], se: 0.3334122146400735, p: 0.06558262868467746 },
        ],
        [
          'greater',
          'absolute',
          { estimate: 0.23437666666666668, interval: [0.020791480063255735, Infinity], se: 0.12983081254184736, p: 0.03554272489873023 },
        ],
        [
          'lesser',
          'relative',
          { estimate: 0.5033610858562358, interval: [-Infinity, 1.0518588475628676], se: 0.3334122146400735, p: 0.9344173713153225 },
        ],
        [
          'lesser',
          'absolute',
          { estimate: 0.23437666666666668, interval: [-Infinity, 0.44796185327007765], se: 0.12983081254184736, p: 0.9644572751012698 },
        ],
      ];
    for (const [side, difference, expected] of cases) expectFrequentist(frequentist('plain', F_A3000, F_B, { side }, difference), expected);
  });

  it('S1–S2: sequential two-sided, on means (N* = 1,000) and proportions (N* = 5,000)', () => {
    expectFrequentist(frequentist('plain', F_A3000, F_B, { sequential: { tuning: 1000 } }), {
      estimate: 0.50336,
      interval: [-0.55844, 1.56516],
      se: 0.33341,
      p: 1,
    });
    expectFrequentist(frequentist('plain', proportion(3000, 1396), proportion(3461, 2422), { sequential: { tuning: 5000 } }), {
      estimate: 0.50386,
      interval: [0.40098, 0.60675],
      se: 0.03386,
      p: 0,
    });
  });

  it('S3: sequential on CUPED means and ratios, and one-sided sequential', () => {
    const a = adjustedMean(3000, [1396.87, 52377.9767], [16.87, 527.9767], 1);
    const b = adjustedMean(3461, [2422.7, 134698.29], [22.7, 1348.29], 1);
    expectFrequentist(frequentist('adjusted', a, b, { sequential: { tuning: 5000 } }), {
      estimate: 0.50338,
      interval: [-0.50969, 1.51646],
      se: 0.33341,
      p: 1,
    });
    expectFrequentist(frequentist('adjusted-ratio', RA_RATIO_A, RA_RATIO_B, { sequential: { tuning: 5000 } }), {
      estimate: -0.0007,
      interval: [-0.02063, 0.01923],
      se: 0.00391,
      p: 1,
    });
    const sequential = { tuning: 5000 };
    const cases: [FrequentistSettings['side'], DifferenceType, { estimate: number; interval: [number, number]; se: number; p: number }][] =
      [
        [
          'greater',
          'relative',
          { estimate: 0.5033610858562358, interval: [-0.42356454602790883, Infinity], se: 0.3334122146400735, p: 0.4999 },
        ],
        // gbstats finds this p-value by bisection, stopped when the bound is near 0, and reports 0.46316491943359384,
        // where the bound is still 1.6e-5 from 0; Vexil solves eq. 134 for α in closed form (checked below).
        [
          'greater',
          'absolute',
          { estimate: 0.23437666666666668, interval: [-0.12656844172804982, Infinity], se: 0.12983081254184736, p: 0.46305 },
        ],
        [
          'lesser',
          'relative',
          { estimate: 0.5033610858562358, interval: [-Infinity, 1.4302867177403806], se: 0.3334122146400735, p: 0.4999 },
        ],
        [
          'lesser',
          'absolute',
          { estimate: 0.23437666666666668, interval: [-Infinity, 0.5953217750613832], se: 0.12983081254184736, p: 0.4999 },
        ],
      ];
    for (const [side, difference, expected] of cases)
      expectFrequentist(frequentist('plain', F_A3000, F_B, { side, sequential }, difference), expected);
    // The closed-form p-value is the α whose one-sided sequence (ρ held at α = 0.05) has its bound exactly at 0.
    const pValue = frequentist('plain', F_A3000, F_B, { side: 'greater', sequential }, 'absolute').pValue;
    assert.ok(Math.abs(pValue - 0.46316491943359384) < 2e-4, `within gbstats' bisection of its answer: ${pValue}`);
    const held = moments('plain', F_A3000, F_B, 'absolute');
    const atP = frequentistTest(held, { alpha: pValue, side: 'greater', sequential: { tuning: 5000 } });
    const n = held.control.units + held.treatment.units;
    const rho = sequentialRho(0.05, 5000, 'greater');
    const halfWidth = Math.sqrt(
      held.standardError ** 2 *
        n *
        ((2 * (n * rho * rho + 1)) / (n * rho) ** 2) *
        Math.log(1 + Math.sqrt(n * rho * rho + 1) / (2 * pValue)),
    );
    assert.ok(Math.abs(held.estimate - halfWidth) < 1e-12, `the bound at the p-value is 0: ${held.estimate - halfWidth}`);
    assert.ok(atP.interval[0] < held.estimate);
  });

  it('C1: CUPED on means and on proportions, frequentist (9 decimals)', () => {
    const a = adjustedMean(3001, [300, 600], [210, 415], -20);
    const b = adjustedMean(3000, [222, 555], [120, 405], -10);
    const result = frequentist('adjusted', a, b);
    roundedTo(9, result.estimate, -0.281707154, 'estimate');
    roundedTo(9, result.pValue, 0.003732549, 'p-value');
    const binaryA = adjustedMean(3001, [300, 300], [210, 210], -20, true);
    const binaryB = adjustedMean(3000, [222, 222], [120, 120], -10, true);
    const binary = frequentist('adjusted', binaryA, binaryB);
    roundedTo(9, binary.estimate, -0.31620216, 'estimate');
    roundedTo(9, binary.pValue, 0.000000353, 'p-value');
  });

  it('P1: a count metric, Bayesian and frequentist (9 decimals)', () => {
    const [a, b] = [mean(100, 270, 848.79), mean(120, 300, 869)];
    const posterior = bayesian('plain', a, b);
    roundedTo(9, posterior.chanceToWin, 0.071834168, 'chance to win');
    roundedTo(9, posterior.estimate, -0.074074074, 'estimate');
    roundedTo(9, posterior.risk[1], 0.075691131, 'risk of the treatment');
    const inverse = bayesian('plain', a, b, { inverse: true });
    roundedTo(9, inverse.chanceToWin, 1 - 0.071834168, 'chance to win, lower is better');
    roundedTo(9, inverse.risk[1], 0.001617057, 'risk of the treatment, lower is better');
    roundedTo(9, frequentist('plain', a, b).pValue, 0.145219005, 'p-value');
  });

  it('P2: a ratio metric, Bayesian and frequentist (9 decimals)', () => {
    const ratio = (n: number, m: number, mSquares: number, d: number, dSquares: number, product: number): ArmSums => ({
      units: n,
      variables: [
        { sum: m, sumSquares: mSquares, binary: false },
        { sum: d, sumSquares: dSquares, binary: false },
      ],
      products: { '0,1': product },
    });
    const [a, b] = [ratio(100, 270, 848.79, 510, 810, -900), ratio(120, 300, 869, 500, 800, -905)];
    const posterior = bayesian('ratio', a, b);
    roundedTo(9, posterior.chanceToWin, 0.694926359, 'chance to win');
    roundedTo(9, posterior.estimate, 0.133333333, 'estimate');
    roundedTo(9, posterior.risk[1], 0.050934045, 'risk of the treatment');
    roundedTo(9, frequentist('ratio', a, b).pValue, 0.610663339, 'p-value');
  });

  it('R1–R2: sample-ratio mismatch', () => {
    roundedTo(9, sampleRatioMismatchP([1000, 1200], [0.5, 0.5]), 0.000020079, '[1000, 1200]');
    roundedTo(9, sampleRatioMismatchP([135, 115], [0.5, 0.5]), 0.205903211, '[135, 115]');
    roundedTo(9, sampleRatioMismatchP([310, 98], [0.75, 0.25]), 0.647434186, '[310, 98]');
    roundedTo(9, sampleRatioMismatchP([0, 10, 10], [0.34, 0.33, 0.33]), 0.005790624, '[0, 10, 10]');
    roundedTo(9, sampleRatioMismatchP([500, 500, 600], [0.34, 0.33, 0.33]), 0.000592638, '[500, 500, 600]');
    assert.equal(sampleRatioMismatchP([1000], [0.5, 0.5]), 1, 'one variant');
    assert.equal(sampleRatioMismatchP([1000, 900, 800], [1, 0, 0]), 1, 'one variant with weight');
    assert.equal(sampleRatioMismatchP([0, 0, 0], [0.34, 0.33, 0.33]), 1, 'nobody yet');
    assert.equal(sampleRatioMismatchP([500, 500], [0.5, 0.5]), 1, 'exactly as configured');
    roundedTo(9, sampleRatioMismatchP([1000, 1200, 900], [0.5, 0.5, 0]), 0.000020079, 'a zero-weight variant takes no part');
  });

  it('M1–M2: Holm–Bonferroni and Benjamini–Hochberg', () => {
    const holm = adjustPValues([0.01, 0.04, 0.03, 0.005, 0.55, 0.6], 'holm');
    [0.05, 0.12, 0.12, 0.03, 1, 1].forEach((p, i) => {
      roundedTo(9, holm[i]!, p, `Holm ${i}`);
    });
    const bh = adjustPValues([0.898, 0.138, 0.007, 0.964, 0.538, 0.006, 0.138], 'benjamini-hochberg');
    [0.964, 0.2415, 0.0245, 0.964, 0.7532, 0.0245, 0.2415].forEach((p, i) => {
      roundedTo(9, bh[i]!, p, `BH ${i}`);
    });
  });

  it('answers "not enough to say" rather than a number when a variance or the baseline is zero', () => {
    assert.deepEqual(effectOf('plain', proportion(0, 0), proportion(0, 0), 'relative'), { ok: false, problem: 'zero-variance' });
    assert.deepEqual(effectOf('plain', mean(2, 0, 0), mean(10, 5, 7), 'relative'), { ok: false, problem: 'zero-variance' });
    assert.deepEqual(effectOf('plain', mean(10, 0, 10), mean(10, 5, 7), 'relative'), { ok: false, problem: 'zero-baseline' });
  });
});
