import { Link } from 'react-router';
import type { Schemas } from '../api/queries';
import { formatDate, Table } from './ui';

type ChangeRequest = Schemas['changeRequestSchema'];

/** "#7 Raise the rollout", or the API's own "Change request #7" when the request has no title of its own. */
export function changeRequestName(request: Pick<ChangeRequest, 'id' | 'title'>): string {
  return request.title === `Change request #${request.id}` ? request.title : `#${request.id} ${request.title}`;
}

export function ChangeRequestTable({
  changeRequests,
  empty,
  label = 'Change requests',
}: {
  changeRequests: ChangeRequest[];
  empty: string;
  label?: string;
}) {
  if (changeRequests.length === 0) return <p className="muted">{empty}</p>;
  return (
    <Table label={label} columns={['Change request', 'Project', 'Environment', 'State', 'Changes', 'By', 'Created']}>
      {changeRequests.map((request) => (
        <tr key={request.id} data-testid="change-request-row">
          <td>
            <Link to={`/projects/${encodeURIComponent(request.project)}/change-requests/${request.id}`}>{changeRequestName(request)}</Link>
          </td>
          <td>{request.project}</td>
          <td>{request.environment}</td>
          <td>
            <span className={`badge ${request.state}`}>{request.state}</span>
          </td>
          <td className="small">
            {[...request.features.map((feature) => feature.name), ...request.segments.map((segment) => `segment ${segment.name}`)].join(
              ', ',
            )}
          </td>
          <td>{request.createdBy.username}</td>
          <td className="small">{formatDate(request.createdAt)}</td>
        </tr>
      ))}
    </Table>
  );
}
