import { actions } from '../../api/queries';
import { ErrorMessage, Field, useAction, onFormSubmit } from '../../components/ui';
import type { Feature, FlagContext } from './flag-change';

export function SettingsCard({ feature, context }: { feature: Feature; context: FlagContext }) {
  const path = { projectId: context.projectId, featureName: context.flagName };
  const update = useAction(actions.updateFlag);
  const submit = onFormSubmit((form) => {
    update.mutate({
      path,
      body: {
        description: String(form.get('description')),
        type: String(form.get('type')) as 'release',
        impressionData: form.get('impressionData') === 'on',
        stale: feature.stale,
      },
    });
  });
  return (
    <form className="card stack" onSubmit={submit} aria-label="Flag settings">
      <div className="grid2">
        <Field label="Type" error={update.error} field="type">
          <select name="type" defaultValue={feature.type}>
            {['release', 'experiment', 'operational', 'kill-switch', 'permission', 'sunset'].map((type) => (
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
