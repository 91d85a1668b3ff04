import { useState } from 'react';
import { flagRequests, type Schemas } from '../../api/queries';
import { useCan } from '../../components/layout';
import { StrategyForm, type StrategyDraft } from '../../components/strategy-form';
import { ConfirmButton, ErrorMessage, formatDate, Switch } from '../../components/ui';
import { VariantsEditor, type VariantDraft } from '../../components/variants-editor';
import { type Feature, type FlagContext, useFlagChange } from './flag-change';

type FeatureEnvironment = Schemas['featureEnvironmentSchema'];
type Strategy = Schemas['featureStrategySchema'];

function ConstraintText({ constraint }: { constraint: Schemas['constraintSchema'] }) {
  const values = constraint.values?.length ? constraint.values.join(', ') : (constraint.value ?? '');
  return (
    <li>
      <code>{constraint.contextName}</code> {constraint.inverted ? 'NOT ' : ''}
      {constraint.operator} <strong>{values}</strong>
      {constraint.caseInsensitive ? ' (ignoring case)' : ''}
    </li>
  );
}

function strategySummary(strategy: Strategy): string {
  if (strategy.name === 'flexibleRollout')
    return `${strategy.parameters.rollout ?? '100'}% of ${strategy.parameters.stickiness ?? 'default'}`;
  const parameters = Object.entries(strategy.parameters).filter(([, value]) => value !== '');
  return parameters.map(([name, value]) => `${name}: ${value}`).join(' · ');
}

