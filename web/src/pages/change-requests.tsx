import { useQueries, useQuery } from '@tanstack/react-query';
import { queries } from '../api/queries';
import { ChangeRequestTable } from '../components/change-request-list';
import { ErrorMessage, Loading } from '../components/ui';

/** Open change requests of every project (each project's pending list, spec 4.6), oldest first. */
export function ChangeRequests() {
  const projects = useQuery(queries.projects());
  const pending = useQueries({
    queries: (projects.data?.projects ?? []).map((project) => queries.pending(project.id)),
  });
  const failed = pending.find((query) => query.error)?.error ?? projects.error;
  const loading = projects.isPending || pending.some((query) => query.isPending);
  const all = pending.flatMap((query) => query.data ?? []).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return (
    <div>
      <h1>Change requests</h1>
      <p className="muted">
        Open change requests in every project. A project's page lists its change requests in every state, and sets which environments
        require them.
      </p>
      <ErrorMessage error={failed} />
      {loading ? <Loading what="change requests" /> : <ChangeRequestTable changeRequests={all} empty="No open change requests." />}
    </div>
  );
}
