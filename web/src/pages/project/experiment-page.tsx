import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { queries, actions, type Schemas } from '../../api/queries';
import { useCan } from '../../components/layout';
import { TimeChart } from '../../components/time-chart';
import { ConfirmButton, ErrorMessage, Loaded, Table, formatDate, useAction } from '../../components/ui';

type Results = Schemas['experimentResultsSchema'];
type MetricResult = Results['metrics'][number];
type Experiment = Schemas['experimentSchema'];

const CORRECTIONS: Record<string, string> = { holm: 'Holm', 'benjamini-hochberg': 'Benjamini–Hochberg' };
const VARIANT_COLORS = ['--accent', '--ok', '--warn', '--danger'];

const percent = (value: number, digits = 1) => `${(value * 100).toFixed(digits)}%`;
const signed = (value: number, relative: boolean) =>
  relative ? `${value >= 0 ? '+' : ''}${percent(value)}` : `${value >= 0 ? '+' : ''}${value.toPrecision(3)}`;

/** A probability as a person reads it: never a flat 100 % or 0 %, which no finite sample gives. */
const chance = (value: number) => (value > 0.999 ? '> 99.9%' : value < 0.001 ? '< 0.1%' : percent(value));

function shownValue(metric: MetricResult, value: number): string {
  return metric.kind === 'proportion' ? percent(value, 2) : value.toLocaleString('en', { maximumSignificantDigits: 4 });
}

/** The interval as a bar on a common scale, zero marked: where the lift could be, at a glance. */
function IntervalBar({
  low,
  high,
  estimate,
  scale,
  good,
}: {
  low: number;
  high: number;
  estimate: number;
  scale: number;
  good: boolean | undefined;
}) {
  const at = (value: number) => `${50 + (Math.max(-scale, Math.min(scale, value)) / scale) * 50}%`;
  const color = good === undefined ? 'var(--muted)' : good ? 'var(--ok)' : 'var(--danger)';
  return (
    <div className="interval-bar" aria-hidden="true">
      <span className="interval-zero" />
      <span className="interval-range" style={{ left: at(low), right: `calc(100% - ${at(high)})`, background: color }} />
      <span className="interval-estimate" style={{ left: at(estimate), background: color }} />
    </div>
  );
}

function MetricTable({ metric, results }: { metric: MetricResult; results: Results }) {
  const relative = results.difference === 'relative';
  const bayesian = results.engine === 'bayesian';
  const scale = Math.max(
    0.01,
    ...metric.variants.flatMap((variant) => (variant.comparison ? variant.comparison.interval.map((end) => Math.abs(end ?? 0)) : [])),
  );
  return (
    <section className="card stack" aria-label={`Metric ${metric.name}`}>
      <h3 style={{ margin: 0 }}>
        {metric.name}{' '}
        <span className="muted small">
          {metric.role}
          {metric.lowerIsBetter ? ', lower is better' : ''}
        </span>
      </h3>
      <Table
        label={`Results on ${metric.name}`}
        columns={['Variant', 'Units', 'Value', 'Lift (95% interval)', '', bayesian ? 'Chance to win' : 'p-value']}
      >
        {metric.variants.map((variant, index) => {
          const comparison = variant.comparison;
          const better = comparison ? (metric.lowerIsBetter ? -comparison.estimate : comparison.estimate) > 0 : undefined;
          return (
            <tr key={variant.variant}>
              <td>
                <strong>{variant.variant}</strong>
                {index === 0 && <span className="muted small"> (baseline)</span>}
              </td>
              <td>{variant.units.toLocaleString('en')}</td>
              <td>{shownValue(metric, variant.value)}</td>
              <td>
                {comparison
                  ? `${signed(comparison.estimate, relative)} (${signed(comparison.interval[0] ?? Number.NaN, relative)} to ${signed(comparison.interval[1] ?? Number.NaN, relative)})`
                  : index === 0
                    ? ''
                    : variant.problem === 'too-few-units'
                      ? 'too few units yet'
                      : variant.problem}
              </td>
              <td style={{ width: '12rem' }}>
                {comparison && (
                  <IntervalBar
                    low={comparison.interval[0] ?? 0}
                    high={comparison.interval[1] ?? 0}
                    estimate={comparison.estimate}
                    scale={scale}
                    good={comparison.decided ? better : undefined}
                  />
                )}
              </td>
              <td>
                {comparison &&
                  (bayesian
                    ? chance(comparison.chanceToWin ?? 0)
                    : `${(comparison.adjustedPValue ?? comparison.pValue ?? 1).toPrecision(2)}${comparison.adjustedPValue !== undefined ? ' (adjusted)' : ''}`)}
                {comparison?.decided && (
                  <>
                    {' '}
                    <span className={`badge ${better ? 'success' : 'warn'}`}>{better ? 'wins' : 'loses'}</span>
                  </>
                )}
              </td>
            </tr>
          );
        })}
      </Table>
    </section>
  );
}

