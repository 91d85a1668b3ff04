import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { actions, queries } from '../../api/queries';
import { Check, ErrorMessage, formatDate, Loading, Pager, useAction } from '../../components/ui';
import { ExportPanel, ImportPanel } from './transfer-panel';

const IS = ['IS', 'IS_NOT', 'IS_ANY_OF', 'IS_NONE_OF'];
const INCLUDE = ['INCLUDE', 'DO_NOT_INCLUDE', 'INCLUDE_ALL_OF', 'INCLUDE_ANY_OF', 'EXCLUDE_IF_ANY_OF', 'EXCLUDE_ALL'];

/** The search's filters (spec 4.7), each kept in the URL as the API takes it: `OPERATOR:value[,value]`. */
const FILTERS: Record<string, { label: string; operators: string[]; hint: string; date?: boolean }> = {
  project: { label: 'Project', operators: IS, hint: 'project ids, comma-separated' },
  type: { label: 'Type', operators: IS, hint: 'release, experiment, operational, kill-switch, permission, sunset' },
  state: { label: 'State', operators: IS, hint: 'active, stale, potentially-stale' },
  tag: { label: 'Tag', operators: INCLUDE, hint: 'type:value, comma-separated' },
  segment: { label: 'Segment', operators: INCLUDE, hint: 'segment names, comma-separated' },
  createdBy: { label: 'Created by', operators: IS, hint: 'user ids, comma-separated' },
  createdAt: { label: 'Created', operators: ['IS_BEFORE', 'IS_ON_OR_AFTER'], hint: 'a date', date: true },
  lifecycle: { label: 'Lifecycle', operators: IS, hint: 'initial, pre-live, live, completed, archived' },
  health: { label: 'Health', operators: IS, hint: 'potentially-stale, never-seen, unused-in-production, ready-to-remove' },
  favorite: { label: 'Favorite', operators: ['IS', 'IS_NOT'], hint: 'true or false' },
  codeReferences: { label: 'Code references', operators: ['IS', 'IS_NOT'], hint: 'true: read by pushed code; false: not' },
  removalReadiness: {
    label: 'Removal readiness',
    operators: IS,
    hint: 'keep, ready-to-remove, ready-to-remove-keep-on, ready-to-remove-keep-off, ready-to-archive',
  },
};
const PAGE_SIZE = 25;

function splitFilter(value: string): [string, string] {
  const colon = value.indexOf(':');
  return colon < 0 ? ['', value] : [value.slice(0, colon), value.slice(colon + 1)];
}

type Suggestion = { value: string; label?: string };

/** What each filter's value can be, offered as the user types: projects, tags, segments, creators… */
function useSuggestions(): Record<string, Suggestion[]> {
  const fixed = (values: string[]) => values.map((value) => ({ value }));
  const projects = useQuery(queries.projects());
  const tags = useQuery(queries.tags());
  const segments = useQuery(queries.segments());
  const creators = useQuery(queries.eventCreators());
  return {
    project: (projects.data?.projects ?? []).map((project) => ({ value: project.id, label: project.name })),
    type: fixed(['release', 'experiment', 'operational', 'kill-switch', 'permission', 'sunset']),
    state: fixed(['active', 'stale', 'potentially-stale']),
    tag: (tags.data?.tags ?? []).map((tag) => ({ value: `${tag.type}:${tag.value}` })),
    segment: (segments.data?.segments ?? []).map((segment) => ({ value: segment.name })),
    createdBy: (creators.data ?? []).map((creator) => ({ value: String(creator.id), label: creator.name })),
    lifecycle: fixed(['initial', 'pre-live', 'live', 'completed', 'archived']),
    health: fixed(['potentially-stale', 'never-seen', 'unused-in-production', 'ready-to-remove']),
    favorite: fixed(['true', 'false']),
    codeReferences: fixed(['true', 'false']),
    removalReadiness: fixed(['keep', 'ready-to-remove', 'ready-to-remove-keep-on', 'ready-to-remove-keep-off', 'ready-to-archive']),
  };
}

