import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, NameCell, EditorForm, formText, NameAndDescription } from '../../components/admin';
import { Field, useAction } from '../../components/ui';

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

function NewTemplateForm({ onDone }: { onDone: () => void }) {
  const [steps, setSteps] = useState<MilestoneDraft[]>(STARTING_STEPS);
  const create = useAction(actions.createReleaseTemplate, onDone);
  const change = (index: number, field: keyof MilestoneDraft, value: string) =>
    setSteps((current) => current.map((step, at) => (at === index ? { ...step, [field]: value } : step)));
  const submit = (form: FormData) => {
    const name = formText(form, 'name');
    create.mutate({
      name,
      description: formText(form, 'description') || null,
      milestones: steps.map((step) => ({
        name: step.name.trim(),
        strategies: [{ name: 'flexibleRollout', parameters: { rollout: step.rollout, stickiness: 'default', groupId: name } }],
        transitionCondition: step.minutes ? { intervalMinutes: Number(step.minutes) } : null,
      })),
    });
  };
  return (
    <EditorForm label="New release template" submitLabel="Create template" mutation={create} onSubmit={submit}>
      <div className="grid2">
        <NameAndDescription error={create.error} />
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
      <div>
        <button type="button" onClick={() => setSteps([...steps, { name: `Step ${steps.length + 1}`, rollout: '100', minutes: '' }])}>
          Add milestone
        </button>
      </div>
    </EditorForm>
  );
}

const describeMilestones = (template: Schemas['releasePlanTemplateSchema']) =>
  template.milestones
    .map((milestone) => {
      const rollout = (milestone.strategies[0]?.parameters as Record<string, string> | undefined)?.rollout;
      const after = milestone.transitionCondition ? ` → ${milestone.transitionCondition.intervalMinutes} min` : '';
      return `${milestone.name}${rollout ? ` ${rollout}%` : ''}${after}`;
    })
    .join(' · ');

/** Release templates: rollouts in steps, each a percentage of users, that flags' release plans are made from. */
export function AdminReleaseTemplates() {
  const templates = useQuery(queries.releaseTemplates());
  return (
    <AdminList
      title="Release templates"
      intro="A template is a rollout in steps. Add it to a flag in an environment as a release plan, start its first milestone, and it moves on by itself when a milestone has a time; a safeguard on an impact metric pauses it."
      query={templates}
      items={(list) => list}
      columns={['Template', 'Milestones']}
      empty="No templates yet."
      cells={(template) => (
        <>
          <NameCell name={template.name} description={template.description} />
          <td className="small">{describeMilestones(template)}</td>
        </>
      )}
      remove={{ action: actions.archiveReleaseTemplate, label: 'Archive', consequence: 'Plans made from it keep their milestones.' }}
      noun="template"
      create={(done) => <NewTemplateForm onDone={done} />}
    />
  );
}
