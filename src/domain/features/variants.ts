import { BadDataError, repeatedKeys } from '../../shared/errors.js';
import type { Variant, VariantInput } from './feature-views.js';

export const TOTAL_WEIGHT = 1000;

interface Weighted {
  name: string;
  weight?: number;
  weightType?: 'variable' | 'fix';
}

/**
 * Unleash's weight rule: `fix` variants keep their weight, `variable` ones share what is left of 1000 equally
 * (the first ones take the remainder). Fixed weights over 1000, or all-fixed weights that do not add up to
 * 1000, are refused, as are duplicate names.
 */
export function distributeWeights<T extends Weighted>(
  variants: T[],
  path: string,
): Array<T & { weight: number; weightType: 'variable' | 'fix' }> {
  const details = repeatedKeys(
    variants,
    (variant) => variant.name,
    (index) => `${path}/${index}/name`,
    'Variant names',
  );
  const fixed = variants.filter((v) => v.weightType === 'fix');
  const variable = variants.filter((v) => v.weightType !== 'fix');
  const fixedTotal = fixed.reduce((sum, v) => sum + (v.weight ?? 0), 0);
  if (fixedTotal > TOTAL_WEIGHT) {
    details.push({ path, message: `Fixed weights add up to ${fixedTotal}; they may not exceed ${TOTAL_WEIGHT}` });
  } else if (variants.length > 0 && variable.length === 0 && fixedTotal !== TOTAL_WEIGHT) {
    details.push({ path, message: `With only fixed weights they must add up to ${TOTAL_WEIGHT} (got ${fixedTotal})` });
  }
  if (details.length > 0) throw new BadDataError('The variants are invalid', details);

  const remaining = TOTAL_WEIGHT - fixedTotal;
  const share = variable.length > 0 ? Math.floor(remaining / variable.length) : 0;
  let remainder = variable.length > 0 ? remaining - share * variable.length : 0;
  return variants.map((variant) => {
    if (variant.weightType === 'fix') return { ...variant, weight: variant.weight ?? 0, weightType: 'fix' as const };
    const extra = remainder > 0 ? 1 : 0;
    remainder -= extra;
    return { ...variant, weight: share + extra, weightType: 'variable' as const };
  });
}

/** A flag's variants in one environment as they are stored and served: weights shared out, `default` stickiness, overrides listed. */
export function normalizeEnvironmentVariants(variants: VariantInput[], path: string): Variant[] {
  return distributeWeights(
    variants.map((variant) => ({ ...variant, stickiness: variant.stickiness ?? 'default' })),
    path,
  ).map(({ overrides, payload, ...variant }) => ({
    ...variant,
    ...(payload ? { payload } : {}),
    overrides: overrides ?? [],
  }));
}
