import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { actions, queries, type Schemas } from '../../api/queries';
import { useCan } from '../../components/layout';
import { TimeChart } from '../../components/time-chart';
import { ConfirmButton, ErrorMessage, Field, formatDate, useAction, onFormSubmit } from '../../components/ui';

type Plan = Schemas['releasePlanSchema'];
type Milestone = Plan['milestones'][number];

const RANGES = [
  { label: 'Hour', hours: 1 },
  { label: 'Day', hours: 24 },
  { label: 'Week', hours: 168 },
  { label: 'Month', hours: 720 },
];
const HOUR_S = 3600;
/** Colour variables for variant lines, in turn. */
const VARIANT_COLORS = ['--accent', '--warn', '--focus', '--muted'];
/** How far back the safeguard's metric is drawn. */
const IMPACT_HOURS = 6;

/** The flag's evaluations in the environment per hour, yes and no, and the applications that made them. */
function UsageChart({ featureName, environment }: { featureName: string; environment: string }) {
  const [hours, setHours] = useState(24);
  const usage = useQuery(queries.flagUsage(featureName, hours));
  const { times, series, applications } = useMemo(() => {
    const rows = (usage.data?.lastHourUsage ?? []).filter((row) => row.environment === environment);
    const lastHour = Math.floor(Date.now() / 1000 / HOUR_S) * HOUR_S;
    const times = Array.from({ length: hours }, (_, index) => lastHour - (hours - 1 - index) * HOUR_S);
    const yes = times.map(() => 0);
    const no = times.map(() => 0);
    const variants = new Map<string, number[]>();
    for (const row of rows) {
      const index = times.indexOf(Math.floor(Date.parse(row.timestamp) / 1000));
      if (index < 0) continue;
      yes[index]! += row.yes;
      no[index]! += row.no;
      for (const [variant, count] of Object.entries(row.variants)) {
        const values = variants.get(variant) ?? times.map(() => 0);
        values[index]! += count;
        variants.set(variant, values);
      }
    }
    return {
      times,
      series: [
        { label: 'Yes', colorVariable: '--ok', values: yes },
        { label: 'No', colorVariable: '--danger', values: no },
        ...[...variants.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([variant, values], index) => ({
            label: `Variant ${variant}`,
            colorVariable: VARIANT_COLORS[index % VARIANT_COLORS.length]!,
            values,
          })),
      ],
      applications: [...new Set(rows.map((row) => row.appName))].sort(),
    };
  }, [usage.data, environment, hours]);
  return (
    <section className="stack" aria-label={`Usage in ${environment}`}>
      <div className="spread">
        <h4 style={{ margin: 0 }}>Evaluations</h4>
        <fieldset className="row plain" aria-label="Time range">
          {RANGES.map((range) => (
            <button key={range.hours} type="button" aria-pressed={hours === range.hours} onClick={() => setHours(range.hours)}>
              {range.label}
            </button>
          ))}
        </fieldset>
      </div>
      <TimeChart
        label={`Evaluations of ${featureName} in ${environment}`}
        times={times}
        series={series}
        counts
        empty="No evaluations were reported in this time."
      />
      <p className="muted small" data-testid="usage-applications">
        {applications.length === 0 ? 'No application evaluated it in this time.' : `Evaluated by ${applications.join(', ')}`}
      </p>
    </section>
  );
}

function strategySummary(strategy: Record<string, unknown>): string {
  const parameters = (strategy.parameters ?? {}) as Record<string, string>;
  if (parameters.rollout !== undefined) return `${String(strategy.name)} ${parameters.rollout}%`;
  if (parameters.userIds) return `${String(strategy.name)}: ${parameters.userIds}`;
  return String(strategy.name);
}

function milestoneState(plan: Plan, milestone: Milestone): 'active' | 'done' | 'upcoming' {
  if (plan.activeMilestoneId === milestone.id) return 'active';
  const active = plan.milestones.find((candidate) => candidate.id === plan.activeMilestoneId);
  return active && milestone.sortOrder < active.sortOrder ? 'done' : 'upcoming';
}

