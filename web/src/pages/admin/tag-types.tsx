import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, EditorForm, formText, NameAndDescription, NameCell } from '../../components/admin';
import { ErrorMessage, useAction, onFormSubmit } from '../../components/ui';

type TagType = Schemas['tagTypeSchema'];

/** A tag type's description, edited in its own cell: the name stays, flags' tags refer to it. */
function DescriptionCell({ type, editing, onDone }: { type: TagType; editing: boolean; onDone: () => void }) {
  const update = useAction(actions.updateTagType, onDone);
  if (!editing) return <td>{type.description}</td>;
  return (
    <td>
      <form
        className="row"
        onSubmit={onFormSubmit((form) => {
          update.mutate({ name: type.name, description: formText(form, 'description') });
        })}
      >
        <input name="description" aria-label={`Description of ${type.name}`} defaultValue={type.description ?? ''} />
        <button type="submit" disabled={update.isPending}>
          Save
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </form>
      <ErrorMessage error={update.error} />
    </td>
  );
}

function NewTagTypeForm({ onDone }: { onDone: () => void }) {
  const create = useAction(actions.createTagType, onDone);
  return (
    <EditorForm
      label="New tag type"
      submitLabel="Create tag type"
      mutation={create}
      className="card row fields"
      onSubmit={(form) => create.mutate({ name: formText(form, 'name'), description: String(form.get('description')) })}
    >
      <NameAndDescription error={create.error} />
    </EditorForm>
  );
}

export function AdminTagTypes() {
  const tagTypes = useQuery(queries.tagTypes());
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <AdminList
      title="Tag types"
      intro="The kinds of tag a flag can carry (a tag is type:value); the flag list and SDKs filter by them."
      query={tagTypes}
      items={(data) => data.tagTypes}
      columns={['Name', 'Description']}
      cells={(type) => (
        <>
          <NameCell name={type.name} />
          <DescriptionCell type={type} editing={editing === type.name} onDone={() => setEditing(null)} />
        </>
      )}
      actions={(type) => (
        <button type="button" onClick={() => setEditing(type.name)}>
          Edit
        </button>
      )}
      remove={{ action: actions.deleteTagType }}
      noun="tag type"
      create={(done) => <NewTagTypeForm onDone={done} />}
    />
  );
}
