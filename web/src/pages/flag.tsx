import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, ok, type Schemas } from '../api/client';
import { FlagHistory } from '../components/flag-history';
import { useCan } from '../components/layout';
import { StrategyForm, type StrategyDraft } from '../components/strategy-form';
import { ConfirmButton, ErrorMessage, Field, formatDate, Loaded, Switch, useAction } from '../components/ui';
import { VariantsEditor, type VariantDraft } from '../components/variants-editor';

type Feature = Schemas['featureSchema'];
type FeatureEnvironment = Schemas['featureEnvironmentSchema'];
type Strategy = Schemas['featureStrategySchema'];

interface FlagContext {
  projectId: string;
  flagName: string;
  /** Environments whose changes need a change request, as the project is configured. */
  protectedEnvironments: string[];
  /** Tells the page a change went into a change request instead of being made. */
  onProposed: (environment: string, changeRequestId: number) => void;
}

/**
 * A change of the flag, made directly or, in an environment that requires change requests, added to the user's
 * draft change request there (the API refuses the direct change in such an environment).
 */
function useFlagChange(context: FlagContext) {
  return useAction(
    async ({
      environment,
      change,
      direct,
    }: {
      environment: string | null;
      change: { action: string; payload?: unknown };
      direct: () => Promise<unknown>;
    }) => {
      const through = environment ?? context.protectedEnvironments[0];
      if (
        through &&
        (environment === null ? context.protectedEnvironments.length > 0 : context.protectedEnvironments.includes(environment))
      ) {
        const changeRequest = await ok(
          api.POST('/api/admin/projects/{projectId}/environments/{environment}/change-requests', {
            params: { path: { projectId: context.projectId, environment: through } },
            body: { feature: context.flagName, ...change },
          }),
        );
        context.onProposed(through, (changeRequest as { id: number }).id);
        return;
      }
      await direct();
    },
    [['flag', context.projectId, context.flagName], ['events'], ['pending-for-flag', context.projectId, context.flagName]],
  );
}

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

function EnvironmentCard({
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
  const canSwitch = useCan('UPDATE_FEATURE_ENVIRONMENT');
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
            direct: () =>
              ok(
                api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}', {
                  params: { path: { ...path, strategyId: existing.id } },
                  body: payload,
                }),
              ),
          }
        : {
            environment: environment.name,
            change: { action: 'addStrategy', payload },
            direct: () =>
              ok(
                api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies', {
                  params: { path },
                  body: payload,
                }),
              ),
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
      direct: () =>
        ok(
          api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order', {
            params: { path },
            body: order,
          }),
        ),
    });
  };
  return (
    <section className="card stack" aria-label={`Environment ${environment.name}`} data-testid={`environment-${environment.name}`}>
      <div className="spread">
        <h3 style={{ margin: 0 }}>
          {environment.name} <span className="badge">{environment.type}</span>
        </h3>
        <Switch
          checked={environment.enabled}
          label={`${feature.name} in ${environment.name}`}
          disabled={change.isPending || !canSwitch}
          onChange={(enabled) =>
            change.mutate({
              environment: environment.name,
              change: { action: 'updateEnabled', payload: { enabled } },
              direct: () =>
                ok(
                  enabled
                    ? api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on', { params: { path } })
                    : api.POST('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off', {
                        params: { path },
                      }),
                ),
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
                  <button type="button" aria-label="Move up" disabled={index === 0} onClick={() => reorder(index, -1)}>
                    ↑
                  </button>
                  <button type="button" aria-label="Move down" disabled={index === strategies.length - 1} onClick={() => reorder(index, 1)}>
                    ↓
                  </button>
                  <button type="button" onClick={() => setEditing(strategy.id)}>
                    Edit
                  </button>
                  <ConfirmButton
                    question={`Remove this ${strategy.name} strategy from ${environment.name}?`}
                    onConfirm={() =>
                      change.mutate({
                        environment: environment.name,
                        change: { action: 'deleteStrategy', payload: { id: strategy.id } },
                        direct: () =>
                          ok(
                            api.DELETE(
                              '/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}',
                              {
                                params: { path: { ...path, strategyId: strategy.id } },
                              },
                            ),
                          ),
                      })
                    }
                  >
                    Remove
                  </ConfirmButton>
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
          <button type="button" onClick={() => setEditing('new')}>
            Add strategy
          </button>
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
              direct: () =>
                ok(
                  api.PUT('/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants', {
                    params: { path },
                    body: variants as Schemas['variantSchema'][],
                  }),
                ),
            })
          }
        />
      )}
    </section>
  );
}

function SettingsCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const path = { projectId: context.projectId, featureName: context.flagName };
  const invalidate = [['flag', context.projectId, context.flagName], ['events']];
  const update = useAction(
    (body: Schemas['updateFeatureSchema']) =>
      ok(api.PUT('/api/admin/projects/{projectId}/features/{featureName}', { params: { path }, body })),
    invalidate,
  );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    update.mutate({
      description: String(form.get('description')),
      type: String(form.get('type')) as 'release',
      impressionData: form.get('impressionData') === 'on',
      stale: feature.stale,
    });
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label="Flag settings">
      <div className="grid2">
        <Field label="Type" error={update.error} field="type">
          <select name="type" defaultValue={feature.type}>
            {['release', 'experiment', 'operational', 'kill-switch', 'permission'].map((type) => (
              <option key={type}>{type}</option>
            ))}
          </select>
        </Field>
        <Field label="Description" error={update.error} field="description">
          <input name="description" defaultValue={feature.description ?? ''} />
        </Field>
      </div>
      <label className="check">
        <input type="checkbox" name="impressionData" defaultChecked={feature.impressionData} /> Impression data (SDKs emit an event on each
        evaluation)
      </label>
      <ErrorMessage error={update.error} />
      <div>
        <button type="submit" disabled={update.isPending}>
          Save settings
        </button>
      </div>
    </form>
  );
}

function TagsCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const tagTypes = useQuery({ queryKey: ['tag-types'], queryFn: () => ok(api.GET('/api/admin/tag-types')) });
  const invalidate = [['flag', context.projectId, context.flagName], ['events']];
  const add = useAction(
    (tag: { type: string; value: string }) =>
      ok(api.POST('/api/admin/features/{featureName}/tags', { params: { path: { featureName: feature.name } }, body: tag })),
    invalidate,
  );
  const remove = useAction(
    (tag: { type: string; value: string }) =>
      ok(api.DELETE('/api/admin/features/{featureName}/tags/{type}/{value}', { params: { path: { featureName: feature.name, ...tag } } })),
    invalidate,
  );
  return (
    <section className="card stack" aria-label="Tags">
      <h3 style={{ margin: 0 }}>Tags</h3>
      <div className="chips">
        {feature.tags.length === 0 && <span className="muted small">No tags.</span>}
        {feature.tags.map((tag) => (
          <span key={`${tag.type}:${tag.value}`} className="chip">
            {tag.type}:{tag.value}
            <button type="button" aria-label={`Remove tag ${tag.type}:${tag.value}`} onClick={() => remove.mutate(tag)}>
              ×
            </button>
          </span>
        ))}
      </div>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          add.mutate(
            { type: String(form.get('type')), value: String(form.get('value')) },
            { onSuccess: () => (event.target as HTMLFormElement).reset() },
          );
        }}
      >
        <select name="type" aria-label="Tag type">
          {(tagTypes.data?.tagTypes ?? [{ name: 'simple' }]).map((type) => (
            <option key={type.name}>{type.name}</option>
          ))}
        </select>
        <input name="value" aria-label="Tag value" placeholder="value" required />
        <button type="submit" disabled={add.isPending}>
          Add tag
        </button>
      </form>
      <ErrorMessage error={add.error ?? remove.error} />
    </section>
  );
}

function DependenciesCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const change = useFlagChange(context);
  const path = { projectId: context.projectId, featureName: context.flagName };
  const candidates = useQuery({
    queryKey: ['parents', path],
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}/parents', { params: { path } })),
  });
  return (
    <section className="card stack" aria-label="Dependencies">
      <h3 style={{ margin: 0 }}>Dependencies</h3>
      {feature.dependencies.length === 0 && <span className="muted small">Depends on no other flag.</span>}
      {feature.dependencies.map((dependency) => (
        <div key={dependency.feature} className="spread">
          <span>
            Needs <strong>{dependency.feature}</strong> {dependency.enabled ? 'on' : 'off'}
            {dependency.variants.length > 0 && ` with variant ${dependency.variants.join(' or ')}`}
          </span>
          <button
            type="button"
            className="danger"
            onClick={() =>
              change.mutate({
                environment: null,
                change: { action: 'deleteDependency', payload: { feature: dependency.feature } },
                direct: () =>
                  ok(
                    api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/dependencies/{parent}', {
                      params: { path: { ...path, parent: dependency.feature } },
                    }),
                  ),
              })
            }
          >
            Remove
          </button>
        </div>
      ))}
      {feature.children.length > 0 && <p className="small">Flags depending on this one: {feature.children.join(', ')}</p>}
      {feature.dependencies.length === 0 && (
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            const payload = { feature: String(form.get('parent')), enabled: form.get('enabled') === 'true' };
            change.mutate({
              environment: null,
              change: { action: 'addDependency', payload },
              direct: () =>
                ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/dependencies', { params: { path }, body: payload })),
            });
          }}
        >
          <select name="parent" aria-label="Parent flag" required>
            {(candidates.data ?? []).map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
          <select name="enabled" aria-label="Parent state">
            <option value="true">is on</option>
            <option value="false">is off</option>
          </select>
          <button type="submit" disabled={change.isPending || !candidates.data?.length}>
            Add dependency
          </button>
        </form>
      )}
      <ErrorMessage error={change.error} />
    </section>
  );
}

function LifecycleCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const path = { projectId: context.projectId, featureName: context.flagName };
  const invalidate = [['flag', context.projectId, context.flagName], ['events'], ['lifecycle', path]];
  const stages = useQuery({
    queryKey: ['lifecycle', path],
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}/lifecycle', { params: { path } })),
  });
  const complete = useAction(
    (status: 'kept' | 'discarded') =>
      ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete', { params: { path }, body: { status } })),
    invalidate,
  );
  const uncomplete = useAction(
    () => ok(api.POST('/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete', { params: { path } })),
    invalidate,
  );
  const stage = feature.lifecycle?.stage;
  return (
    <section className="card stack" aria-label="Lifecycle">
      <h3 style={{ margin: 0 }}>Lifecycle</h3>
      <ol className="row small" style={{ listStyle: 'none', padding: 0 }}>
        {(stages.data ?? []).map((entry) => (
          <li key={entry.stage} className={`badge ${entry.stage === stage ? 'on' : ''}`}>
            {entry.stage} · {formatDate(entry.enteredStageAt)}
            {entry.status ? ` (${entry.status})` : ''}
          </li>
        ))}
      </ol>
      <div className="row">
        {stage !== 'completed' && stage !== 'archived' && (
          <>
            <button type="button" onClick={() => complete.mutate('kept')}>
              Complete: kept
            </button>
            <button type="button" onClick={() => complete.mutate('discarded')}>
              Complete: discarded
            </button>
          </>
        )}
        {stage === 'completed' && (
          <button type="button" onClick={() => uncomplete.mutate()}>
            Reopen
          </button>
        )}
      </div>
      <ErrorMessage error={complete.error ?? uncomplete.error} />
    </section>
  );
}