function FilterChip({
  name,
  value,
  suggestions,
  onChange,
  onRemove,
}: {
  name: string;
  value: string;
  suggestions: Suggestion[];
  onChange: (value: string) => void;
  onRemove: () => void;
}) {
  const filter = FILTERS[name]!;
  const [operator, values] = splitFilter(value);
  const [draft, setDraft] = useState(values);
  const commit = (nextOperator: string, nextValues: string) => onChange(`${nextOperator}:${nextValues}`);
  return (
    <span className="chip" data-testid={`filter-${name}`}>
      <strong>{filter.label}</strong>
      <select aria-label={`${filter.label} operator`} value={operator} onChange={(event) => commit(event.target.value, draft)}>
        {filter.operators.map((op) => (
          <option key={op}>{op}</option>
        ))}
      </select>
      <input
        aria-label={`${filter.label} values`}
        type={filter.date ? 'date' : 'text'}
        list={filter.date ? undefined : `suggestions-${name}`}
        placeholder={filter.hint}
        value={draft}
        size={Math.max(10, draft.length + 1)}
        onChange={(event) => setDraft(event.target.value)}
        onBlur={() => draft !== values && commit(operator, draft)}
        onKeyDown={(event) => event.key === 'Enter' && commit(operator, draft)}
      />
      <datalist id={`suggestions-${name}`}>
        {suggestions.map((suggestion) => (
          <option key={suggestion.value} value={suggestion.value} label={suggestion.label} />
        ))}
      </datalist>
      <button type="button" aria-label={`Remove the ${filter.label} filter`} onClick={onRemove}>
        ×
      </button>
    </span>
  );
}

function StatusChip({
  value,
  environments,
  onChange,
  onRemove,
}: {
  value: string;
  environments: string[];
  onChange: (value: string) => void;
  onRemove: () => void;
}) {
  const [environment, status] = splitFilter(value);
  return (
    <span className="chip" data-testid="filter-status">
      <strong>Environment</strong>
      <select aria-label="Status environment" value={environment} onChange={(event) => onChange(`${event.target.value}:${status}`)}>
        {environments.map((name) => (
          <option key={name}>{name}</option>
        ))}
      </select>
      <select aria-label="Status" value={status} onChange={(event) => onChange(`${environment}:${event.target.value}`)}>
        <option>enabled</option>
        <option>disabled</option>
      </select>
      <button type="button" aria-label="Remove the environment filter" onClick={onRemove}>
        ×
      </button>
    </span>
  );
}

