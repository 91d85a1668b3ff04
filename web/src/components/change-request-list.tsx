import { Link } from 'react-router';
import type { Schemas } from '../api/queries';
import { formatDate, Table } from './ui';

type ChangeRequest = Schemas['changeRequestSchema'];

export function ChangeRequestTable({ changeRequests, empty }: { changeRequests: ChangeRequest[]; empty: string }) {
  if (changeRequests.length === 0) return <p className="muted">{empty}</p>;
  return (
    <Table label="Change requests" columns={['#', 'Title', 'Project', 'Environment', 'State', 'Changes', 'By', 'Created']}>
      {changeRequests.map((request) => (
        <tr key={request.id} data-testid="change-request-row">
          <td>
            <Link to={`/projects/${encodeURIComponent(request.project)}/change-requests/${request.id}`}>#{request.id}</Link>
          </td>
          <td>
            <Link to={`/projects/${encodeURIComponent(request.project)}/change-requests/${request.id}`}>
              {request.title || `Change request #${request.id}`}
            </Link>
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
