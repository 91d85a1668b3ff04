import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { actions, queries } from '../../api/queries';
import { useCan } from '../../components/layout';
import { Check, Field, FormSubmit, LoadedList, Table, UrlNameField, formatDate, useAction, onFormSubmit } from '../../components/ui';

const ROLES = ['goal', 'guardrail', 'secondary'] as const;

export function experimentLink(projectId: string, name: string) {
  return `/projects/${encodeURIComponent(projectId)}/experiments/${encodeURIComponent(name)}`;
}

/** A project's experiments: the list, and the forms to define a metric and draft an experiment. */
export function ProjectExperiments({ projectId, environments }: { projectId: string; environments: string[] }) {
  const list = useQuery(queries.experiments(projectId));
  const mayCreate = useCan('UPDATE_FEATURE', projectId);
  const mayDefineMetrics = useCan('CREATE_EXPERIMENT_METRIC');
  return (
    <div className="stack">
      <LoadedList query={list} what="experiments" items={(data) => data.experiments} empty="No experiments yet.">
        {(experiments) => (
          <Table label="Experiments" columns={['Experiment', 'Flag', 'Environment', 'Status', 'Started']}>
            {experiments.map((experiment) => (
              <tr key={experiment.name}>
                <td>
                  <Link to={experimentLink(projectId, experiment.name)}>{experiment.name}</Link>
                </td>
                <td>{experiment.featureName}</td>
                <td>{experiment.environment}</td>
                <td>
                  <span className={`chip status-${experiment.status}`}>{experiment.status}</span>
                </td>
                <td>{formatDate(experiment.startedAt)}</td>
              </tr>
            ))}
          </Table>
        )}
      </LoadedList>
      {mayCreate && environments.length > 0 && <NewExperimentForm projectId={projectId} environments={environments} />}
      {mayDefineMetrics && environments.length > 0 && <NewMetricForm environments={environments} />}
    </div>
  );
}