export function Flags() {
  const [search, setSearch] = useSearchParams();
  const [text, setText] = useState(search.get('query') ?? '');
  const suggestions = useSuggestions();
  const environments = useQuery(queries.environments());
  const environmentNames = (environments.data?.environments ?? [])
    .filter((environment) => environment.enabled)
    .map((environment) => environment.name);

  // A chip just added has an operator and no value yet: it filters nothing until the value is typed.
  const parameters = Object.fromEntries(
    [...search.entries()].filter(([key, value]) => key !== 'status' && !(key in FILTERS && splitFilter(value)[1] === '')),
  );
  const statuses = search.getAll('status');
  const offset = Number(search.get('offset') ?? 0);
  const query = { ...parameters, ...(statuses.length ? { status: statuses } : {}), limit: String(PAGE_SIZE) };
  const results = useQuery({ ...queries.featureSearch(query), placeholderData: (previous) => previous });

  /** Every change of the view goes through the URL and starts again at the first page. */
  const update = (change: (next: URLSearchParams) => void, keepOffset = false) => {
    // From the URL as it is now, not as it was at the last render: two changes in quick succession (a filter
    // committed with Enter, then another added) would otherwise have the second undo the first.
    const next = new URLSearchParams(window.location.search);
    change(next);
    if (!keepOffset) next.delete('offset');
    setSearch(next);
  };
  const setParameter = (name: string, value: string | null) =>
    update((next) => (value === null ? next.delete(name) : next.set(name, value)));
  const sortBy = search.get('sortBy') ?? 'createdAt';
  const sortOrder = search.get('sortOrder') ?? 'asc';
  const sortHeader = (field: string, label: string) => (
    <th scope="col" aria-sort={sortBy === field ? (sortOrder === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button
        type="button"
        className="sort"
        onClick={() =>
          update((next) => {
            next.set('sortBy', field);
            next.set('sortOrder', sortBy === field && sortOrder === 'asc' ? 'desc' : 'asc');
          })
        }
      >
        {label} {sortBy === field ? (sortOrder === 'asc' ? '▲' : '▼') : ''}
      </button>
    </th>
  );
  const favorite = useAction(actions.setFavorite);
  const [transferOpen, setTransferOpen] = useState(false);
  const [selected, setSelected] = useState<string[]>([]);
  const toggleSelected = (name: string) =>
    setSelected((current) => (current.includes(name) ? current.filter((entry) => entry !== name) : [...current, name]));
  const unused = Object.keys(FILTERS).filter((name) => !search.has(name));

  return (
    <div>
      <div className="spread">
        <h1>Flags</h1>
        <div className="row">
          <button type="button" aria-expanded={transferOpen} onClick={() => setTransferOpen(!transferOpen)}>
            Export / import
          </button>
          <Link className="button primary" to="/admin/projects">
            New flag in a project…
          </Link>
        </div>
      </div>
      {transferOpen && (
        <div className="columns">
          <ExportPanel selected={selected} />
          <ImportPanel />
        </div>
      )}
      <div className="card stack">
        {/* biome-ignore lint/a11y/useSemanticElements: a form with the search role; the <search> element is too new for every browser we serve */}
        <form
          className="row"
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            setParameter('query', text.trim() || null);
          }}
        >
          <label className="sr-only" htmlFor="flag-search">
            Search flags
          </label>
          <input
            id="flag-search"
            type="search"
            placeholder="Search by name, description or tag"
            value={text}
            onChange={(event) => setText(event.target.value)}
            style={{ flex: 1 }}
          />
          <button type="submit">Search</button>
        </form>
        <section className="chips" aria-label="Filters">
          {Object.keys(FILTERS)
            .filter((name) => search.has(name))
            .map((name) => (
              <FilterChip
                key={name}
                name={name}
                suggestions={suggestions[name] ?? []}
                value={search.get(name)!}
                onChange={(value) => setParameter(name, value)}
                onRemove={() => setParameter(name, null)}
              />
            ))}
          {statuses.map((value, index) => (
            <StatusChip
              key={index}
              value={value}
              environments={environmentNames}
              onChange={(changed) =>
                update((next) => {
                  const current = next.getAll('status');
                  next.delete('status');
                  for (const [at, entry] of current.entries()) next.append('status', at === index ? changed : entry);
                })
              }
              onRemove={() =>
                update((next) => {
                  const current = next.getAll('status');
                  next.delete('status');
                  for (const [at, entry] of current.entries()) if (at !== index) next.append('status', entry);
                })
              }
            />
          ))}
          <select
            aria-label="Add a filter"
            value=""
            onChange={(event) => {
              const name = event.target.value;
              if (name === 'status') update((next) => next.append('status', `${environmentNames[0] ?? 'production'}:enabled`));
              else if (name) setParameter(name, `${FILTERS[name]!.operators[0]}:`);
            }}
          >
            <option value="">+ Add filter</option>
            {unused.map((name) => (
              <option key={name} value={name}>
                {FILTERS[name]!.label}
              </option>
            ))}
            <option value="status">Environment status</option>
          </select>
          <Check
            className="check small"
            checked={search.get('archived') === 'IS:true'}
            onChange={(archived) => setParameter('archived', archived ? 'IS:true' : null)}
          >
            Archived flags
          </Check>
          <Check
            className="check small"
            checked={search.get('favoritesFirst') === 'true'}
            onChange={(favoritesFirst) => setParameter('favoritesFirst', favoritesFirst ? 'true' : null)}
          >
            Favorites first
          </Check>
          {[...search.keys()].some((key) => key !== 'offset') && (
            <button
              type="button"
              className="link small"
              onClick={() => {
                setText('');
                setSearch(new URLSearchParams());
              }}
            >
              Clear all
            </button>
          )}
        </section>
      </div>
      {results.error ? (
        <ErrorMessage error={results.error} />
      ) : !results.data ? (
        <Loading what="flags" />
      ) : (
        <>
          <div className="table-wrap">
            <table aria-label="Flags" aria-busy={results.isFetching}>
              <thead>
                <tr>
                  <th scope="col">
                    <span className="sr-only">Selected for export</span>
                  </th>
                  <th scope="col">
                    <span className="sr-only">Favorite</span>
                  </th>
                  {sortHeader('name', 'Name')}
                  {sortHeader('type', 'Type')}
                  {sortHeader('project', 'Project')}
                  {environmentNames.map((name) => (
                    <th key={name} scope="col">
                      {name}
                    </th>
                  ))}
                  <th scope="col">Lifecycle</th>
                  <th scope="col">Tags</th>
                  {sortHeader('createdAt', 'Created')}
                </tr>
              </thead>
              <tbody>
                {results.data.features.map((flag) => (
                  <tr key={flag.name} data-testid="flag-row">
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Select ${flag.name} for export`}
                        checked={selected.includes(flag.name)}
                        onChange={() => toggleSelected(flag.name)}
                      />
                    </td>
                    <td>
                      <button
                        type="button"
                        className="link"
                        aria-label={flag.favorite ? `Remove ${flag.name} from favorites` : `Add ${flag.name} to favorites`}
                        aria-pressed={flag.favorite}
                        onClick={() => favorite.mutate({ projectId: flag.project, featureName: flag.name, favorite: !flag.favorite })}
                      >
                        {flag.favorite ? '★' : '☆'}
                      </button>
                    </td>
                    <td>
                      <Link to={`/projects/${encodeURIComponent(flag.project)}/flags/${encodeURIComponent(flag.name)}`}>{flag.name}</Link>
                      {flag.stale && <span className="badge stale"> stale</span>}
                      {flag.archivedAt && <span className="badge"> archived</span>}
                      {flag.description && <div className="muted small">{flag.description}</div>}
                    </td>
                    <td>{flag.type}</td>
                    <td>
                      <Link to={`/projects/${encodeURIComponent(flag.project)}`}>{flag.project}</Link>
                    </td>
                    {environmentNames.map((name) => {
                      const environment = flag.environments.find((entry) => entry.name === name);
                      return (
                        <td key={name}>
                          {environment ? (
                            <span className={`badge ${environment.enabled ? 'on' : 'off'}`}>{environment.enabled ? 'on' : 'off'}</span>
                          ) : (
                            <span className="muted">—</span>
                          )}
                        </td>
                      );
                    })}
                    <td>{flag.lifecycle?.stage ?? '—'}</td>
                    <td>
                      {flag.tags.map((tag) => (
                        <span key={`${tag.type}:${tag.value}`} className="badge">
                          {tag.type}:{tag.value}
                        </span>
                      ))}
                    </td>
                    <td className="small">{formatDate(flag.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {results.data.features.length === 0 && (
            <p className="muted">
              No flag matches these filters. New here? <Link to="/connect">Connect an SDK</Link> and create a flag in a project.
            </p>
          )}
          <ErrorMessage error={favorite.error} />
          <Pager
            offset={offset}
            limit={PAGE_SIZE}
            total={results.data.total}
            onChange={(next) => update((params) => params.set('offset', String(next)), true)}
          />
        </>
      )}
    </div>
  );
}
