import { chiSquareSf } from './distributions.js';

/** Below this p-value the split of units is not the one configured: results are not to be trusted. */
export const SAMPLE_RATIO_ALARM_P = 0.001;

/**
 * The sample-ratio-mismatch test: χ² goodness of fit of the units each variant got against the configured weights.
 * Variants of weight 0 take no part (they are meant to get nobody); with fewer than two taking part it is 1.
 */
export function sampleRatioMismatchP(units: number[], weights: number[]): number {
  const taking = units.map((count, i) => ({ count, weight: weights[i] ?? 0 })).filter((arm) => arm.weight > 0);
  const total = taking.reduce((sum, arm) => sum + arm.count, 0);
  if (taking.length < 2 || total === 0) return 1;
  const totalWeight = taking.reduce((sum, arm) => sum + arm.weight, 0);
  let statistic = 0;
  for (const arm of taking) {
    const expected = (arm.weight / totalWeight) * total;
    statistic += (arm.count - expected) ** 2 / expected;
  }
  return chiSquareSf(statistic, taking.length - 1);
}

export type Correction = 'none' | 'holm' | 'benjamini-hochberg';

/**
 * P-values adjusted for testing several hypotheses at once, in the order given: Holm–Bonferroni holds the chance of
 * any false positive (family-wise) to α, Benjamini–Hochberg the expected share of false discoveries.
 */
export function adjustPValues(pValues: number[], correction: Correction): number[] {
  const m = pValues.length;
  if (correction === 'none' || m === 0) return [...pValues];
  const order = pValues.map((p, index) => ({ p, index })).sort((x, y) => x.p - y.p);
  const adjusted = new Array<number>(m);
  if (correction === 'holm') {
    let running = 0;
    order.forEach(({ p, index }, rank) => {
      running = Math.max(running, Math.min(1, (m - rank) * p));
      adjusted[index] = running;
    });
  } else {
    let running = 1;
    for (let rank = m - 1; rank >= 0; rank--) {
      const { p, index } = order[rank]!;
      running = Math.min(running, Math.min(1, (m * p) / (rank + 1)));
      adjusted[index] = running;
    }
  }
  return adjusted;
}