function NewExperimentForm({ projectId, environments }: { projectId: string; environments: string[] }) {
  const navigate = useNavigate();
  const [environment, setEnvironment] = useState(environments[0]!);
  const [featureName, setFeatureName] = useState('');
  const [sequential, setSequential] = useState(false);
  const [cuped, setCuped] = useState(false);
  const [roles, setRoles] = useState<Record<string, (typeof ROLES)[number] | ''>>({});
  const flag = useQuery({ ...queries.flag({ projectId, featureName }), enabled: featureName !== '' });
  const metrics = useQuery(queries.experimentMetrics(environment));
  const create = useAction(actions.createExperiment, (experiment) => navigate(experimentLink(projectId, experiment.name)));
  const strategies = (flag.data?.environments.find((entry) => entry.name === environment)?.strategies ?? []).filter(
    (strategy) => (strategy.variants?.length ?? 0) >= 2,
  );
  const submit = onFormSubmit((form) => {
    create.mutate({
      projectId,
      name: String(form.get('name')).trim(),
      hypothesis: String(form.get('hypothesis')).trim() || null,
      featureName,
      environment,
      strategyId: String(form.get('strategyId')),
      engine: String(form.get('engine')) as 'bayesian',
      sequential: sequential ? { tuning: Number(form.get('tuning')) } : null,
      cuped: cuped ? { lookbackDays: Number(form.get('lookbackDays')) } : null,
      correction: String(form.get('correction')) as 'none',
      metrics: Object.entries(roles)
        .filter(([, role]) => role !== '')
        .map(([metric, role]) => ({ metric, role: role as (typeof ROLES)[number] })),
    });
  });
  return (
    <form className="card stack" onSubmit={submit} aria-label="New experiment">
      <h3 style={{ margin: 0 }}>New experiment</h3>
      <div className="grid2">
        <UrlNameField error={create.error} />
        <Field label="Flag" error={create.error} field="featureName">
          <input name="featureName" required value={featureName} onChange={(event) => setFeatureName(event.target.value.trim())} />
        </Field>
        <Field label="Environment" error={create.error} field="environment">
          <select name="environment" value={environment} onChange={(event) => setEnvironment(event.target.value)}>
            {environments.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </Field>
        <Field
          label="Strategy whose variants are compared"
          error={create.error}
          field="strategyId"
          hint={featureName && strategies.length === 0 ? 'The flag has no strategy with two or more variants here.' : undefined}
        >
          <select name="strategyId" required>
            {strategies.map((strategy) => (
              <option key={strategy.id} value={strategy.id}>
                {strategy.title || strategy.name}: {strategy.variants?.map((variant) => variant.name).join(' vs ')}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Engine" error={create.error} field="engine">
          <select name="engine" defaultValue="bayesian">
            <option value="bayesian">Bayesian (chance to win)</option>
            <option value="frequentist">Frequentist (p-values)</option>
          </select>
        </Field>
        <Field label="Hypothesis" error={create.error} field="hypothesis">
          <input name="hypothesis" placeholder="A bigger button sells more" />
        </Field>
      </div>
      <fieldset className="stack">
        <legend>Analysis</legend>
        <Check checked={sequential} onChange={setSequential}>
          Sequential testing: the results hold however often they are read
        </Check>
        {sequential && (
          <Field
            label="Units the experiment expects"
            error={create.error}
            field="sequential"
            hint="Tunes the intervals to be narrowest there."
          >
            <input name="tuning" type="number" required min={100} defaultValue={5000} style={{ maxWidth: 160 }} />
          </Field>
        )}
        <Check checked={cuped} onChange={setCuped}>
          CUPED: each unit's metric before its exposure narrows the interval
        </Check>
        {cuped && (
          <Field label="Days read before the exposure" error={create.error} field="cuped">
            <input name="lookbackDays" type="number" required min={1} max={60} defaultValue={14} style={{ maxWidth: 160 }} />
          </Field>
        )}
        <Field label="Correction for several metrics" error={create.error} field="correction">
          <select name="correction" defaultValue="none" style={{ maxWidth: 420 }}>
            <option value="none">None</option>
            <option value="holm">Holm (family-wise error)</option>
            <option value="benjamini-hochberg">Benjamini–Hochberg (false discovery rate)</option>
          </select>
        </Field>
      </fieldset>
      <fieldset>
        <legend>Metrics of {environment}</legend>
        <LoadedList
          query={metrics}
          what="metrics"
          items={(data) => data.metrics}
          empty={`No metrics in ${environment} yet: define one below.`}
        >
          {(list) => (
            <div className="stack">
              {list.map((metric) => (
                <label key={metric.name} className="row small">
                  <select
                    aria-label={`Role of ${metric.name}`}
                    value={roles[metric.name] ?? ''}
                    onChange={(event) => setRoles({ ...roles, [metric.name]: event.target.value as (typeof ROLES)[number] })}
                  >
                    <option value="">not measured</option>
                    {ROLES.map((role) => (
                      <option key={role}>{role}</option>
                    ))}
                  </select>
                  <strong>{metric.name}</strong>{' '}
                  <span className="muted">
                    {metric.kind} of “{metric.event}”
                  </span>
                </label>
              ))}
            </div>
          )}
        </LoadedList>
      </fieldset>
      <FormSubmit action={create} label="Draft experiment" primary />
    </form>
  );
}

function NewMetricForm({ environments }: { environments: string[] }) {
  const [kind, setKind] = useState<'proportion' | 'mean' | 'ratio'>('proportion');
  const create = useAction(actions.createExperimentMetric);
  const submit = onFormSubmit((form) => {
    const value = (name: string) => String(form.get(name) ?? '').trim();
    create.mutate({
      environment: value('environment'),
      name: value('name'),
      kind,
      event: value('event'),
      ...(kind === 'proportion' ? {} : { aggregation: value('aggregation') as 'sum' }),
      ...(kind === 'ratio' ? { denominatorEvent: value('denominatorEvent') } : {}),
    });
  });
  return (
    <form className="card stack" onSubmit={submit} aria-label="New metric">
      <h3 style={{ margin: 0 }}>New metric</h3>
      <p className="muted small">A metric turns an event SDKs track (OpenFeature's track()) into one value per unit.</p>
      <div className="grid2">
        <UrlNameField label="Metric name" error={create.error} />
        <Field label="Environment" error={create.error} field="environment">
          <select name="environment">
            {environments.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </Field>
        <Field label="Kind" error={create.error} field="kind">
          <select name="kind" value={kind} onChange={(event) => setKind(event.target.value as typeof kind)}>
            <option value="proportion">proportion: did the unit do it</option>
            <option value="mean">mean: how much per unit</option>
            <option value="ratio">ratio: one event over another</option>
          </select>
        </Field>
        <Field label="Event SDKs track" error={create.error} field="event">
          <input name="event" required />
        </Field>
        {kind !== 'proportion' && (
          <Field label="Per unit" error={create.error} field="aggregation">
            <select name="aggregation">
              <option value="sum">sum of the values</option>
              <option value="count">number of events</option>
            </select>
          </Field>
        )}
        {kind === 'ratio' && (
          <Field label="Divided by the event" error={create.error} field="denominatorEvent">
            <input name="denominatorEvent" required />
          </Field>
        )}
      </div>
      <FormSubmit action={create} label="Define metric" success={create.isSuccess && `Metric ${create.data?.name} defined.`} />
    </form>
  );
}