const formatLift = (value: number) => (Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)}%` : '—');

/** The goal metric's lift of each variant over the snapshots: how the estimate settled as units came in. */
function CumulativeChart({ projectId, experimentName }: { projectId: string; experimentName: string }) {
  const history = useQuery(queries.experimentHistory({ projectId, experimentName }));
  return (
    <Loaded query={history} what="the history">
      {({ snapshots }) => {
        const goal = snapshots.at(-1)?.results.metrics.find((metric) => metric.role === 'goal');
        const variants = goal?.variants.slice(1).map((variant) => variant.variant) ?? [];
        const times = snapshots.map((snapshot) => Date.parse(snapshot.takenAt) / 1000);
        const series = variants.map((name, index) => ({
          label: `${name}: lift on ${goal!.name}`,
          colorVariable: VARIANT_COLORS[index % VARIANT_COLORS.length]!,
          values: snapshots.map(
            (snapshot) =>
              snapshot.results.metrics.find((metric) => metric.name === goal!.name)?.variants.find((variant) => variant.variant === name)
                ?.comparison?.estimate ?? null,
          ),
        }));
        if (snapshots.length < 2) {
          return <p className="muted">The chart draws from the second analysis on: running experiments are analysed every hour.</p>;
        }
        return (
          <TimeChart
            label={`Lift on ${goal?.name ?? 'the goal metric'} over time`}
            times={times}
            series={series}
            caption="latest"
            format={formatLift}
          />
        );
      }}
    </Loaded>
  );
}

function ExperimentActions({ experiment }: { experiment: Experiment }) {
  const path = { projectId: experiment.project, experimentName: experiment.name };
  const start = useAction(actions.startExperiment);
  const stop = useAction(actions.stopExperiment);
  const ship = useAction(actions.shipExperimentVariant);
  const refresh = useAction(actions.refreshExperimentResults);
  const mayChange = useCan('UPDATE_FEATURE', experiment.project);
  const variants = experiment.phases.at(-1)?.variants ?? [];
  return (
    <div className="stack">
      <div className="row">
        {mayChange && experiment.status === 'draft' && (
          <button className="primary" type="button" onClick={() => start.mutate(path)} disabled={start.isPending}>
            Start experiment
          </button>
        )}
        {experiment.status !== 'draft' && (
          <button type="button" onClick={() => refresh.mutate(path)} disabled={refresh.isPending}>
            Analyse now
          </button>
        )}
        {mayChange && experiment.status === 'running' && (
          <ConfirmButton question={`Stop ${experiment.name}? Exposures are no longer counted.`} onConfirm={() => stop.mutate(path)}>
            Stop
          </ConfirmButton>
        )}
        {mayChange &&
          (experiment.status === 'running' || experiment.status === 'stopped') &&
          variants.map((variant) => (
            <ConfirmButton
              key={variant.name}
              question={`Ship ${variant.name}? The strategy gives it to everyone in ${experiment.environment}.`}
              onConfirm={() => ship.mutate({ ...path, variant: variant.name })}
            >
              Ship {variant.name}
            </ConfirmButton>
          ))}
      </div>
      <ErrorMessage error={start.error ?? stop.error ?? ship.error ?? refresh.error} />
      {ship.data?.changeRequestId !== undefined && (
        <p className="success">
          {experiment.environment} takes changes through review: shipping was added to{' '}
          <Link to={`/projects/${encodeURIComponent(experiment.project)}/change-requests/${ship.data.changeRequestId}`}>
            change request {ship.data.changeRequestId}
          </Link>
          .
        </p>
      )}
    </div>
  );
}

function ResultsView({ projectId, experimentName }: { projectId: string; experimentName: string }) {
  const results = useQuery(queries.experimentResults({ projectId, experimentName }));
  return (
    <Loaded query={results} what="the results">
      {(data) => (
        <div className="stack">
          {data.sampleRatio.alarm && (
            <div className="error box" role="alert" aria-label="Sample ratio mismatch">
              <strong>Sample ratio mismatch.</strong> {data.warnings[0]}
            </div>
          )}
          {data.warnings.slice(data.sampleRatio.alarm ? 1 : 0).map((warning) => (
            <div key={warning} className="notice" role="note">
              {warning}
            </div>
          ))}
          <p className="summary" role="note" aria-label="Summary">
            {data.summary}
          </p>
          <p className="muted small">
            Phase {data.phase}, analysed {formatDate(data.computedAt)}:{' '}
            {data.exposures.map((arm) => `${arm.variant} ${arm.units.toLocaleString('en')} units`).join(', ')}
            {data.multipleExposures > 0 && `; ${data.multipleExposures} seen in two variants, left out`}. Sample ratio p ={' '}
            {data.sampleRatio.pValue.toPrecision(2)}.
          </p>
          {data.metrics.map((metric) => (
            <MetricTable key={metric.name} metric={metric} results={data} />
          ))}
          <h2>Over time</h2>
          <CumulativeChart projectId={projectId} experimentName={experimentName} />
        </div>
      )}
    </Loaded>
  );
}

export function ExperimentPage() {
  const { projectId = '', experimentName = '' } = useParams();
  const experiment = useQuery(queries.experiment({ projectId, experimentName }));
  return (
    <Loaded query={experiment} what="the experiment">
      {(details) => (
        <div className="stack">
          <p className="small">
            <Link to={`/projects/${encodeURIComponent(projectId)}`}>← {projectId}</Link>
          </p>
          <div className="spread">
            <h1>
              {details.name} <span className={`chip status-${details.status}`}>{details.status}</span>
            </h1>
          </div>
          {details.hypothesis && <p>{details.hypothesis}</p>}
          <p className="muted small">
            Variants of{' '}
            <Link to={`/projects/${encodeURIComponent(projectId)}/flags/${encodeURIComponent(details.featureName)}`}>
              {details.featureName}
            </Link>{' '}
            in {details.environment} · {details.engine}
            {details.sequential ? ', sequential' : ''}
            {details.cuped ? `, CUPED over ${details.cuped.lookbackDays} days` : ''}
            {details.correction === 'none' ? '' : `, ${CORRECTIONS[details.correction] ?? details.correction} correction`} · started{' '}
            {formatDate(details.startedAt)}
            {details.shippedVariant ? ` · shipped ${details.shippedVariant}` : ''}
          </p>
          <ExperimentActions experiment={details} />
          {details.status === 'draft' ? (
            <p className="muted">Results appear once the experiment starts and SDKs send exposures and events.</p>
          ) : (
            <ResultsView projectId={projectId} experimentName={experimentName} />
          )}
        </div>
      )}
    </Loaded>
  );
}
