import { useNavigate } from 'react-router';
import { actions, type FlagPath } from '../../api/queries';
import { EditorForm, formText } from '../../components/admin';
import { Field, useAction } from '../../components/ui';

/** Names the copy of a flag and makes it, then closes and opens the copy's page. */
export function CloneForm({ path, onClose }: { path: FlagPath; onClose: () => void }) {
  const navigate = useNavigate();
  const clone = useAction(actions.cloneFlag, (copy) => {
    onClose();
    navigate(`/projects/${encodeURIComponent(copy.project)}/flags/${encodeURIComponent(copy.name)}`);
  });
  return (
    <EditorForm
      label={`Clone ${path.featureName}`}
      submitLabel="Clone"
      mutation={clone}
      className="card row fields"
      onCancel={onClose}
      onSubmit={(form) => clone.mutate({ path, name: formText(form, 'name') })}
    >
      <Field
        label="Name of the copy"
        error={clone.error}
        field="name"
        hint="The copy gets the type, description, variants, strategies and parents, and starts off in every environment."
      >
        <input name="name" required defaultValue={`${path.featureName}-copy`} />
      </Field>
    </EditorForm>
  );
}
