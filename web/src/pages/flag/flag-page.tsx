import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { actions, flagRequests, queries } from '../../api/queries';
import { FlagHistory } from '../../components/flag-history';
import { useCan } from '../../components/layout';
import { ConfirmButton, ErrorMessage, formatDate, Loaded, useAction } from '../../components/ui';
import { DependenciesCard } from './dependencies-card';
import { EnvironmentCard } from './environment-card';
import { type FlagContext, useFlagChange } from './flag-change';
import { LifecycleCard } from './lifecycle-card';
import { LinksCard } from './links-card';
import { CodeReferencesCard } from './code-references-card';
import { ReleaseSection } from './release-section';
import { SettingsCard } from './settings-card';
import { TagsCard } from './tags-card';
import { CloneForm } from './clone-form';

export function FlagPage() {
  const { projectId = '', flagName = '' } = useParams();
  const navigate = useNavigate();
  const [proposed, setProposed] = useState<{ environment: string; id: number } | null>(null);
  const path = { projectId, featureName: flagName };
  const flag = useQuery(queries.flag(path));
  const config = useQuery(queries.changeRequestConfig(projectId));
  const pending = useQuery(queries.pendingForFlag(path));
  const usage = useQuery(queries.featureSearch({ query: flagName, project: `IS:${projectId}`, archived: 'IS:true', limit: '50' }));
  const segments = useQuery(queries.segments());
  const segmentNames = new Map((segments.data?.segments ?? []).map((segment) => [segment.id, segment.name]));
  const context: FlagContext = {
    projectId,
    flagName,
    protectedEnvironments: (config.data ?? []).filter((entry) => entry.changeRequestEnabled).map((entry) => entry.environment),
    onProposed: (environment, id) => setProposed({ environment, id }),
  };
  const flagChange = useFlagChange(context);
  const stale = useAction(actions.setStale);
  const favorite = useAction(actions.setFavorite);
  const revive = useAction(actions.reviveFlag);
  // As the API allows them: marking stale and reviving change the flag, archiving deletes it.
  const canUpdate = useCan('UPDATE_FEATURE', projectId);
  const canArchive = useCan('DELETE_FEATURE', projectId);
  const canCreate = useCan('CREATE_FEATURE', projectId);
  const [cloning, setCloning] = useState(false);
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
                onClick={() => favorite.mutate({ ...path, favorite: !feature.favorite })}
              >
                {feature.favorite ? '★' : '☆'}
              </button>{' '}
              {feature.name} <span className="badge">{feature.type}</span> {feature.stale && <span className="badge stale">stale</span>}
              {feature.archived && <span className="badge">archived</span>}
            </h1>
            <div className="row">
              {feature.archived ? (
                canUpdate && (
                  <button type="button" onClick={() => revive.mutate(path)}>
                    Revive
                  </button>
                )
              ) : (
                <>
                  {canCreate && !cloning && (
                    <button type="button" onClick={() => setCloning(true)}>
                      Clone
                    </button>
                  )}
                  {canUpdate && (
                    <button type="button" onClick={() => stale.mutate({ path, stale: !feature.stale })}>
                      {feature.stale ? 'Mark active' : 'Mark stale'}
                    </button>
                  )}
                  {canArchive && (
                    <ConfirmButton
                      question={`Archive ${feature.name}? SDKs stop receiving it.`}
                      onConfirm={() =>
                        flagChange.mutate(
                          {
                            environment: null,
                            change: { action: 'archiveFeature', payload: {} },
                            direct: () => flagRequests.archive(path),
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
                  )}
                </>
              )}
            </div>
          </div>
          {cloning && !feature.archived && <CloneForm path={path} onClose={() => setCloning(false)} />}
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
          <div className="spread">
            <h2>Rollout and usage</h2>
            <Link to={`/connect?project=${encodeURIComponent(projectId)}&flag=${encodeURIComponent(feature.name)}`}>Connect an SDK →</Link>
          </div>
          {feature.environments.map((environment) => (
            <ReleaseSection key={environment.name} projectId={projectId} featureName={feature.name} environment={environment.name} />
          ))}
          <h2>Settings</h2>
          <SettingsCard feature={feature} context={context} />
          <div className="grid2">
            <TagsCard feature={feature} context={context} />
            <DependenciesCard feature={feature} context={context} />
          </div>
          <div className="grid2">
            <LinksCard feature={feature} context={context} />
            <LifecycleCard feature={feature} context={context} />
          </div>
          <CodeReferencesCard context={context} />
          <h2>History</h2>
          <FlagHistory flagName={feature.name} />
        </div>
      )}
    </Loaded>
  );
}
