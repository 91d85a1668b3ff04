import { useQuery } from '@tanstack/react-query';
import { queries } from '../../api/queries';
import { ErrorMessage } from '../../components/ui';
import type { FlagContext } from './flag-change';

/**
 * Where the code of the repositories that push references (`vexil refs push`) reads the flag, and whether the flag
 * can leave it (per production environment, with the reasons).
 */
export function CodeReferencesCard({ context }: { context: FlagContext }) {
  const path = { projectId: context.projectId, featureName: context.flagName };
  const found = useQuery(queries.flagCodeReferences(path));
  const readiness = useQuery(queries.flagRemovalReadiness(path));
  const answer = found.data;
  const settledBranch = readiness.data?.settledBranch;
  const groups = new Map<string, NonNullable<typeof answer>['references']>();
  for (const reference of answer?.references ?? []) {
    const key = `${reference.repository} · ${reference.branch} @ ${reference.commit.slice(0, 7)}`;
    groups.set(key, [...(groups.get(key) ?? []), reference]);
  }
  return (
    <section className="card stack" aria-label="Code references">
      <h3 style={{ margin: 0 }}>Code references</h3>
      <ErrorMessage error={found.error ?? readiness.error} />
      {readiness.data?.environments.map((environment) => (
        <p key={environment.environment} className="small" data-testid="removal-readiness" style={{ margin: 0 }}>
          <strong>
            {environment.environment}: {environment.verdict}
          </strong>{' '}
          <span className="muted">({environment.reasons.join('; ')})</span>
        </p>
      ))}
      {settledBranch && (
        <p className="small" data-testid="cleanup-command" style={{ margin: 0 }}>
          Take it out of the code, keeping the {settledBranch} branch:{' '}
          <code>
            npx vexil refs cleanup {context.flagName} --keep {settledBranch}
          </code>{' '}
          <span className="muted">(a coding agent: the MCP tool get_flag_cleanup_patch); archive it once the cleaned code is pushed.</span>
        </p>
      )}
      {answer && answer.references.length === 0 && (
        <span className="muted small">
          {answer.removedFromCode
            ? `Removed from code in commit ${answer.removedFromCode.commit.slice(0, 7)} of ${answer.removedFromCode.repository} (${answer.removedFromCode.branch}), ${new Date(answer.removedFromCode.removedAt).toLocaleDateString()}.`
            : 'No pushed repository reads this flag. vexil refs push sends where code reads flags.'}
        </span>
      )}
      {[...groups].map(([repository, references]) => (
        <div key={repository} className="stack">
          <strong className="small">{repository}</strong>
          {references.map((reference) => (
            <div key={`${reference.file}:${reference.line}`} className="stack" style={{ gap: 2 }}>
              <span className="small">
                {reference.url ? (
                  <a href={reference.url} target="_blank" rel="noopener noreferrer">
                    {reference.file}:{reference.line}
                  </a>
                ) : (
                  `${reference.file}:${reference.line}`
                )}{' '}
                <span className="muted">
                  {reference.language}, {reference.call}({reference.expression})
                </span>
              </span>
              {reference.context.length > 0 && <pre className="code">{reference.context.join('\n')}</pre>}
            </div>
          ))}
        </div>
      ))}
      {answer && answer.total > answer.references.length && (
        <span className="muted small">
          Showing {answer.references.length.toLocaleString()} of {answer.total.toLocaleString()} references.
        </span>
      )}
    </section>
  );
}
