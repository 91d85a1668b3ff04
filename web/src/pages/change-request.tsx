import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { actions, queries, type Schemas } from '../api/queries';
import { SideBySideDiff } from '../components/diff';
import { useMe } from '../components/layout';
import { ErrorMessage, formatDate, Loaded, useAction, onFormSubmit } from '../components/ui';
import { changeRequestName } from '../components/change-request-list';

type ChangeRequest = Schemas['changeRequestSchema'];
type Change = { id: number; action: string; payload: unknown; conflict?: string; createdBy?: { username: string } };
type Feature = Schemas['featureSchema'];

/** What a change would replace in the flag as it is now, to show the change as a diff against it. */
function currentState(change: Change, feature: Feature | undefined, environment: string): unknown {
  if (!feature) return null;
  const inEnvironment = feature.environments.find((entry) => entry.name === environment);
  const payload = (change.payload ?? {}) as { id?: string; feature?: string };
  switch (change.action) {
    case 'updateEnabled':
      return { enabled: inEnvironment?.enabled ?? false };
    case 'updateStrategy':
    case 'deleteStrategy':
      return inEnvironment?.strategies.find((strategy) => strategy.id === payload.id) ?? null;
    case 'reorderStrategy':
      return inEnvironment?.strategies.map((strategy) => ({ id: strategy.id, sortOrder: strategy.sortOrder }));
    case 'patchVariant':
      return { variants: inEnvironment?.variants ?? [] };
    case 'archiveFeature':
      return { archived: feature.archived };
    case 'addDependency':
    case 'deleteDependency':
      return feature.dependencies.find((dependency) => dependency.feature === payload.feature) ?? null;
    default:
      return null;
  }
}

function proposedState(change: Change): unknown {
  switch (change.action) {
    case 'deleteStrategy':
    case 'deleteDependency':
      return null;
    case 'archiveFeature':
      return { archived: true };
    default:
      return change.payload;
  }
}

function FeatureChanges({
  request,
  group,
  canEdit,
  onRemove,
}: {
  request: ChangeRequest;
  group: ChangeRequest['features'][number];
  canEdit: boolean;
  onRemove: (changeId: number) => void;
}) {
  const feature = useQuery(queries.flag({ projectId: request.project, featureName: group.name }));
  return (
    <section className="card stack" aria-label={`Changes to ${group.name}`}>
      <h3 style={{ margin: 0 }}>
        Flag <Link to={`/projects/${encodeURIComponent(request.project)}/flags/${encodeURIComponent(group.name)}`}>{group.name}</Link>
      </h3>
      {group.conflict && <p className="error box">Conflict: {group.conflict}</p>}
      {(group.changes as Change[]).map((change) => (
        <div key={change.id} className="stack" data-testid="change">
          <div className="spread">
            <strong>{change.action}</strong>
            {canEdit && (
              <button type="button" className="danger" onClick={() => onRemove(change.id)}>
                Remove change
              </button>
            )}
          </div>
          {change.conflict && <p className="error box">Conflict: {change.conflict}</p>}
          <SideBySideDiff
            before={currentState(change, feature.data, request.environment)}
            after={proposedState(change)}
            beforeLabel="Now"
            afterLabel="Proposed"
          />
        </div>
      ))}
      {group.defaultChange && <p className="muted small">Also applied: {group.defaultChange.action} (keeps the flag valid).</p>}
    </section>
  );
}

/** What an applied request changed, from the events applying it recorded: each as it was before and after. */
function AppliedChanges({ changes }: { changes: NonNullable<ChangeRequest['appliedChanges']> }) {
  if (changes.length === 0) return <p className="muted">Applying it changed nothing.</p>;
  return (
    <>
      {changes.map((change) => (
        <section key={change.eventId} className="card stack" aria-label={`Applied: ${change.type}`} data-testid="applied-change">
          <h3 style={{ margin: 0 }}>
            {change.type}
            {change.featureName && <span className="muted"> · {change.featureName}</span>}{' '}
            <span className="muted small">event #{change.eventId}</span>
          </h3>
          <SideBySideDiff before={change.preData} after={change.data} beforeLabel="Before" afterLabel="After" />
        </section>
      ))}
    </>
  );
}

