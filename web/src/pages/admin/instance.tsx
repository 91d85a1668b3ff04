import { useQuery } from '@tanstack/react-query';
import { actions, queries, type Schemas } from '../../api/queries';
import { ErrorMessage, Loaded, Switch, Table, useAction } from '../../components/ui';

type FeatureType = Schemas['featureTypeSchema'];

/** Maintenance mode: while on, every change through the admin API is refused and SDKs keep being served. */
function Maintenance() {
  const maintenance = useQuery(queries.maintenance());
  const set = useAction(actions.setMaintenance);
  return (
    <section className="card stack" aria-label="Maintenance mode">
      <h2>Maintenance mode</h2>
      <p className="muted">While it is on, nobody can change flags or settings (only this switch); SDKs keep getting their flags.</p>
      <Loaded query={maintenance} what="maintenance mode">
        {(data) => (
          <div className="row">
            <Switch checked={data.enabled} label="Maintenance mode" disabled={set.isPending} onChange={(enabled) => set.mutate(enabled)} />
            {data.enabled && <span className="badge failed">Changes are refused</span>}
          </div>
        )}
      </Loaded>
      <ErrorMessage error={set.error} />
    </section>
  );
}

/** One type's lifetime, saved when its field is left or Enter is pressed; empty: the type's flags never go stale. */
function LifetimeRow({ type }: { type: FeatureType }) {
  const set = useAction(actions.setFeatureTypeLifetime);
  const save = (raw: string) => {
    const days = raw.trim() === '' ? null : Number(raw);
    if (days === type.lifetimeDays) return;
    set.mutate({ id: type.id, lifetimeDays: days });
  };
  return (
    <tr>
      <td>{type.name}</td>
      <td className="small muted">{type.description}</td>
      <td>
        <input
          type="number"
          min={0}
          aria-label={`Lifetime of ${type.name} flags, in days`}
          placeholder="permanent"
          defaultValue={type.lifetimeDays ?? ''}
          onBlur={(event) => save(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') save(event.currentTarget.value);
          }}
          style={{ width: '9rem' }}
        />
        <ErrorMessage error={set.error} />
      </td>
    </tr>
  );
}

/** How long each type of flag is expected to live: a flag older than its type's lifetime is potentially stale. */
function Lifetimes() {
  const types = useQuery(queries.featureTypes());
  return (
    <section className="card stack" aria-label="Flag type lifetimes">
      <h2>Flag type lifetimes</h2>
      <p className="muted">Days until a flag of each type is potentially stale; leave empty (or 0) for types meant to stay.</p>
      <Loaded query={types} what="the flag types">
        {(data) => (
          <Table label="Flag type lifetimes" columns={['Type', 'What it is for', 'Days']}>
            {data.types.map((type) => (
              <LifetimeRow key={`${type.id}-${type.lifetimeDays}`} type={type} />
            ))}
          </Table>
        )}
      </Loaded>
    </section>
  );
}

const FIGURES: Array<[keyof Schemas['instanceAdminStatsSchema'], string]> = [
  ['users', 'People'],
  ['serviceAccounts', 'Service accounts'],
  ['featureToggles', 'Flags'],
  ['archivedFeatureToggles', 'Archived flags'],
  ['projects', 'Projects'],
  ['environments', 'Environments'],
  ['segments', 'Segments'],
  ['groups', 'Groups'],
];

/** The instance's size, as Unleash's instance statistics count it, with the CSV to hand to whoever asks. */
function Statistics() {
  const statistics = useQuery(queries.instanceStatistics());
  return (
    <section className="card stack" aria-label="Instance statistics">
      <h2>Statistics</h2>
      <Loaded query={statistics} what="the statistics">
        {(data) => (
          <>
            <dl className="figures">
              {FIGURES.map(([key, label]) => (
                <div key={key}>
                  <dt className="muted small">{label}</dt>
                  <dd data-testid={`figure-${key}`}>{String(data[key])}</dd>
                </div>
              ))}
            </dl>
            <p className="small muted">
              Instance {data.instanceId} · Vexil {data.versionOSS} · <a href="/api/admin/instance-admin/statistics/csv">Download as CSV</a>
            </p>
          </>
        )}
      </Loaded>
    </section>
  );
}

export function AdminInstance() {
  return (
    <div className="stack">
      <h1>Instance</h1>
      <Maintenance />
      <Lifetimes />
      <Statistics />
    </div>
  );
}