export function FlagPage() {
  const { projectId = '', flagName = '' } = useParams();
  const navigate = useNavigate();
  const [proposed, setProposed] = useState<{ environment: string; id: number } | null>(null);
  const path = { projectId, featureName: flagName };
  const flag = useQuery({
    queryKey: ['flag', projectId, flagName],
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/features/{featureName}', { params: { path } })),
  });
  const config = useQuery({
    queryKey: ['cr-config', projectId],
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/config', { params: { path: { projectId } } })),
  });
  const pending = useQuery({
    queryKey: ['pending-for-flag', projectId, flagName],
    queryFn: () => ok(api.GET('/api/admin/projects/{projectId}/change-requests/pending/{featureName}', { params: { path } })),
  });
  const usage = useQuery({
    queryKey: ['flag-usage', projectId, flagName],
    queryFn: () =>
      ok(
        api.GET('/api/admin/search/features', {
          params: { query: { query: flagName, project: `IS:${projectId}`, archived: 'IS:true', limit: '50' } },
        }),
      ),
  });
  const segments = useQuery({ queryKey: ['segments'], queryFn: () => ok(api.GET('/api/admin/segments')) });
  const segmentNames = new Map((segments.data?.segments ?? []).map((segment) => [segment.id, segment.name]));
  const context: FlagContext = {
    projectId,
    flagName,
    protectedEnvironments: (config.data ?? []).filter((entry) => entry.changeRequestEnabled).map((entry) => entry.environment),
    onProposed: (environment, id) => setProposed({ environment, id }),
  };
  const flagChange = useFlagChange(context);
  const stale = useAction(
    (stale: boolean) =>
      ok(
        api.PATCH('/api/admin/projects/{projectId}/features/{featureName}', {
          params: { path },
          body: [{ op: 'replace', path: '/stale', value: stale }],
        }),
      ),
    [['flag', projectId, flagName], ['events']],
  );
  const favorite = useAction(
    (on: boolean) =>
      ok(
        on
          ? api.POST('/api/admin/projects/{projectId}/features/{featureName}/favorites', { params: { path } })
          : api.DELETE('/api/admin/projects/{projectId}/features/{featureName}/favorites', { params: { path } }),
      ),
    [['flag', projectId, flagName]],
  );
  const revive = useAction(
    () => ok(api.POST('/api/admin/projects/{projectId}/revive', { params: { path: { projectId } }, body: { features: [flagName] } })),
    [['flag', projectId, flagName], ['events']],
  );
  const usageOf = usage.data?.features.find((entry) => entry.name === flagName);

  return (
    <Loaded query={flag} what="the flag">
      {(feature) => (
        <div>
          <p className="small">
            <Link to={`/projects/${encodeURIComponent(projectId)}`}>{projectId}</Link> /
          </p>
          <div className="spread">
            <h1>
              <button
                type="button"
                className="link"
                aria-label={feature.favorite ? 'Remove from favorites' : 'Add to favorites'}
                aria-pressed={feature.favorite}
                onClick={() => favorite.mutate(!feature.favorite)}
              >
                {feature.favorite ? '★' : '☆'}
              </button>{' '}
              {feature.name} <span className="badge">{feature.type}</span> {feature.stale && <span className="badge stale">stale</span>}
              {feature.archived && <span className="badge">archived</span>}
            </h1>
            <div className="row">
              {feature.archived ? (
                <button type="button" onClick={() => revive.mutate()}>
                  Revive
                </button>
              ) : (
                <>
                  <button type="button" onClick={() => stale.mutate(!feature.stale)}>
                    {feature.stale ? 'Mark active' : 'Mark stale'}
                  </button>
                  <ConfirmButton
                    question={`Archive ${feature.name}? SDKs stop receiving it.`}
                    onConfirm={() =>
                      flagChange.mutate(
                        {
                          environment: null,
                          change: { action: 'archiveFeature', payload: {} },
                          direct: () => ok(api.DELETE('/api/admin/projects/{projectId}/features/{featureName}', { params: { path } })),
                        },
                        {
                          onSuccess: () =>
                            context.protectedEnvironments.length === 0 && navigate(`/projects/${encodeURIComponent(projectId)}`),
                        },
                      )
                    }
                  >
                    Archive
                  </ConfirmButton>
                </>
              )}
            </div>
          </div>
          {feature.description && <p>{feature.description}</p>}
          <p className="muted small">
            Created {formatDate(feature.createdAt)} by {feature.createdBy.name} · lifecycle {feature.lifecycle?.stage ?? '—'}
            {usageOf && (
              <>
                {' · '}usage (last hour):{' '}
                {usageOf.environments.map((environment) => `${environment.name} ${environment.yes} yes / ${environment.no} no`).join(', ')}
              </>
            )}
          </p>
          <ErrorMessage error={stale.error ?? favorite.error ?? revive.error ?? flagChange.error} />
          {proposed && (
            <p className="notice" role="status">
              Your change went into change request{' '}
              <Link to={`/projects/${encodeURIComponent(projectId)}/change-requests/${proposed.id}`}>#{proposed.id}</Link> for{' '}
              {proposed.environment}. Send it to review there.
            </p>
          )}
          {(pending.data ?? []).length > 0 && (
            <div className="notice">
              Open change requests for this flag:{' '}
              {pending.data!.map((request) => (
                <Link
                  key={request.id}
                  to={`/projects/${encodeURIComponent(projectId)}/change-requests/${request.id}`}
                  style={{ marginRight: '0.5rem' }}
                >
                  #{request.id} {request.environment} ({request.state})
                </Link>
              ))}
            </div>
          )}
          <h2>Environments</h2>
          {feature.environments.map((environment) => (
            <EnvironmentCard
              key={environment.name}
              environment={environment}
              feature={feature}
              context={context}
              segmentNames={segmentNames}
            />
          ))}
          <h2>Settings</h2>
          <SettingsCard feature={feature} context={context} />
          <div className="grid2">
            <TagsCard feature={feature} context={context} />
            <DependenciesCard feature={feature} context={context} />
          </div>
          <LifecycleCard feature={feature} context={context} />
          <h2>History</h2>
          <FlagHistory flagName={feature.name} />
        </div>
      )}
    </Loaded>
  );
}
