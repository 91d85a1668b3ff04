import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { actions, queries } from '../api/queries';
import { useCan } from '../components/layout';
import { ErrorMessage, formatDate, useAction } from '../components/ui';

/** Each list is a search: flag health's problems, and removal readiness as the hourly watch last judged it. */
const PROBLEMS = [
  {
    filter: 'health',
    value: 'potentially-stale',
    title: 'Past their expected lifetime',
    advice: 'Mark them stale, or archive them when their code is gone.',
  },
  {
    filter: 'health',
    value: 'never-seen',
    title: 'Never evaluated by any SDK',
    advice: 'Created over a week ago and no application asked for them.',
  },
  {
    filter: 'health',
    value: 'unused-in-production',
    title: 'Unused in production',
    advice: 'On in production, but no SDK evaluated them there in 30 days.',
  },
  {
    filter: 'health',
    value: 'ready-to-remove',
    title: 'Ready to remove',
    advice: 'On in every environment and unchanged for three weeks: remove them from the code.',
  },
  {
    filter: 'removalReadiness',
    value: 'ready-to-remove',
    title: 'Ready to leave the code',
    advice:
      'Production has served one branch for three weeks and nothing holds them: vexil refs cleanup FLAG --keep on|off writes the patch (each flag’s page says which branch stays).',
  },
  {
    filter: 'removalReadiness',
    value: 'ready-to-archive',
    title: 'Gone from the code',
    advice: 'No pushed code reads them any more and no SDK asked for them lately: archive them.',
  },
] as const;
const SHOWN = 10;

/** One problem's flags in the project: how many, the first few, and one click to mark stale or archive. */
function ProblemList({ projectId, problem }: { projectId: string; problem: (typeof PROBLEMS)[number] }) {
  const filters = { project: `IS:${projectId}`, [problem.filter]: `IS:${problem.value}`, limit: String(SHOWN), sortBy: 'createdAt' };
  const flags = useQuery(queries.featureSearch(filters));
  const canChange = useCan('UPDATE_FEATURE', projectId);
  const canArchive = useCan('DELETE_FEATURE', projectId);
  const stale = useAction(actions.setStale);
  const archive = useAction(actions.archiveFlag);
  const total = flags.data?.total ?? 0;
  return (
    <div className="stack" data-testid={`${problem.filter === 'health' ? 'health' : 'readiness'}-${problem.value}`}>
      <div className="spread">
        <strong>
          {problem.title}: <span data-testid="count">{flags.data ? total : '…'}</span>
        </strong>
        {total > SHOWN && (
          <Link
            to={`/flags?project=${encodeURIComponent(`IS:${projectId}`)}&${problem.filter}=${encodeURIComponent(`IS:${problem.value}`)}`}
          >
            All {total} →
          </Link>
        )}
      </div>
      {total > 0 && <p className="muted small">{problem.advice}</p>}
      {total > 0 && (
        <ul className="small">
          {(flags.data?.features ?? []).map((flag) => {
            const path = { projectId, featureName: flag.name };
            return (
              <li key={flag.name} className="spread">
                <span>
                  <Link to={`/projects/${encodeURIComponent(projectId)}/flags/${encodeURIComponent(flag.name)}`}>{flag.name}</Link>{' '}
                  <span className="muted">
                    {flag.type} · created {formatDate(flag.createdAt)}
                    {flag.lastSeenAt ? ` · last seen ${formatDate(flag.lastSeenAt)}` : ' · never seen'}
                  </span>
                </span>
                <span className="row">
                  {canChange && !flag.stale && (
                    <button type="button" onClick={() => stale.mutate({ path, stale: true })}>
                      Mark {flag.name} stale
                    </button>
                  )}
                  {canArchive && (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => window.confirm(`Archive ${flag.name}? SDKs stop receiving it.`) && archive.mutate(path)}
                    >
                      Archive {flag.name}
                    </button>
                  )}
                </span>
              </li>
            );
          })}
        </ul>
      )}
      <ErrorMessage error={flags.error ?? stale.error ?? archive.error} />
    </div>
  );
}

/** A project's flags that need attention, so cleaning up is a routine. */
export function FlagHealth({ projectId }: { projectId: string }) {
  return (
    <section className="card stack" aria-label="Flag health">
      {PROBLEMS.map((problem) => (
        <ProblemList key={`${problem.filter}-${problem.value}`} projectId={projectId} problem={problem} />
      ))}
    </section>
  );
}
