import { useQuery } from '@tanstack/react-query';
import { actions, queries } from '../../api/queries';
import { ErrorMessage, useAction, onFormSubmit } from '../../components/ui';
import type { Feature, FlagContext } from './flag-change';

export function TagsCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const tagTypes = useQuery(queries.tagTypes());
  const path = { projectId: context.projectId, featureName: feature.name };
  const add = useAction(actions.addTag);
  const remove = useAction(actions.removeTag);
  return (
    <section className="card stack" aria-label="Tags">
      <h3 style={{ margin: 0 }}>Tags</h3>
      <div className="chips">
        {feature.tags.length === 0 && <span className="muted small">No tags.</span>}
        {feature.tags.map((tag) => (
          <span key={`${tag.type}:${tag.value}`} className="chip">
            {tag.type}:{tag.value}
            <button type="button" aria-label={`Remove tag ${tag.type}:${tag.value}`} onClick={() => remove.mutate({ ...path, tag })}>
              ×
            </button>
          </span>
        ))}
      </div>
      <form
        className="row"
        onSubmit={onFormSubmit((form, element) => {
          add.mutate(
            { ...path, tag: { type: String(form.get('type')), value: String(form.get('value')) } },
            { onSuccess: () => element.reset() },
          );
        })}
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
