import { useQuery } from '@tanstack/react-query';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, formText, ItemForm, NameCell } from '../../components/admin';
import { Field, useAction } from '../../components/ui';

type ContextField = Schemas['contextFieldSchema'];

/** Creates a context field, or edits one (its name stays: strategies refer to it). */
function ContextFieldForm({ field, onDone }: { field?: ContextField; onDone: () => void }) {
  const save = useAction(actions.saveContextField, onDone);
  const submit = (form: FormData) => {
    const legalValues = String(form.get('legalValues'))
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean)
      .map((value) => ({ value }));
    save.mutate({
      ...(field ? { existing: field.name } : {}),
      body: {
        name: field?.name ?? formText(form, 'name'),
        description: String(form.get('description')),
        stickiness: form.get('stickiness') === 'on',
        legalValues,
      },
    });
  };
  return (
    <ItemForm noun="context field" editing={field?.name} onDone={onDone} mutation={save} onSubmit={submit}>
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
    </ItemForm>
  );
}

export function AdminContextFields() {
  const fields = useQuery(queries.contextFields());
  return (
    <AdminList
      title="Context fields"
      intro="The fields of the context SDKs pass when they evaluate flags; constraints test them."
      query={fields}
      items={(data) => data}
      columns={['Name', 'Description', 'Legal values', 'Stickiness']}
      cells={(field) => (
        <>
          <NameCell name={field.name} />
          <td>{field.description}</td>
          <td className="small">{field.legalValues.map((legal) => legal.value).join(', ')}</td>
          <td>{field.stickiness ? 'yes' : 'no'}</td>
        </>
      )}
      edit={(field, done) => <ContextFieldForm field={field} onDone={done} />}
      keyOf={(field) => field.name}
      remove={{ action: actions.deleteContextField }}
      noun="context field"
      create={(done) => <ContextFieldForm onDone={done} />}
    />
  );
}
