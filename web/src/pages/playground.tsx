import { useQuery } from '@tanstack/react-query';
import { Fragment, useState } from 'react';
import { Link } from 'react-router';
import { actions, queries, type Schemas } from '../api/queries';
import { ErrorMessage, Field, Table, useAction, onFormSubmit } from '../components/ui';

type Answer = Schemas['playgroundResponseSchema'];
type Evaluated = Answer['features'][number];

const STANDARD_FIELDS = ['userId', 'sessionId', 'remoteAddress', 'appName'];
const SHOWN_RESULTS = 200;

function outcome(feature: Evaluated | undefined): string {
  if (!feature) return '—';
  if (!feature.isEnabled) return feature.isEnabledInCurrentEnvironment ? 'Off' : 'Off (disabled here)';
  return feature.variant.enabled ? `On · ${feature.variant.name}` : 'On';
}

/** Why a flag came out as it did in one environment: each strategy, its constraints and segments as evaluated. */
function Explanation({ feature }: { feature: Evaluated }) {
  if (!feature.isEnabledInCurrentEnvironment) return <p className="small">The flag is turned off in this environment.</p>;
  if (feature.hasUnsatisfiedDependency) return <p className="small">A flag it depends on is not as it requires.</p>;
  if (feature.strategies.data.length === 0) return <p className="small">No strategies: on for everyone.</p>;
  return (
    <ul className="small stack" data-testid="explanation">
      {feature.strategies.data.map((strategy) => (
        <li key={strategy.id}>
          <strong>{strategy.title || strategy.name}</strong> {strategy.disabled ? '(disabled) ' : ''}→{' '}
          {strategy.result.enabled === 'unknown'
            ? 'unknown (a custom strategy the server cannot run)'
            : strategy.result.enabled
              ? 'true'
              : 'false'}
          {Object.keys(strategy.parameters).length > 0 && (
            <span className="muted">
              {' '}
              (
              {Object.entries(strategy.parameters)
                .map(([name, value]) => `${name}: ${value}`)
                .join(', ')}
              )
            </span>
          )}
          <ul>
            {strategy.constraints.map((constraint, index) => (
              <li key={index}>
                {constraint.contextName} {constraint.inverted ? 'NOT ' : ''}
                {constraint.operator} {(constraint.values ?? [constraint.value]).filter(Boolean).join(', ')} →{' '}
                {constraint.result ? 'true' : 'false'}
              </li>
            ))}
            {strategy.segments.map((segment) => (
              <li key={segment.id}>
                segment {segment.name} → {segment.result ? 'true' : 'false'}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ul>
  );
}

/**
 * The playground: a context (the standard fields and the defined ones), the environments and projects, and each
 * flag's result there with the reason, as `POST /api/admin/playground` explains it on the SDK's own engine.
 */
export function Playground() {
  const environments = useQuery(queries.environments());
  const projects = useQuery(queries.projects());
  const contextFields = useQuery(queries.contextFields());
  const run = useAction(actions.playground);
  const [results, setResults] = useState<Array<{ environment: string; answer: Answer }>>([]);
  const [open, setOpen] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const custom = (contextFields.data ?? [])
    .map((field) => field.name)
    .filter((name) => !STANDARD_FIELDS.includes(name) && name !== 'environment' && name !== 'currentTime');
  const submit = onFormSubmit(async (form) => {
    const chosen = form.getAll('environment').map(String);
    const project = String(form.get('project'));
    const context: Record<string, string> = {};
    for (const name of [...STANDARD_FIELDS, ...custom]) {
      const value = String(form.get(`context.${name}`) ?? '').trim();
      if (value) context[name] = value;
    }
    const answers = await Promise.all(
      chosen.map(async (environment) => ({
        environment,
        answer: await run.mutateAsync({ environment, projects: project === '*' ? '*' : [project], context: context as never }),
      })),
    ).catch(() => null);
    if (answers) setResults(answers);
  });
  const matching = [...new Set(results.flatMap((result) => result.answer.features.map((feature) => feature.name)))]
    .filter((name) => name.includes(filter.trim()))
    .sort();
  // Thousands of flags stay quick: the table shows the first ones, the filter finds the others.
  const names = matching.slice(0, SHOWN_RESULTS);
  const byName = (environment: string, name: string) =>
    results.find((result) => result.environment === environment)?.answer.features.find((feature) => feature.name === name);
  return (
    <div>
      <h1>Playground</h1>
      <p className="muted">What SDKs would answer for a context, evaluated by the same engine, with the reason for each flag.</p>
      <form className="card stack" onSubmit={submit} aria-label="Playground">
        <fieldset className="plain row">
          <legend className="small">Environments</legend>
          {(environments.data?.environments ?? []).map((environment, index) => (
            <label key={environment.name} className="check">
              <input type="checkbox" name="environment" value={environment.name} defaultChecked={index < 2} /> {environment.name}
            </label>
          ))}
        </fieldset>
        <Field label="Project" error={run.error} field="projects">
          <select name="project" defaultValue="*">
            <option value="*">All projects</option>
            {(projects.data?.projects ?? []).map((project) => (
              <option key={project.id} value={project.id}>
                {project.name}
              </option>
            ))}
          </select>
        </Field>
        <div className="grid2">
          {[...STANDARD_FIELDS, ...custom].map((name) => (
            <Field key={name} label={name} error={run.error} field={`context/${name}`}>
              <input name={`context.${name}`} />
            </Field>
          ))}
        </div>
        <ErrorMessage error={run.error} />
        <div>
          <button className="primary" type="submit" disabled={run.isPending}>
            Evaluate
          </button>
        </div>
      </form>
      {results.length > 0 && (
        <>
          <h2>Results</h2>
          <label className="field" style={{ maxWidth: '20rem' }}>
            Filter flags
            <input type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
          </label>
          <Table label="Playground results" columns={['Flag', ...results.map((result) => result.environment), '']}>
            {names.map((name) => {
              const first = results.map((result) => byName(result.environment, name)).find(Boolean)!;
              return (
                <Fragment key={name}>
                  <tr data-testid={`result-${name}`}>
                    <td>
                      <Link to={`/projects/${encodeURIComponent(first.projectId)}/flags/${encodeURIComponent(name)}`}>{name}</Link>
                    </td>
                    {results.map((result) => {
                      const feature = byName(result.environment, name);
                      return (
                        <td key={result.environment} className={feature?.isEnabled ? 'on' : 'off'}>
                          {outcome(feature)}
                        </td>
                      );
                    })}
                    <td>
                      <button type="button" aria-expanded={open === name} onClick={() => setOpen(open === name ? null : name)}>
                        Why
                      </button>
                    </td>
                  </tr>
                  {open === name && (
                    <tr>
                      <td colSpan={results.length + 2}>
                        <div className="grid2">
                          {results.map((result) => {
                            const feature = byName(result.environment, name);
                            return (
                              <section key={result.environment} aria-label={`Why ${name} in ${result.environment}`}>
                                <h4 style={{ margin: 0 }}>{result.environment}</h4>
                                {feature ? <Explanation feature={feature} /> : <p className="small">Not in this environment.</p>}
                              </section>
                            );
                          })}
                        </div>
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </Table>
          {matching.length > names.length && (
            <p className="muted small">
              Showing {names.length} of {matching.length} flags: filter to find the others.
            </p>
          )}
        </>
      )}
    </div>
  );
}
