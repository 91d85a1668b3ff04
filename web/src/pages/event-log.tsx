import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { queries } from '../api/queries';
import { EventList } from '../components/events';
import { ErrorMessage, Field, Loading, Pager, onFormSubmit } from '../components/ui';

const PAGE_SIZE = 25;
const FILTERS = ['query', 'type', 'project', 'feature', 'createdBy', 'via', 'from', 'to'] as const;

/** `IS:a` for one value, `IS_ANY_OF:a,b` for several, as the event search takes them (spec 4.2). */
function toFilter(values: string): string | undefined {
  const list = values
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);
  if (list.length === 0) return undefined;
  return list.length === 1 ? `IS:${list[0]}` : `IS_ANY_OF:${list.join(',')}`;
}
const fromFilter = (value: string | null) => (value ?? '').replace(/^(IS|IS_ANY_OF):/, '');

export function EventLog() {
  const [search, setSearch] = useSearchParams();
  const creators = useQuery(queries.eventCreators());
  const addons = useQuery(queries.addons());
  const projects = useQuery(queries.projects());
  const eventTypes = addons.data?.providers.find((provider) => provider.name === 'webhook')?.events ?? [];
  const offset = Number(search.get('offset') ?? 0);
  const query = {
    ...Object.fromEntries(FILTERS.filter((name) => search.get(name)).map((name) => [name, search.get(name)!])),
    offset: String(offset),
    limit: String(PAGE_SIZE),
  };
  const events = useQuery({ ...queries.events(query), placeholderData: (previous) => previous });

  const submit = onFormSubmit((form) => {
    const next = new URLSearchParams();
    const text = String(form.get('query')).trim();
    if (text) next.set('query', text);
    const via = String(form.get('via')).trim();
    if (via) next.set('via', via);
    for (const name of ['type', 'project', 'feature', 'createdBy'] as const) {
      const filter = toFilter(String(form.get(name)));
      if (filter) next.set(name, filter);
    }
    for (const name of ['from', 'to'] as const) if (form.get(name)) next.set(name, `IS:${String(form.get(name))}`);
    setSearch(next);
  });

  return (
    <div>
      <h1>Event log</h1>
      <form className="card stack" onSubmit={submit} aria-label="Event filters" key={search.toString()}>
        <div className="grid2">
          <Field label="Text">
            <input name="query" type="search" defaultValue={search.get('query') ?? ''} placeholder="Matched against the event's data" />
          </Field>
          <Field label="Type">
            <input name="type" list="event-types" defaultValue={fromFilter(search.get('type'))} placeholder="feature-created, …" />
          </Field>
          <Field label="Project">
            <input name="project" list="event-projects" defaultValue={fromFilter(search.get('project'))} />
          </Field>
          <Field label="Flag">
            <input name="feature" defaultValue={fromFilter(search.get('feature'))} />
          </Field>
          <Field label="Created by">
            <select name="createdBy" defaultValue={fromFilter(search.get('createdBy'))}>
              <option value="">Anyone</option>
              {(creators.data ?? []).map((creator) => (
                <option key={creator.id} value={creator.id}>
                  {creator.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Via agent">
            <input name="via" type="search" defaultValue={search.get('via') ?? ''} placeholder="Claude Code, Cursor, …" />
          </Field>
          <Field label="From">
            <input name="from" type="date" defaultValue={fromFilter(search.get('from'))} />
          </Field>
          <Field label="To">
            <input name="to" type="date" defaultValue={fromFilter(search.get('to'))} />
          </Field>
        </div>
        <datalist id="event-types">
          {eventTypes.map((type) => (
            <option key={type} value={type} />
          ))}
        </datalist>
        <datalist id="event-projects">
          {(projects.data?.projects ?? []).map((project) => (
            <option key={project.id} value={project.id} />
          ))}
        </datalist>
        <p className="muted small">Several values, comma-separated, match any of them.</p>
        <div className="row">
          <button className="primary" type="submit">
            Search
          </button>
          <button type="button" onClick={() => setSearch(new URLSearchParams())}>
            Clear
          </button>
        </div>
      </form>
      {events.error ? (
        <ErrorMessage error={events.error} />
      ) : !events.data ? (
        <Loading what="events" />
      ) : (
        <>
          <p className="muted" data-testid="event-total">
            {events.data.total} events
          </p>
          <EventList events={events.data.events} />
          <Pager
            offset={offset}
            limit={PAGE_SIZE}
            total={events.data.total}
            onChange={(next) => {
              const params = new URLSearchParams(search);
              params.set('offset', String(next));
              setSearch(params);
            }}
          />
        </>
      )}
    </div>
  );
}
