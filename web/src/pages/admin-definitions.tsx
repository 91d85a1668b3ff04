import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../api/errors';
import { actions, queries, type Schemas } from '../api/queries';
import { ConstraintsEditor } from '../components/strategy-form';
import { ConfirmButton, ErrorMessage, Field, formatDate, Loaded, Table, useAction } from '../components/ui';

function TagTypeRow({ type }: { type: Schemas['tagTypeSchema'] }) {
  const [editing, setEditing] = useState(false);
  const update = useAction(actions.updateTagType, () => setEditing(false));
  const remove = useAction(actions.deleteTagType);
  return (
    <tr>
      <td>{type.name}</td>
      <td>
        {editing ? (
          <form
            className="row"
            onSubmit={(event) => {
              event.preventDefault();
              update.mutate({ name: type.name, description: String(new FormData(event.currentTarget).get('description')) });
            }}
          >
            <input name="description" aria-label={`Description of ${type.name}`} defaultValue={type.description ?? ''} />
            <button type="submit" disabled={update.isPending}>
              Save
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </form>
        ) : (
          type.description
        )}
        <ErrorMessage error={update.error ?? remove.error} />
      </td>
      <td>
        <div className="row">
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
          <ConfirmButton question={`Delete the tag type ${type.name}?`} onConfirm={() => remove.mutate(type.name)}>
            Delete
          </ConfirmButton>
        </div>
      </td>
    </tr>
  );
}

export function AdminTagTypes() {
  const tagTypes = useQuery(queries.tagTypes());
  const create = useAction(actions.createTagType);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate(
      { name: String(form.get('name')).trim(), description: String(form.get('description')) },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  };
  return (
    <div>
      <h1>Tag types</h1>
      <Loaded query={tagTypes} what="tag types">
        {(data) => (
          <Table label="Tag types" columns={['Name', 'Description', '']}>
            {data.tagTypes.map((type) => (
              <TagTypeRow key={type.name} type={type} />
            ))}
          </Table>
        )}
      </Loaded>
      <h2>New tag type</h2>
      <form className="card row fields" onSubmit={submit} aria-label="New tag type">
        <Field label="Name" error={create.error} field="name">
          <input name="name" required />
        </Field>
        <Field label="Description" error={create.error} field="description">
          <input name="description" />
        </Field>
        <button className="primary" type="submit" disabled={create.isPending}>
          Create tag type
        </button>
        <ErrorMessage error={create.error} />
      </form>
    </div>
  );
}

type ContextField = Schemas['contextFieldSchema'];

