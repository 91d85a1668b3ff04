import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { actions, queries } from '../api/queries';
import { ConfirmButton, ErrorMessage, Field, Loaded, Table, useAction } from '../components/ui';

interface MilestoneDraft {
  name: string;
  rollout: string;
  minutes: string;
}

const STARTING_STEPS: MilestoneDraft[] = [
  { name: 'Internal', rollout: '5', minutes: '60' },
  { name: 'Half', rollout: '50', minutes: '120' },
  { name: 'Everyone', rollout: '100', minutes: '' },
];

/** Release templates: rollouts in steps, each a percentage of users, that flags' release plans are made from. */
export function AdminReleaseTemplates() {
  const templates = useQuery(queries.releaseTemplates());
  const [steps, setSteps] = useState<MilestoneDraft[]>(STARTING_STEPS);
  const create = useAction(actions.createReleaseTemplate, () => setSteps(STARTING_STEPS));
  const archive = useAction(actions.archiveReleaseTemplate);
  const change = (index: number, field: keyof MilestoneDraft, value: string) =>
    setSteps((current) => current.map((step, at) => (at === index ? { ...step, [field]: value } : step)));
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const name = String(form.get('name')).trim();
    create.mutate(
      {
        name,
        description: String(form.get('description')).trim() || null,
        milestones: steps.map((step) => ({
          name: step.name.trim(),
          strategies: [{ name: 'flexibleRollout', parameters: { rollout: step.rollout, stickiness: 'default', groupId: name } }],
          transitionCondition: step.minutes ? { intervalMinutes: Number(step.minutes) } : null,
        })),
      },
      { onSuccess: () => (event.target as HTMLFormElement).reset() },
    );
  };
  return (
    <div>
      <h1>Release templates</h1>
      <p className="muted">
        A template is a rollout in steps. Add it to a flag in an environment as a release plan, start its first milestone, and it moves on
        by itself when a milestone has a time; a safeguard on an impact metric pauses it.
      </p>
      <Loaded query={templates} what="release templates">
        {(list) => (
          <Table label="Release templates" columns={['Template', 'Milestones', '']}>
            {list.length === 0 && (
              <tr>
                <td colSpan={3} className="muted">
                  No templates yet.
                </td>
              </tr>
            )}
            {list.map((template) => (
              <tr key={template.id}>
                <td>
                  <strong>{template.name}</strong>
                  {template.description && <div className="muted small">{template.description}</div>}
                </td>
                <td className="small">
                  {template.milestones
                    .map((milestone) => {
                      const rollout = (milestone.strategies[0]?.parameters as Record<string, string> | undefined)?.rollout;
                      const after = milestone.transitionCondition ? ` → ${milestone.transitionCondition.intervalMinutes} min` : '';
                      return `${milestone.name}${rollout ? ` ${rollout}%` : ''}${after}`;
                    })
                    .join(' · ')}
                </td>
                <td>
                  <ConfirmButton
                    question={`Archive the template ${template.name}? Plans made from it keep their milestones.`}
                    onConfirm={() => archive.mutate(template.id)}
                  >
                    Archive
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <ErrorMessage error={archive.error} />
      <h2>New template</h2>
      <form className="card stack" onSubmit={submit} aria-label="New release template">
        <div className="grid2">
          <Field label="Name" error={create.error} field="name">
            <input name="name" required />
          </Field>
          <Field label="Description" error={create.error} field="description">
            <input name="description" />
          </Field>
        </div>
        {steps.map((step, index) => (
          <div key={index} className="row fields" data-testid="milestone-draft">
            <Field label={`Milestone ${index + 1}`} error={create.error} field={`milestones/${index}/name`}>
              <input value={step.name} required onChange={(event) => change(index, 'name', event.target.value)} />
            </Field>
            <Field label="Users (%)" error={create.error} field={`milestones/${index}/strategies/0/parameters/rollout`}>
              <input
                type="number"
                min={0}
                max={100}
                required
                value={step.rollout}
                onChange={(event) => change(index, 'rollout', event.target.value)}
              />
            </Field>
            <Field label="Move on after (min)" error={create.error} field={`milestones/${index}/transitionCondition/intervalMinutes`}>
              <input
                type="number"
                min={1}
                value={step.minutes}
                placeholder="by hand"
                onChange={(event) => change(index, 'minutes', event.target.value)}
              />
            </Field>
            <button
              type="button"
              aria-label={`Remove milestone ${index + 1}`}
              disabled={steps.length === 1}
              onClick={() => setSteps(steps.filter((_, at) => at !== index))}
            >
              ×
            </button>
          </div>
        ))}
        <div className="row">
          <button type="button" onClick={() => setSteps([...steps, { name: `Step ${steps.length + 1}`, rollout: '100', minutes: '' }])}>
            Add milestone
          </button>
          <button className="primary" type="submit" disabled={create.isPending}>
            Create template
          </button>
        </div>
        <ErrorMessage error={create.error} />
      </form>
    </div>
  );
}
