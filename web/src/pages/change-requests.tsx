import { useQuery } from '@tanstack/react-query';
import { queries } from '../api/queries';
import { ChangeRequestTable } from '../components/change-request-list';
import { ErrorMessage, Loading } from '../components/ui';

/** The open change requests the user has to do with, in every project: hers to review, and hers to follow. */
export function ChangeRequests() {
  const open = useQuery(queries.openChangeRequests());
  return (
    <div>
      <h1>Change requests</h1>
      <p className="muted">
        Open change requests in every project that wait for your review, and those you opened. A project's page lists all its change
        requests, and sets which environments require them.
      </p>
      <ErrorMessage error={open.error} />
      {open.isPending ? (
        <Loading what="change requests" />
      ) : (
        <>
          <section aria-labelledby="to-review">
            <h2 id="to-review">Waiting for your review</h2>
            <ChangeRequestTable
              label="Waiting for your review"
              changeRequests={open.data?.toReview ?? []}
              empty="Nothing waits for your review."
            />
          </section>
          <section aria-labelledby="mine">
            <h2 id="mine">Opened by you</h2>
            <ChangeRequestTable label="Opened by you" changeRequests={open.data?.mine ?? []} empty="You have no open change requests." />
          </section>
        </>
      )}
    </div>
  );
}