/** Creates a context field, or edits one (its name stays: strategies refer to it). */
function ContextFieldForm({ field, onDone }: { field?: ContextField; onDone: () => void }) {
  const save = useAction(actions.saveContextField, onDone);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const legalValues = String(form.get('legalValues'))
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean)
      .map((value) => ({ value }));
    save.mutate({
      ...(field ? { existing: field.name } : {}),
      body: {
        name: field?.name ?? String(form.get('name')).trim(),
        description: String(form.get('description')),
        stickiness: form.get('stickiness') === 'on',
        legalValues,
      },
    });
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label={field ? `Edit context field ${field.name}` : 'New context field'}>
      <div className="grid2">
        {!field && (
          <Field label="Name" error={save.error} field="name">
            <input name="name" required />
          </Field>
        )}
        <Field label="Description" error={save.error} field="description">
          <input name="description" defaultValue={field?.description ?? ''} />
        </Field>
        <Field label="Legal values (comma-separated, optional)" error={save.error} field="legalValues">
          <input name="legalValues" defaultValue={field?.legalValues.map((legal) => legal.value).join(', ') ?? ''} />
        </Field>
      </div>
      <label className="check">
        <input type="checkbox" name="stickiness" defaultChecked={field?.stickiness ?? false} /> Can be used for stickiness
      </label>
      <ErrorMessage error={save.error} />
      <div className="row">
        <button className="primary" type="submit" disabled={save.isPending}>
          {field ? `Save ${field.name}` : 'Create context field'}
        </button>
        {field && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function AdminContextFields() {
  const fields = useQuery(queries.contextFields());
  const [editing, setEditing] = useState<string | null>(null);
  const [formKey, setFormKey] = useState(0);
  const remove = useAction(actions.deleteContextField);
  const editedField = fields.data?.find((field) => field.name === editing);
  return (
    <div>
      <h1>Context fields</h1>
      <p className="muted">The fields of the context SDKs pass when they evaluate flags; constraints test them.</p>
      <Loaded query={fields} what="context fields">
        {(data) => (
          <Table label="Context fields" columns={['Name', 'Description', 'Legal values', 'Stickiness', '']}>
            {data.map((field) => (
              <tr key={field.name}>
                <td>{field.name}</td>
                <td>{field.description}</td>
                <td className="small">{field.legalValues.map((legal) => legal.value).join(', ')}</td>
                <td>{field.stickiness ? 'yes' : 'no'}</td>
                <td>
                  <div className="row">
                    <button type="button" onClick={() => setEditing(field.name)}>
                      Edit
                    </button>
                    <ConfirmButton question={`Delete the context field ${field.name}?`} onConfirm={() => remove.mutate(field.name)}>
                      Delete
                    </ConfirmButton>
                  </div>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <ErrorMessage error={remove.error} />
      {editedField && (
        <>
          <h2>Edit {editedField.name}</h2>
          <ContextFieldForm key={editedField.name} field={editedField} onDone={() => setEditing(null)} />
        </>
      )}
      <h2>New context field</h2>
      <ContextFieldForm key={formKey} onDone={() => setFormKey(formKey + 1)} />
    </div>
  );
}

type Segment = Schemas['adminSegmentSchema'];

/** The protected environments a refused segment change named (`"production" of project "checkout"`). */
function protectedEnvironmentsIn(error: unknown): Array<{ project: string; environment: string }> {
  if (!(error instanceof ApiError) || error.status !== 403) return [];
  return [...error.message.matchAll(/"([^"]+)" of project "([^"]+)"/g)].map((match) => ({ environment: match[1]!, project: match[2]! }));
}

function SegmentForm({ segment, onDone }: { segment?: Segment; onDone: () => void }) {
  const [constraints, setConstraints] = useState<Schemas['constraintSchema'][]>(segment?.constraints ?? []);
  const [proposed, setProposed] = useState<{ project: string; id: number } | null>(null);
  const save = useAction(actions.saveSegment, onDone);
  // A segment used in an environment that requires change requests changes through one (spec 4.5).
  const propose = useAction(actions.proposeSegmentChange, setProposed);
  const [draft, setDraft] = useState<Schemas['upsertSegmentSchema'] | null>(null);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body = { name: String(form.get('name')).trim(), description: String(form.get('description')), constraints };
    setDraft(body);
    setProposed(null);
    save.mutate({ ...(segment ? { existing: segment.id } : {}), body });
  };
  const protectedIn = segment ? protectedEnvironmentsIn(save.error) : [];
  return (
    <form className="card stack" onSubmit={submit} aria-label={segment ? `Edit segment ${segment.name}` : 'New segment'}>
      <div className="grid2">
        <Field label="Name" error={save.error} field="name">
          <input name="name" defaultValue={segment?.name} required />
        </Field>
        <Field label="Description" error={save.error} field="description">
          <input name="description" defaultValue={segment?.description ?? ''} />
        </Field>
      </div>
      <h3>Constraints</h3>
      <ConstraintsEditor constraints={constraints} onChange={setConstraints} />
      <ErrorMessage error={save.error} />
      {protectedIn.length > 0 && draft && !proposed && (
        <div className="row">
          {protectedIn.map(({ project, environment }) => (
            <button
              key={`${project}/${environment}`}
              type="button"
              onClick={() => propose.mutate({ projectId: project, environment, segmentId: segment!.id, body: draft })}
              disabled={propose.isPending}
            >
              Propose in a change request for {environment} of {project}
            </button>
          ))}
        </div>
      )}
      <ErrorMessage error={propose.error} />
      {proposed && (
        <p className="notice" role="status">
          Added to change request{' '}
          <Link to={`/projects/${encodeURIComponent(proposed.project)}/change-requests/${proposed.id}`}>#{proposed.id}</Link>. Send it to
          review there.
        </p>
      )}
      <div className="row">
        <button className="primary" type="submit" disabled={save.isPending}>
          {segment ? 'Save segment' : 'Create segment'}
        </button>
        {segment && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

export function AdminSegments() {
  const segments = useQuery(queries.segments());
  const [editing, setEditing] = useState<number | null>(null);
  const [formKey, setFormKey] = useState(0);
  const remove = useAction(actions.deleteSegment);
  return (
    <div>
      <h1>Segments</h1>
      <p className="muted">Named sets of constraints that strategies of any flag can reuse.</p>
      <Loaded query={segments} what="segments">
        {(data) => (
          <div className="stack">
            {data.segments.length === 0 && <p className="muted">No segments yet.</p>}
            {data.segments.map((segment) =>
              editing === segment.id ? (
                <SegmentForm key={segment.id} segment={segment} onDone={() => setEditing(null)} />
              ) : (
                <div key={segment.id} className="card spread">
                  <div>
                    <strong>{segment.name}</strong>{' '}
                    <span className="muted small">
                      #{segment.id} · {formatDate(segment.createdAt)}
                    </span>
                    {segment.description && <div className="small">{segment.description}</div>}
                    <div className="small muted">
                      {segment.constraints.length === 0
                        ? 'No constraints'
                        : segment.constraints
                            .map(
                              (constraint) =>
                                `${constraint.contextName} ${constraint.operator} ${(constraint.values ?? [constraint.value]).join(', ')}`,
                            )
                            .join(' AND ')}
                    </div>
                  </div>
                  <div className="row">
                    <button type="button" onClick={() => setEditing(segment.id)}>
                      Edit
                    </button>
                    <ConfirmButton question={`Delete the segment ${segment.name}?`} onConfirm={() => remove.mutate(segment.id)}>
                      Delete
                    </ConfirmButton>
                  </div>
                </div>
              ),
            )}
          </div>
        )}
      </Loaded>
      <ErrorMessage error={remove.error} />
      <h2>New segment</h2>
      <SegmentForm key={formKey} onDone={() => setFormKey(formKey + 1)} />
    </div>
  );
}