/** The safeguard's impact metric per minute, next to the plan it guards. */
function ImpactChart({ metricName, environment }: { metricName: string; environment: string }) {
  const metric = useQuery(queries.impactMetric(metricName, environment, IMPACT_HOURS));
  const { times, series, span } = useMemo(() => {
    const points = metric.data?.points ?? [];
    const now = Math.floor(Date.now() / 1000);
    return {
      times: points.map((point) => Math.floor(Date.parse(point.minute) / 1000)),
      series: [{ label: metricName, colorVariable: '--warn', values: points.map((point) => point.value) }],
      span: [now - IMPACT_HOURS * HOUR_S, now] as [number, number],
    };
  }, [metric.data, metricName]);
  return (
    <TimeChart
      label={`${metricName} in ${environment}`}
      times={times}
      series={series}
      height={140}
      span={span}
      empty={`No ${metricName} reported in the last ${IMPACT_HOURS} hours.`}
    />
  );
}

function SafeguardForm({ plan, path }: { plan: Plan; path: { projectId: string; featureName: string; environment: string } }) {
  const set = useAction(actions.setSafeguard);
  const current = plan.safeguards[0];
  const submit = onFormSubmit((form) => {
    set.mutate({
      ...path,
      planId: plan.id,
      body: {
        impactMetric: {
          metricName: String(form.get('metricName')).trim(),
          aggregationMode: String(form.get('aggregationMode')) as 'count',
          windowMinutes: Number(form.get('windowMinutes')),
        },
        triggerCondition: { operator: String(form.get('operator')) as '>', threshold: Number(form.get('threshold')) },
        action: { type: form.get('rollback') ? 'pauseAndRollback' : 'pause' },
      },
    });
  });
  return (
    <form className="row fields" onSubmit={submit} aria-label={`Safeguard in ${path.environment}`}>
      <Field label="Impact metric" error={set.error} field="metricName">
        <input name="metricName" required defaultValue={current?.impactMetric.metricName} placeholder="checkout_errors" />
      </Field>
      <Field label="Measure" error={set.error} field="aggregationMode">
        <select name="aggregationMode" defaultValue={current?.impactMetric.aggregationMode ?? 'count'}>
          <option value="count">count</option>
          <option value="rps">per second</option>
          <option value="avg">average</option>
          <option value="sum">sum</option>
        </select>
      </Field>
      <Field label="Over minutes" error={set.error} field="windowMinutes">
        <input name="windowMinutes" type="number" min={1} max={1440} required defaultValue={current?.impactMetric.windowMinutes ?? 5} />
      </Field>
      <Field label="Trips when" error={set.error} field="operator">
        <select name="operator" defaultValue={current?.triggerCondition.operator ?? '>'}>
          <option value=">">above</option>
          <option value="<">below</option>
        </select>
      </Field>
      <Field label="Threshold" error={set.error} field="threshold">
        <input name="threshold" type="number" step="any" required defaultValue={current?.triggerCondition.threshold ?? 10} />
      </Field>
      <label className="check">
        <input type="checkbox" name="rollback" defaultChecked={current ? current.action.type === 'pauseAndRollback' : true} /> Roll back a
        milestone
      </label>
      <button type="submit" disabled={set.isPending}>
        {current ? 'Save safeguard' : 'Add safeguard'}
      </button>
      <ErrorMessage error={set.error} />
    </form>
  );
}

