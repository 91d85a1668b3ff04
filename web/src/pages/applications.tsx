import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router';
import { queries } from '../api/queries';
import { formatDate, Loaded, Pager, Table } from '../components/ui';

const PAGE_SIZE = 50;

/** The applications whose SDKs registered, searchable and paged: thousands stay quick. */
export function Applications() {
  const [search, setSearch] = useSearchParams();
  const query = search.get('query') ?? '';
  const offset = Number(search.get('offset') ?? 0);
  const list = useQuery(queries.applications({ query, offset, limit: PAGE_SIZE }));
  const update = (changes: Record<string, string>) => {
    const next = new URLSearchParams(window.location.search);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    setSearch(next, { replace: true });
  };
  return (
    <div>
      <h1>Applications</h1>
      <p className="muted">The applications whose SDKs registered with Vexil, with their instances and what they run.</p>
      <label className="field" style={{ maxWidth: '24rem' }}>
        Search applications
        <input type="search" defaultValue={query} onChange={(event) => update({ query: event.target.value.trim(), offset: '' })} />
      </label>
      <Loaded query={list} what="applications">
        {(data) => (
          <>
            <Table label="Applications" columns={['Application', 'Instances', 'SDK versions', 'Environments', 'Last seen']}>
              {data.applications.length === 0 && (
                <tr>
                  <td colSpan={5} className="muted">
                    {query ? 'No application matches.' : 'No SDK has registered yet. Connect one with a client token.'}
                  </td>
                </tr>
              )}
              {data.applications.map((application) => (
                <tr key={application.appName}>
                  <td>
                    <Link to={`/applications/${encodeURIComponent(application.appName)}`}>{application.appName}</Link>
                  </td>
                  <td>{application.instances}</td>
                  <td className="small">{application.sdkVersions.join(', ') || '—'}</td>
                  <td className="small">{application.environments.join(', ') || '—'}</td>
                  <td className="small">{formatDate(application.seenAt)}</td>
                </tr>
              ))}
            </Table>
            <Pager offset={offset} limit={PAGE_SIZE} total={data.total} onChange={(next) => update({ offset: next ? String(next) : '' })} />
          </>
        )}
      </Loaded>
    </div>
  );
}

/** One application: its instances, the flags it evaluated this week, and the names it asks for that no flag has. */
export function ApplicationPage() {
  const { appName = '' } = useParams();
  const application = useQuery(queries.application(appName));
  return (
    <Loaded query={application} what="the application">
      {(data) => (
        <div>
          <p className="small">
            <Link to="/applications">Applications</Link> /
          </p>
          <h1>{data.appName}</h1>
          <p className="muted small">
            Registered {formatDate(data.createdAt)} · last seen {formatDate(data.seenAt)} · strategies it knows:{' '}
            {data.strategies.join(', ') || '—'}
          </p>
          {data.missingFlags.length > 0 && (
            <div className="error box" role="alert" data-testid="missing-flags">
              <strong>It evaluates flags that do not exist:</strong>{' '}
              {data.missingFlags.map((flag) => `${flag.name} (${flag.environment}, last ${formatDate(flag.lastSeenAt)})`).join(', ')}.
              Create them, or remove them from the code.
            </div>
          )}
          <h2>Flags it evaluated in the last 7 days</h2>
          <Table label="Flags evaluated" columns={['Flag', 'Environment', 'Yes', 'No', 'Last hour seen']}>
            {data.flags.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">
                  No usage reported this week.
                </td>
              </tr>
            )}
            {data.flags.map((flag) => (
              <tr key={`${flag.name}-${flag.environment}`}>
                <td>
                  <Link to={`/projects/${encodeURIComponent(flag.project)}/flags/${encodeURIComponent(flag.name)}`}>{flag.name}</Link>
                </td>
                <td>{flag.environment}</td>
                <td>{flag.yes}</td>
                <td>{flag.no}</td>
                <td className="small">{formatDate(flag.lastHour)}</td>
              </tr>
            ))}
          </Table>
          <h2>Instances</h2>
          <Table label="Instances" columns={['Instance', 'Environment', 'SDK', 'Address', 'Started', 'Last seen']}>
            {data.instances.map((instance) => (
              <tr key={`${instance.environment}-${instance.instanceId}`}>
                <td>{instance.instanceId}</td>
                <td>{instance.environment}</td>
                <td className="small">{instance.sdkVersion ?? '—'}</td>
                <td className="small">{instance.clientIp ?? '—'}</td>
                <td className="small">{formatDate(instance.started)}</td>
                <td className="small">{formatDate(instance.lastSeen)}</td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Loaded>
  );
}