/** A segment change, shown against the segment as it is now (nothing for a deletion's "after"). */
function SegmentChange({ change }: { change: Schemas['changeRequestSegmentChangeSchema'] }) {
  const payload = (change.payload ?? {}) as { id?: number };
  const segmentId = String(payload.id ?? '');
  const current = useQuery({ ...queries.segment(segmentId), enabled: segmentId !== '' });
  const now = current.data
    ? { name: current.data.name, description: current.data.description, constraints: current.data.constraints }
    : null;
  // The payload carries the segment's id beside its new fields; the id is not a change.
  const proposed =
    change.action === 'deleteSegment' ? null : Object.fromEntries(Object.entries(change.payload as object).filter(([key]) => key !== 'id'));
  return (
    <section className="card stack" aria-label={`Changes to segment ${change.name}`}>
      <h3 style={{ margin: 0 }}>
        Segment {change.name}: {change.action}
      </h3>
      {change.conflict && <p className="error box">Conflict: {change.conflict}</p>}
      <SideBySideDiff before={now} after={proposed} beforeLabel="Now" afterLabel="Proposed" />
    </section>
  );
}

export function ChangeRequestPage() {
  const { projectId = '', id = '' } = useParams();
  const me = useMe().data;
  const path = { projectId, id };
  const [reason, setReason] = useState('');
  const [comment, setComment] = useState('');
  const [scheduledAt, setScheduledAt] = useState('');
  const request = useQuery(queries.changeRequest(projectId, id));
  const setState = useAction(actions.setChangeRequestState);
  const changeState = (body: Schemas['changeRequestStateSchema']) => setState.mutate({ ...path, body });
  const addComment = useAction(actions.commentOnChangeRequest, () => setComment(''));
  const removeChange = useAction(actions.removeChangeFromRequest);
  const rename = useAction(actions.renameChangeRequest);

  return (
    <Loaded query={request} what="the change request">
      {(changeRequest) => {
        const mine = changeRequest.createdBy.id === me?.user.id;
        const state = changeRequest.state;
        return (
          <div>
            <p className="small">
              <Link to={`/projects/${encodeURIComponent(projectId)}`}>{projectId}</Link> /{' '}
              <Link to="/change-requests">change requests</Link> /
            </p>
            <div className="spread">
              <h1>
                {changeRequestName(changeRequest)}{' '}
                <span className={`badge ${state}`} data-testid="cr-state">
                  {state}
                </span>
              </h1>
            </div>
            <p className="muted">
              In <strong>{changeRequest.environment}</strong> · by {changeRequest.createdBy.username} ·{' '}
              {formatDate(changeRequest.createdAt)} · approvals {changeRequest.approvals.length} of {changeRequest.minApprovals}
              {changeRequest.appliedBy && ` · applied by ${changeRequest.appliedBy.username} ${formatDate(changeRequest.appliedAt)}`}
            </p>
            {changeRequest.schedule && (
              <p className="notice">
                Scheduled for {formatDate(changeRequest.schedule.scheduledAt)} ({changeRequest.schedule.status})
                {changeRequest.schedule.failureReason && `: ${changeRequest.schedule.failureReason}`}
              </p>
            )}
            {state === 'Draft' && mine && (
              <form
                className="row"
                onSubmit={onFormSubmit((form) => {
                  rename.mutate({ ...path, title: String(form.get('title')) });
                })}
              >
                <input name="title" aria-label="Title" defaultValue={changeRequest.title} />
                <button type="submit">Rename</button>
                <ErrorMessage error={rename.error} />
              </form>
            )}
            <h2>Changes</h2>
            {changeRequest.appliedChanges ? (
              <AppliedChanges changes={changeRequest.appliedChanges} />
            ) : (
              <>
                {changeRequest.features.map((group) => (
                  <FeatureChanges
                    key={group.name}
                    request={changeRequest}
                    group={group}
                    canEdit={state === 'Draft' && mine}
                    onRemove={(changeId) => removeChange.mutate({ ...path, changeId: String(changeId) })}
                  />
                ))}
                {changeRequest.segments.map((segment) => (
                  <SegmentChange key={segment.id} change={segment} />
                ))}
              </>
            )}
            <ErrorMessage error={removeChange.error} />
            <h2>Review</h2>
            <section className="card stack" aria-label="Review">
              <div className="small">
                {changeRequest.approvals.map((approval) => (
                  <div key={`a${approval.createdBy.id}`}>
                    ✔ Approved by {approval.createdBy.username} · {formatDate(approval.createdAt)}
                  </div>
                ))}
                {changeRequest.rejections.map((rejection) => (
                  <div key={`r${rejection.createdBy.id}`}>
                    ✘ Rejected by {rejection.createdBy.username} · {formatDate(rejection.createdAt)}
                  </div>
                ))}
              </div>
              <div className="row">
                {state === 'Draft' && mine && (
                  <button className="primary" type="button" onClick={() => changeState({ state: 'In review' })}>
                    Send to review
                  </button>
                )}
                {state === 'In review' && (
                  <button
                    className="primary"
                    type="button"
                    onClick={() => changeState({ state: 'Approved' })}
                    disabled={mine}
                    title={mine ? 'Someone other than the author approves' : undefined}
                  >
                    Approve
                  </button>
                )}
                {(state === 'Approved' || state === 'Scheduled') && (
                  <button className="primary" type="button" onClick={() => changeState({ state: 'Applied' })}>
                    Apply now
                  </button>
                )}
                {!['Applied', 'Cancelled', 'Rejected'].includes(state) && mine && (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => window.confirm('Cancel this change request?') && changeState({ state: 'Cancelled' })}
                  >
                    Cancel change request
                  </button>
                )}
              </div>
              {state === 'In review' && !mine && (
                <div className="row">
                  <input
                    aria-label="Reason for rejecting"
                    placeholder="Why it should not be applied"
                    value={reason}
                    onChange={(event) => setReason(event.target.value)}
                    style={{ flex: 1 }}
                  />
                  <button
                    type="button"
                    className="danger"
                    onClick={() => changeState({ state: 'Rejected', ...(reason ? { comment: reason } : {}) })}
                  >
                    Reject
                  </button>
                </div>
              )}
              {(state === 'Approved' || state === 'Scheduled') && (
                <div className="row">
                  <label className="small">
                    Apply at <input type="datetime-local" value={scheduledAt} onChange={(event) => setScheduledAt(event.target.value)} />
                  </label>
                  <button
                    type="button"
                    disabled={!scheduledAt}
                    onClick={() => changeState({ state: 'Scheduled', scheduledAt: new Date(scheduledAt).toISOString() })}
                  >
                    Schedule
                  </button>
                </div>
              )}
              <ErrorMessage error={setState.error} />
            </section>
            <h2>Comments</h2>
            <section className="card stack" aria-label="Comments">
              {changeRequest.comments.length === 0 && <p className="muted small">No comments.</p>}
              {changeRequest.comments.map((entry) => (
                <div key={entry.id} data-testid="comment">
                  <strong>{entry.createdBy.username}</strong> <span className="muted small">{formatDate(entry.createdAt)}</span>
                  <p style={{ margin: '0.2rem 0', whiteSpace: 'pre-wrap' }}>{entry.text}</p>
                </div>
              ))}
              <form
                className="stack"
                onSubmit={(event) => {
                  event.preventDefault();
                  addComment.mutate({ ...path, text: comment });
                }}
              >
                <textarea aria-label="Comment" value={comment} onChange={(event) => setComment(event.target.value)} required />
                <ErrorMessage error={addComment.error} />
                <div>
                  <button type="submit" disabled={addComment.isPending}>
                    Comment
                  </button>
                </div>
              </form>
            </section>
          </div>
        );
      }}
    </Loaded>
  );
}
