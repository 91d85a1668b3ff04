import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { actions, queries, type Schemas } from '../api/queries';
import { SideBySideDiff } from '../components/diff';
import {
  Check,
  ConfirmButton,
  ErrorMessage,
  Field,
  formatDate,
  Loaded,
  OneTimeSecret,
  Pager,
  Table,
  useAction,
  onFormSubmit,
} from '../components/ui';

type Provider = Schemas['addonTypeSchema'];
type Addon = Schemas['addonSchema'];
type AddonBody = Schemas['addonCreateUpdateSchema'];

const list = (value: FormDataEntryValue | null) =>
  String(value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

/** A configuration's form, built from its provider's definition; sensitive parameters read back masked. */
function AddonForm({
  provider,
  addon,
  error,
  saving,
  onSave,
}: {
  provider: Provider;
  addon?: Addon;
  error: unknown;
  saving: boolean;
  onSave: (body: AddonBody) => void;
}) {
  const [events, setEvents] = useState<string[]>(addon?.events ?? []);
  const [eventFilter, setEventFilter] = useState('');
  const shownEvents = (provider.events ?? []).filter((type) => type.includes(eventFilter.trim().toLowerCase()));
  const submit = onFormSubmit((form) => {
    const parameters = Object.fromEntries(
      (provider.parameters ?? [])
        .map((parameter) => [parameter.name, String(form.get(`parameter-${parameter.name}`) ?? '')])
        .filter(([, value]) => value !== ''),
    );
    onSave({
      provider: provider.name,
      description: String(form.get('description')),
      enabled: form.get('enabled') === 'on',
      parameters,
      events,
      projects: list(form.get('projects')),
      environments: list(form.get('environments')),
    });
  });
  return (
    <form className="card stack" onSubmit={submit} aria-label={`${provider.displayName} configuration`}>
      <p className="muted small">{provider.description}</p>
      <div className="grid2">
        {(provider.parameters ?? []).map((parameter) => (
          <Field
            key={parameter.name}
            label={`${parameter.displayName}${parameter.required ? ' *' : ''}`}
            error={error}
            field={`parameters/${parameter.name}`}
            hint={parameter.description}
          >
            {parameter.type === 'textfield' ? (
              <textarea
                name={`parameter-${parameter.name}`}
                defaultValue={addon?.parameters[parameter.name] ?? ''}
                placeholder={parameter.placeholder}
              />
            ) : (
              <input
                name={`parameter-${parameter.name}`}
                // A URL is checked by eye as it is typed, even when it carries a secret (it reads back masked).
                type={parameter.sensitive && parameter.name !== 'url' ? 'password' : 'text'}
                autoComplete="off"
                defaultValue={addon?.parameters[parameter.name] ?? ''}
                placeholder={parameter.placeholder}
                required={parameter.required && !addon}
              />
            )}
          </Field>
        ))}
        <Field label="Description" error={error} field="description">
          <input name="description" defaultValue={addon?.description ?? ''} />
        </Field>
        <Field label="Projects (comma-separated; empty: all)" error={error} field="projects">
          <input name="projects" defaultValue={addon?.projects.join(', ') ?? ''} />
        </Field>
        <Field label="Environments (comma-separated; empty: all)" error={error} field="environments">
          <input name="environments" defaultValue={addon?.environments.join(', ') ?? ''} />
        </Field>
      </div>
      <label className="check">
        <input type="checkbox" name="enabled" defaultChecked={addon?.enabled ?? true} /> Enabled
      </label>
      <details>
        <summary>Events delivered: {events.length === 0 ? 'all' : events.length}</summary>
        <div className="row" style={{ marginTop: '0.5rem' }}>
          <input
            type="search"
            aria-label="Find event types"
            placeholder="Find event types, e.g. strategy"
            value={eventFilter}
            onChange={(event) => setEventFilter(event.target.value)}
          />
          <button type="button" onClick={() => setEvents([...new Set([...events, ...shownEvents])])}>
            Choose the {shownEvents.length} shown
          </button>
          <button type="button" onClick={() => setEvents([])} disabled={events.length === 0}>
            Clear (all events)
          </button>
        </div>
        {shownEvents.length === 0 && <p className="muted small">No event type contains “{eventFilter.trim()}”.</p>}
        <div className="grid2 small" style={{ marginTop: '0.5rem' }}>
          {shownEvents.map((type) => (
            <Check
              key={type}
              checked={events.includes(type)}
              onChange={(on) => setEvents(on ? [...events, type] : events.filter((entry) => entry !== type))}
            >
              {type}
            </Check>
          ))}
        </div>
      </details>
      <ErrorMessage error={error} />
      <div>
        <button className="primary" type="submit" disabled={saving}>
          {addon ? 'Save' : 'Create integration'}
        </button>
      </div>
    </form>
  );
}

export function Integrations() {
  const navigate = useNavigate();
  const addons = useQuery(queries.addons());
  const [providerName, setProviderName] = useState('');
  const [created, setCreated] = useState<{ id: number; signingSecret?: string } | null>(null);
  const create = useAction(actions.createAddon, (addon) => {
    const signingSecret = (addon as { signingSecret?: string }).signingSecret;
    // The form goes: left filled, it invites creating the same integration twice.
    setProviderName('');
    if (signingSecret) setCreated({ id: addon.id, signingSecret });
    else navigate(`/integrations/${addon.id}`);
  });
  return (
    <Loaded query={addons} what="integrations">
      {(data) => {
        const provider = data.providers.find((entry) => entry.name === providerName);
        return (
          <div>
            <h1>Integrations</h1>
            {data.addons.length === 0 ? (
              <p className="muted">No integrations yet.</p>
            ) : (
              <Table label="Integrations" columns={['Integration', 'Provider', 'State', 'Events', 'Created']}>
                {data.addons.map((addon) => (
                  <tr key={addon.id}>
                    <td>
                      <Link to={`/integrations/${addon.id}`}>{addon.description || `${addon.provider} #${addon.id}`}</Link>
                    </td>
                    <td>{data.providers.find((entry) => entry.name === addon.provider)?.displayName ?? addon.provider}</td>
                    <td>
                      <span className={`badge ${addon.enabled ? 'on' : 'off'}`}>{addon.enabled ? 'enabled' : 'disabled'}</span>
                    </td>
                    <td className="small">{addon.events.length === 0 ? 'all' : addon.events.join(', ')}</td>
                    <td className="small">{formatDate(addon.createdAt)}</td>
                  </tr>
                ))}
              </Table>
            )}
            <h2>New integration</h2>
            {created?.signingSecret && (
              <div className="stack">
                <OneTimeSecret
                  label="The signing secret of the new webhook: receivers verify the webhook-signature header with it."
                  secret={created.signingSecret}
                />
                <div>
                  <Link className="button" to={`/integrations/${created.id}`}>
                    Open the integration
                  </Link>
                </div>
              </div>
            )}
            <Field label="Provider">
              <select value={providerName} onChange={(event) => setProviderName(event.target.value)}>
                <option value="">Choose…</option>
                {data.providers.map((entry) => (
                  <option key={entry.name} value={entry.name}>
                    {entry.displayName}
                  </option>
                ))}
              </select>
            </Field>
            {provider && (
              <AddonForm
                key={provider.name}
                provider={provider}
                error={create.error}
                saving={create.isPending}
                onSave={(body) => create.mutate(body)}
              />
            )}
          </div>
        );
      }}
    </Loaded>
  );
}

const PAGE_SIZE = 20;

function DeliveryLog({ addonId }: { addonId: string }) {
  const [offset, setOffset] = useState(0);
  const deliveries = useQuery({ ...queries.integrationEvents(addonId, { offset, limit: PAGE_SIZE }), refetchInterval: 5_000 });
  const [redelivered, setRedelivered] = useState<string | null>(null);
  const redeliver = useAction(actions.redeliver, (answer) =>
    setRedelivered(`Event #${answer.eventId} is delivered again (delivery ${answer.deliveryId}); its attempts appear here.`),
  );
  return (
    <Loaded query={deliveries} what="deliveries">
      {(data) => (
        <div>
          {redelivered && <p className="success">{redelivered}</p>}
          <ErrorMessage error={redeliver.error} />
          {data.integrationEvents.length === 0 && <p className="muted">Nothing delivered yet.</p>}
          <div className="card">
            {data.integrationEvents.map((entry) => (
              <article key={entry.id} className="event" data-testid="delivery">
                <div className="spread">
                  <span>
                    <span className={`badge ${entry.state}`} data-testid="delivery-state">
                      {entry.state}
                    </span>{' '}
                    {entry.details.redelivery === true && <span className="badge">redelivery</span>}{' '}
                    <strong>{entry.event.label ?? entry.event.type}</strong> <span className="muted small">event #{entry.event.id}</span>
                  </span>
                  <span className="row">
                    <span className="muted small">{formatDate(entry.createdAt)}</span>
                    <button
                      type="button"
                      onClick={() => redeliver.mutate({ id: addonId, integrationEventId: entry.id })}
                      disabled={redeliver.isPending}
                    >
                      Redeliver
                    </button>
                  </span>
                </div>
                <div className="small" data-testid="delivery-outcome">
                  {entry.stateDetails}
                </div>
                <details>
                  <summary className="small">What was sent, and the event</summary>
                  <h3>Details</h3>
                  <pre className="secret">{JSON.stringify(entry.details, null, 2)}</pre>
                  <h3>Event</h3>
                  <SideBySideDiff before={entry.event.preData} after={entry.event.data} />
                </details>
              </article>
            ))}
          </div>
          <Pager offset={offset} limit={PAGE_SIZE} shown={data.integrationEvents.length} onChange={setOffset} />
        </div>
      )}
    </Loaded>
  );
}

export function IntegrationPage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const addons = useQuery(queries.addons());
  const addon = useQuery({ ...queries.addon(id), refetchInterval: 5_000 });
  const [secret, setSecret] = useState<string | null>(null);
  const update = useAction(actions.updateAddon);
  const remove = useAction(actions.deleteAddon, () => navigate('/integrations'));
  const rotate = useAction(actions.rotateSigningSecret, (answer) => setSecret(answer.signingSecret));
  return (
    <Loaded query={addon} what="the integration">
      {(data) => {
        const provider = addons.data?.providers.find((entry) => entry.name === data.provider);
        return (
          <div>
            <p className="small">
              <Link to="/integrations">Integrations</Link> /
            </p>
            <div className="spread">
              <h1>{data.description || `${provider?.displayName ?? data.provider} #${data.id}`}</h1>
              <ConfirmButton question="Delete this integration? Its delivery log goes with it." onConfirm={() => remove.mutate(id)}>
                Delete
              </ConfirmButton>
            </div>
            <ErrorMessage error={remove.error} />
            <p className="muted">
              Pending deliveries: {data.deliveries.pending} · last success {formatDate(data.deliveries.lastSuccessAt)} · last failure{' '}
              {formatDate(data.deliveries.lastFailureAt)}
            </p>
            <h2>Delivery log</h2>
            <DeliveryLog addonId={id} />
            <h2>Configuration</h2>
            {provider && (
              <AddonForm
                provider={provider}
                addon={data}
                error={update.error}
                saving={update.isPending}
                onSave={(body) => update.mutate({ id, body })}
              />
            )}
            {update.isSuccess && <p className="success">Saved.</p>}
            {data.provider === 'webhook' && (
              <div className="card stack">
                <h3 style={{ margin: 0 }}>Signing secret</h3>
                <p className="small muted">
                  Created {formatDate(data.signingSecretCreatedAt)}. A new secret signs alongside the old one for 24 hours, so receivers can
                  switch.
                </p>
                {secret && <OneTimeSecret label="The new signing secret" secret={secret} />}
                <ErrorMessage error={rotate.error} />
                <div>
                  <button type="button" onClick={() => rotate.mutate(id)}>
                    Rotate signing secret
                  </button>
                </div>
              </div>
            )}
          </div>
        );
      }}
    </Loaded>
  );
}
