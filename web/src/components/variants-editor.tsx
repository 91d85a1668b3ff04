import { useState } from 'react';
import { Field } from './ui';

export interface VariantDraft {
  name: string;
  weight: number;
  weightType?: 'variable' | 'fix';
  stickiness?: string;
  payload?: { type: 'json' | 'csv' | 'string' | 'number'; value: string };
  overrides?: Array<{ contextName: string; values: string[] }>;
}

/**
 * Variants as a list to add to, edit, reorder and remove from. Weights are in tenths of a percent as the API
 * keeps them; the editor shows percentages. Variable weights share what the fixed ones leave.
 */
export function VariantsEditor({
  initial,
  onSave,
  saving,
  saveLabel = 'Save variants',
}: {
  initial: VariantDraft[];
  onSave: (variants: VariantDraft[]) => void;
  saving?: boolean;
  saveLabel?: string;
}) {
  const [variants, setVariants] = useState<VariantDraft[]>(initial);
  const set = (index: number, change: Partial<VariantDraft>) =>
    setVariants(variants.map((variant, at) => (at === index ? { ...variant, ...change } : variant)));
  const move = (index: number, by: number) => {
    const next = [...variants];
    const [moved] = next.splice(index, 1);
    next.splice(index + by, 0, moved!);
    setVariants(next);
  };
  return (
    <div className="stack" data-testid="variants-editor">
      {variants.length === 0 && <p className="muted small">No variants.</p>}
      {variants.map((variant, index) => (
        <fieldset key={index} className="row card" aria-label={`Variant ${index + 1}`}>
          <Field label="Name">
            <input value={variant.name} onChange={(event) => set(index, { name: event.target.value })} required />
          </Field>
          <Field label="Weight">
            <select
              value={variant.weightType ?? 'variable'}
              onChange={(event) => set(index, { weightType: event.target.value as 'variable' | 'fix' })}
            >
              <option value="variable">shared</option>
              <option value="fix">fixed</option>
            </select>
          </Field>
          {variant.weightType === 'fix' && (
            <Field label="Percent">
              <input
                type="number"
                min={0}
                max={100}
                step={0.1}
                value={variant.weight / 10}
                onChange={(event) => set(index, { weight: Math.round(Number(event.target.value) * 10) })}
              />
            </Field>
          )}
          <Field label="Payload">
            <select
              value={variant.payload?.type ?? ''}
              onChange={(event) =>
                set(index, {
                  payload: event.target.value ? { type: event.target.value as 'json', value: variant.payload?.value ?? '' } : undefined,
                })
              }
            >
              <option value="">none</option>
              <option value="string">string</option>
              <option value="json">json</option>
              <option value="csv">csv</option>
              <option value="number">number</option>
            </select>
          </Field>
          {variant.payload && (
            <Field label="Payload value">
              <input
                value={variant.payload.value}
                onChange={(event) => set(index, { payload: { ...variant.payload!, value: event.target.value } })}
              />
            </Field>
          )}
          <div className="row">
            <button
              type="button"
              aria-label={`Move ${variant.name || 'variant'} up`}
              disabled={index === 0}
              onClick={() => move(index, -1)}
            >
              ↑
            </button>
            <button
              type="button"
              aria-label={`Move ${variant.name || 'variant'} down`}
              disabled={index === variants.length - 1}
              onClick={() => move(index, 1)}
            >
              ↓
            </button>
            <button type="button" className="danger" onClick={() => setVariants(variants.filter((_, at) => at !== index))}>
              Remove
            </button>
          </div>
        </fieldset>
      ))}
      <div className="row">
        <button
          type="button"
          onClick={() => setVariants([...variants, { name: '', weight: 0, weightType: 'variable', stickiness: 'default' }])}
        >
          Add variant
        </button>
        <button type="button" className="primary" disabled={saving} onClick={() => onSave(withWeights(variants))}>
          {saveLabel}
        </button>
      </div>
    </div>
  );
}

/** The API wants every weight filled in: variable variants share what fixed ones leave, the first takes the rest. */
function withWeights(variants: VariantDraft[]): VariantDraft[] {
  const fixed = variants.filter((variant) => variant.weightType === 'fix').reduce((sum, variant) => sum + variant.weight, 0);
  const shared = variants.filter((variant) => variant.weightType !== 'fix');
  const each = shared.length ? Math.floor(Math.max(0, 1000 - fixed) / shared.length) : 0;
  const remainder = shared.length ? Math.max(0, 1000 - fixed) - each * shared.length : 0;
  let first = true;
  return variants.map((variant) => {
    if (variant.weightType === 'fix') return variant;
    const weight = each + (first ? remainder : 0);
    first = false;
    return { ...variant, weightType: 'variable', stickiness: variant.stickiness ?? 'default', weight };
  });
}
