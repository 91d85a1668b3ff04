import { Link } from 'react-router';
import type { Schemas } from '../api/client';
import { formatDate } from './ui';

type ChangeRequest = Schemas['changeRequestSchema'];

export function ChangeRequestTable({ changeRequests, empty }: { changeRequests: ChangeRequest[]; empty: string }) {
  if (changeRequests.length === 0) return <p className="muted">{empty}</p>;
  return (
    <div className="table-wrap">
      <table aria-label="Change requests">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Title</th>
            <th scope="col">Project</th>
            <th scope="col">Environment</th>
            <th scope="col">State</th>
            <th scope="col">Changes</th>
            <th scope="col">By</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
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
                {[...request.features.map((feature) => feature.name), ...request.segments.map((segment) => `segment ${segment.name}`)].join(', ')}
              </td>
              <td>{request.createdBy.username}</td>
              <td className="small">{formatDate(request.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