export function EnvironmentCard({
  environment,
  feature,
  context,
  segmentNames,
}: {
  environment: FeatureEnvironment;
  feature: Feature;
  context: FlagContext;
  segmentNames: Map<number, string>;
}) {
  const change = useFlagChange(context);
  // What the signed-in person may do here: a role may hold these in some environments only.
  const canSwitch = useCan('UPDATE_FEATURE_ENVIRONMENT', context.projectId, environment.name);
  const canAdd = useCan('CREATE_FEATURE_STRATEGY', context.projectId, environment.name);
  const canEdit = useCan('UPDATE_FEATURE_STRATEGY', context.projectId, environment.name);
  const canRemove = useCan('DELETE_FEATURE_STRATEGY', context.projectId, environment.name);
  const [editing, setEditing] = useState<string | 'new' | null>(null);
  const [showVariants, setShowVariants] = useState(false);
  const path = { projectId: context.projectId, featureName: context.flagName, environment: environment.name };
  const isProtected = context.protectedEnvironments.includes(environment.name);
  const strategies = [...environment.strategies].sort((a, b) => a.sortOrder - b.sortOrder);

  const save = (draft: StrategyDraft, existing?: Strategy) => {
    const payload = { ...draft, title: draft.title || null };
    change.mutate(
      existing
        ? {
            environment: environment.name,
            change: { action: 'updateStrategy', payload: { ...payload, id: existing.id } },
            direct: () => flagRequests.updateStrategy({ ...path, strategyId: existing.id }, payload),
          }
        : {
            environment: environment.name,
            change: { action: 'addStrategy', payload },
            direct: () => flagRequests.addStrategy(path, payload),
          },
      { onSuccess: () => setEditing(null) },
    );
  };
  const reorder = (index: number, by: number) => {
    const next = [...strategies];
    const [moved] = next.splice(index, 1);
    next.splice(index + by, 0, moved!);
    const order = next.map((strategy, at) => ({ id: strategy.id, sortOrder: at }));
    change.mutate({
      environment: environment.name,
      change: { action: 'reorderStrategy', payload: order },
      direct: () => flagRequests.reorderStrategies(path, order),
    });
  };
  return (
    <section className="card stack" aria-label={`Environment ${environment.name}`} data-testid={`environment-${environment.name}`}>
      <div className="spread">
        <h3 style={{ margin: 0 }}>
          {environment.name} {environment.type !== environment.name && <span className="badge">{environment.type}</span>}
        </h3>
        <Switch
          checked={environment.enabled}
          label={`${feature.name} in ${environment.name}`}
          disabled={change.isPending || !canSwitch}
          onChange={(enabled) =>
            change.mutate({
              environment: environment.name,
              change: { action: 'updateEnabled', payload: { enabled } },
              direct: () => flagRequests.setEnabled(path, enabled),
            })
          }
        />
      </div>
      {isProtected && (
        <p className="notice small">
          Changes in {environment.name} need approval: they are added to your draft change request instead of being made at once.
        </p>
      )}
      <span className="muted small">Last seen: {formatDate(environment.lastSeenAt)}</span>
      <ErrorMessage error={change.error} />
      {strategies.length === 0 && <p className="muted small">No strategies: when on, the flag is on for everyone.</p>}
      <ol className="stack" style={{ paddingLeft: '1.2rem', margin: 0 }}>
        {strategies.map((strategy, index) =>
          editing === strategy.id ? (
            <li key={strategy.id}>
              <StrategyForm
                flagName={feature.name}
                initial={{
                  name: strategy.name,
                  title: strategy.title,
                  disabled: strategy.disabled,
                  parameters: strategy.parameters,
                  constraints: strategy.constraints,
                  segments: strategy.segments,
                  variants: strategy.variants as VariantDraft[],
                }}
                error={change.error}
                saving={change.isPending}
                onSave={(draft) => save(draft, strategy)}
                onCancel={() => setEditing(null)}
              />
            </li>
          ) : (
            <li key={strategy.id} data-testid="strategy">
              <div className="spread">
                <div>
                  <strong>{strategy.title || strategy.name}</strong> {strategy.disabled && <span className="badge">disabled</span>}
                  <div className="small">{strategySummary(strategy)}</div>
                </div>
                <div className="row">
                  {canEdit && (
                    <>
                      <button type="button" aria-label="Move up" disabled={index === 0} onClick={() => reorder(index, -1)}>
                        ↑
                      </button>
                      <button
                        type="button"
                        aria-label="Move down"
                        disabled={index === strategies.length - 1}
                        onClick={() => reorder(index, 1)}
                      >
                        ↓
                      </button>
                      <button type="button" onClick={() => setEditing(strategy.id)}>
                        Edit
                      </button>
                    </>
                  )}
                  {canRemove && (
                    <ConfirmButton
                      question={`Remove this ${strategy.name} strategy from ${environment.name}?`}
                      onConfirm={() =>
                        change.mutate({
                          environment: environment.name,
                          change: { action: 'deleteStrategy', payload: { id: strategy.id } },
                          direct: () => flagRequests.deleteStrategy({ ...path, strategyId: strategy.id }),
                        })
                      }
                    >
                      Remove
                    </ConfirmButton>
                  )}
                </div>
              </div>
              {strategy.constraints.length > 0 && (
                <ul className="small" aria-label="Constraints">
                  {strategy.constraints.map((constraint, at) => (
                    <ConstraintText key={at} constraint={constraint} />
                  ))}
                </ul>
              )}
              {strategy.segments.length > 0 && (
                <div className="small">Segments: {strategy.segments.map((id) => segmentNames.get(id) ?? `#${id}`).join(', ')}</div>
              )}
              {strategy.variants.length > 0 && (
                <div className="small">Variants: {strategy.variants.map((variant) => variant.name).join(', ')}</div>
              )}
            </li>
          ),
        )}
      </ol>
      {editing === 'new' ? (
        <StrategyForm
          flagName={feature.name}
          error={change.error}
          saving={change.isPending}
          onSave={(draft) => save(draft)}
          onCancel={() => setEditing(null)}
        />
      ) : (
        <div className="row">
          {canAdd && (
            <button type="button" onClick={() => setEditing('new')}>
              Add strategy
            </button>
          )}
          <button type="button" onClick={() => setShowVariants(!showVariants)} aria-expanded={showVariants}>
            Variants ({environment.variants.length})
          </button>
        </div>
      )}
      {showVariants && (
        <VariantsEditor
          initial={environment.variants as VariantDraft[]}
          saving={change.isPending}
          onSave={(variants) =>
            change.mutate({
              environment: environment.name,
              change: { action: 'patchVariant', payload: { variants } },
              direct: () => flagRequests.setVariants(path, variants as Schemas['variantSchema'][]),
            })
          }
        />
      )}
    </section>
  );
}
