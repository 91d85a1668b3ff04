import { useQuery } from '@tanstack/react-query';
import { actions, queries } from '../../api/queries';
import { ErrorMessage, formatDate, useAction } from '../../components/ui';
import type { Feature, FlagContext } from './flag-change';

export function LifecycleCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const path = { projectId: context.projectId, featureName: context.flagName };
  const stages = useQuery(queries.flagLifecycle(path));
  const complete = useAction(actions.completeLifecycle);
  const uncomplete = useAction(actions.uncompleteLifecycle);
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
            <button type="button" onClick={() => complete.mutate({ path, status: 'kept' })}>
              Complete: kept
            </button>
            <button type="button" onClick={() => complete.mutate({ path, status: 'discarded' })}>
              Complete: discarded
            </button>
          </>
        )}
        {stage === 'completed' && (
          <button type="button" onClick={() => uncomplete.mutate(path)}>
            Reopen
          </button>
        )}
      </div>
      <ErrorMessage error={complete.error ?? uncomplete.error} />
    </section>
  );
}