function PlanView({
  plan,
  path,
  canChange,
}: {
  plan: Plan;
  path: { projectId: string; featureName: string; environment: string };
  canChange: boolean;
}) {
  const start = useAction(actions.startMilestone);
  const resume = useAction(actions.resumeReleasePlan);
  const remove = useAction(actions.removeReleasePlan);
  const safeguard = plan.safeguards[0];
  return (
    <div className="stack" data-testid={`release-plan-${path.environment}`}>
      <div className="spread">
        <strong>{plan.name}</strong>
        {canChange && (
          <ConfirmButton
            question={`Remove the release plan from ${path.environment}? Its strategies leave the flag.`}
            onConfirm={() => remove.mutate({ ...path, planId: plan.id })}
          >
            Remove plan
          </ConfirmButton>
        )}
      </div>
      {plan.pausedAt && (
        <p className="error box" role="alert">
          Paused {formatDate(plan.pausedAt)}: {plan.pausedReason}
          {canChange && (
            <>
              {' '}
              <button type="button" onClick={() => resume.mutate({ ...path, planId: plan.id })}>
                Resume
              </button>
            </>
          )}
        </p>
      )}
      <ol className="milestones">
        {plan.milestones.map((milestone) => {
          const state = milestoneState(plan, milestone);
          return (
            <li key={milestone.id} className={`milestone ${state}`} data-testid="milestone">
              <div className="spread">
                <span>
                  <strong>{milestone.name}</strong> <span className="badge">{state}</span>{' '}
                  <span className="muted small">
                    {milestone.strategies.map((strategy) => strategySummary(strategy)).join(', ') || 'no strategies'}
                  </span>
                </span>
                {canChange && state !== 'active' && (
                  <button type="button" onClick={() => start.mutate({ ...path, planId: plan.id, milestoneId: milestone.id })}>
                    Start {milestone.name}
                  </button>
                )}
              </div>
              <div className="muted small">
                {[
                  milestone.transitionCondition && `Moves on ${milestone.transitionCondition.intervalMinutes} min after it starts`,
                  state === 'active' && milestone.progressAt && `next step at ${formatDate(milestone.progressAt)}`,
                  state !== 'upcoming' && milestone.startedAt && `started ${formatDate(milestone.startedAt)}`,
                ]
                  .filter(Boolean)
                  .join(' · ')}
              </div>
            </li>
          );
        })}
      </ol>
      {safeguard && (
        <p className="small" data-testid="safeguard">
          Safeguard: <strong>{safeguard.impactMetric.metricName}</strong> {safeguard.impactMetric.aggregationMode} over{' '}
          {safeguard.impactMetric.windowMinutes} min {safeguard.triggerCondition.operator} {safeguard.triggerCondition.threshold}
          {safeguard.action.type === 'pauseAndRollback' ? ', pauses and rolls back' : ', pauses'}
          {safeguard.triggeredAt && ` · tripped ${formatDate(safeguard.triggeredAt)}`}
        </p>
      )}
      {safeguard && <ImpactChart metricName={safeguard.impactMetric.metricName} environment={path.environment} />}
      {canChange && <SafeguardForm plan={plan} path={path} />}
      <ErrorMessage error={start.error ?? resume.error ?? remove.error} />
    </div>
  );
}

function AddPlan({ path }: { path: { projectId: string; featureName: string; environment: string } }) {
  const templates = useQuery(queries.releaseTemplates());
  const add = useAction(actions.addReleasePlan);
  const available = templates.data ?? [];
  if (available.length === 0) return <p className="muted small">No release templates yet: make one under Admin → Release templates.</p>;
  return (
    <form
      className="row"
      aria-label={`Add a release plan in ${path.environment}`}
      onSubmit={onFormSubmit((form) => {
        add.mutate({ ...path, templateId: String(form.get('templateId')) });
      })}
    >
      <select name="templateId" aria-label="Release template">
        {available.map((template) => (
          <option key={template.id} value={template.id}>
            {template.name} ({template.milestones.length} milestones)
          </option>
        ))}
      </select>
      <button type="submit" disabled={add.isPending}>
        Add release plan
      </button>
      <ErrorMessage error={add.error} />
    </form>
  );
}

/** An environment's rollout: what SDKs evaluated over time, and the release plan with its safeguard's metric. */
export function ReleaseSection({ projectId, featureName, environment }: { projectId: string; featureName: string; environment: string }) {
  const path = { projectId, featureName, environment };
  const plans = useQuery(queries.releasePlans(path));
  const canChange = useCan('UPDATE_FEATURE_STRATEGY', projectId);
  const plan = plans.data?.[0];
  return (
    <section className="card stack" aria-label={`Rollout in ${environment}`}>
      <h3 style={{ margin: 0 }}>{environment}</h3>
      <UsageChart featureName={featureName} environment={environment} />
      <h4 style={{ margin: 0 }}>Release plan</h4>
      {plan ? (
        <PlanView plan={plan} path={path} canChange={canChange} />
      ) : canChange ? (
        <AddPlan path={path} />
      ) : (
        <p className="muted small">No release plan.</p>
      )}
      <ErrorMessage error={plans.error} />
    </section>
  );
}
