import { useQuery } from '@tanstack/react-query';
import { flagRequests, queries } from '../../api/queries';
import { ErrorMessage, onFormSubmit } from '../../components/ui';
import { type Feature, type FlagContext, useFlagChange } from './flag-change';

export function DependenciesCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const change = useFlagChange(context);
  const path = { projectId: context.projectId, featureName: context.flagName };
  const candidates = useQuery(queries.flagParents(path));
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
                direct: () => flagRequests.removeDependency({ ...path, parent: dependency.feature }),
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
          onSubmit={onFormSubmit((form) => {
            const payload = { feature: String(form.get('parent')), enabled: form.get('enabled') === 'true' };
            change.mutate({
              environment: null,
              change: { action: 'addDependency', payload },
              direct: () => flagRequests.addDependency(path, payload),
            });
          })}
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
