import { actions } from '../../api/queries';
import { ErrorMessage, useAction, onFormSubmit } from '../../components/ui';
import type { Feature, FlagContext } from './flag-change';

/** Links from the flag to what concerns it: a ticket, a dashboard, the code that reads it. */
export function LinksCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const path = { projectId: context.projectId, featureName: feature.name };
  const add = useAction(actions.addLink);
  const remove = useAction(actions.removeLink);
  return (
    <section className="card stack" aria-label="Links">
      <h3 style={{ margin: 0 }}>Links</h3>
      {feature.links.length === 0 && (
        <span className="muted small">No links yet: add the ticket, a dashboard or the code that reads the flag.</span>
      )}
      <ul className="links">
        {feature.links.map((link) => (
          <li key={link.id} className="spread">
            <a href={link.url} target="_blank" rel="noopener noreferrer">
              {link.title ?? link.url}
            </a>
            <button
              type="button"
              className="link"
              aria-label={`Remove link ${link.title ?? link.url}`}
              onClick={() => remove.mutate({ ...path, linkId: link.id })}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {feature.links.length < 10 && (
        <form
          className="row"
          onSubmit={onFormSubmit((form, element) => {
            const title = String(form.get('title')).trim();
            add.mutate(
              { ...path, link: { url: String(form.get('url')), title: title === '' ? null : title } },
              { onSuccess: () => element.reset() },
            );
          })}
        >
          <input name="url" aria-label="Link address" placeholder="https://…" required />
          <input name="title" aria-label="Link title" placeholder="title (optional)" />
          <button type="submit" disabled={add.isPending}>
            Add link
          </button>
        </form>
      )}
      <ErrorMessage error={add.error ?? remove.error} />
    </section>
  );
}
