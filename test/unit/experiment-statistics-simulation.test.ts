import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { simulateExperiments } from '../helpers/experiment-simulation.js';

/*
 * The engine's error rates on simulated experiments whose truth is known (seeded, so a failure repeats). 1,000
 * experiments here, so the bands are wider than the 10,000 of `npm run bench:experiments` (A/A false positives
 * within 4.5–5.5 % there): the binomial standard deviation of a 5 % rate over 1,000 is 0.7 points.
 */
describe('the statistics engine on simulated experiments', () => {
  const figures = simulateExperiments(1000);

  it('A/A: a two-sided test at α = 0.05 calls about 5 % of experiments significant', () => {
    assert.ok(figures.falsePositiveRate >= 0.03 && figures.falsePositiveRate <= 0.07, `${figures.falsePositiveRate}`);
    assert.ok(figures.bayesianFalseWinRate >= 0.03 && figures.bayesianFalseWinRate <= 0.07, `Bayesian: ${figures.bayesianFalseWinRate}`);
  });

  it('A/B with a known 5 % lift: about 95 % of the intervals hold it', () => {
    assert.ok(figures.coverage >= 0.93 && figures.coverage <= 0.97, `${figures.coverage}`);
  });

  it('peeking daily for 30 days: the fixed-horizon test fires far too often, the confidence sequence stays within 5 %', () => {
    assert.ok(figures.peekingFalsePositiveRate.fixedHorizon > 0.1, `fixed horizon: ${figures.peekingFalsePositiveRate.fixedHorizon}`);
    assert.ok(figures.peekingFalsePositiveRate.sequential <= 0.05, `sequential: ${figures.peekingFalsePositiveRate.sequential}`);
  });

  it('CUPED narrows the interval by about √(1 − ρ²) on a pre-period correlated at ρ = 0.7', () => {
    assert.ok(figures.cupedWidthRatio > 0.68 && figures.cupedWidthRatio < 0.75, `${figures.cupedWidthRatio}`);
  });

  it('the sample-ratio alarm: silent on a 50/50 split, raised by an injected 48/52 one', () => {
    assert.ok(figures.sampleRatioAlarms.configured <= 0.01, `${figures.sampleRatioAlarms.configured}`);
    assert.equal(figures.sampleRatioAlarms.skewed, 1);
  });
});
