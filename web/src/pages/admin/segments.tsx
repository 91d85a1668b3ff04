import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../../api/errors';
import { actions, queries, type Schemas } from '../../api/queries';
import { AdminList, NameCell, formText, ItemForm, NameAndDescription } from '../../components/admin';
import { ConstraintsEditor } from '../../components/strategy-form';
import { ErrorMessage, formatDate, useAction } from '../../components/ui';

type Segment = Schemas['adminSegmentSchema'];

/** The protected environments a refused segment change named (`"production" of project "checkout"`). */
function protectedEnvironmentsIn(error: unknown): Array<{ project: string; environment: string }> {
  if (!(error instanceof ApiError) || error.status !== 403) return [];
  return [...error.message.matchAll(/"([^"]+)" of project "([^"]+)"/g)].map((match) => ({ environment: match[1]!, project: match[2]! }));
}

function SegmentForm({ segment, onDone }: { segment?: Segment; onDone: () => void }) {
  const [constraints, setConstraints] = useState<Schemas['constraintSchema'][]>(segment?.constraints ?? []);
  const [proposed, setProposed] = useState<{ project: string; id: number } | null>(null);
  const save = useAction(actions.saveSegment, onDone);
  // A segment used in an environment that requires change requests changes through one (spec 4.5).
  const propose = useAction(actions.proposeSegmentChange, setProposed);
  const [draft, setDraft] = useState<Schemas['upsertSegmentSchema'] | null>(null);
  const submit = (form: FormData) => {
    const body = { name: formText(form, 'name'), description: String(form.get('description')), constraints };
    setDraft(body);
    setProposed(null);
    save.mutate({ ...(segment ? { existing: segment.id } : {}), body });
  };
  const protectedIn = segment ? protectedEnvironmentsIn(save.error) : [];
  const footer = (
    <>
      {protectedIn.length > 0 && draft && !proposed && (
        <div className="row">
          {protectedIn.map(({ project, environment }) => (
            <button
              key={`${project}/${environment}`}
              type="button"
              onClick={() => propose.mutate({ projectId: project, environment, segmentId: segment!.id, body: draft })}
              disabled={propose.isPending}
            >
              Propose in a change request for {environment} of {project}
            </button>
          ))}
        </div>
      )}
      <ErrorMessage error={propose.error} />
      {proposed && (
        <p className="notice" role="status">
          Added to change request{' '}
          <Link to={`/projects/${encodeURIComponent(proposed.project)}/change-requests/${proposed.id}`}>#{proposed.id}</Link>. Send it to
          review there.
        </p>
      )}
    </>
  );
  return (
    <ItemForm noun="segment" editing={segment?.name} onDone={onDone} mutation={save} onSubmit={submit} footer={footer}>
      <div className="grid2">
        <NameAndDescription error={save.error} item={segment} />
      </div>
      <h3>Constraints</h3>
      <ConstraintsEditor constraints={constraints} onChange={setConstraints} />
    </ItemForm>
  );
}

const describeConstraints = (segment: Segment) =>
  segment.constraints.length === 0
    ? 'No constraints'
    : segment.constraints
        .map((constraint) => `${constraint.contextName} ${constraint.operator} ${(constraint.values ?? [constraint.value]).join(', ')}`)
        .join(' AND ');

export function AdminSegments() {
  const segments = useQuery(queries.segments());
  return (
    <AdminList
      title="Segments"
      intro="Named sets of constraints that strategies of any flag can reuse."
      query={segments}
      items={(data) => data.segments}
      columns={['Segment', 'Constraints', 'Created']}
      empty="No segments yet."
      cells={(segment) => (
        <>
          <NameCell name={segment.name} description={segment.description}>
            {' '}
            <span className="muted small">#{segment.id}</span>
          </NameCell>
          <td className="small">{describeConstraints(segment)}</td>
          <td className="small">{formatDate(segment.createdAt)}</td>
        </>
      )}
      edit={(segment, done) => <SegmentForm segment={segment} onDone={done} />}
      remove={{ action: actions.deleteSegment }}
      noun="segment"
      create={(done) => <SegmentForm onDone={done} />}
    />
  );
}
