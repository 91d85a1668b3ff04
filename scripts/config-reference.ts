/**
 * The configuration reference, docs/configuration.md, written from the settings below: `npm run docs:config`.
 * A test (test/unit/config-reference.test.ts) gives each setting's example to src/config.ts's loaders and fails when
 * they read a variable that is not here, or one here is never read, and when the page differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EDGE_SETTINGS_NOT_SUPPORTED } from '../src/config.js';

export interface Setting {
  name: string;
  /** As shown; empty when there is none. */
  default: string;
  /** Markdown, one line. */
  meaning: string;
  /** A valid value: the test sets it to see that the setting is read (and that the example is a working one). */
  example: string;
}

/** The server's settings (`npm start`), read by `loadConfig`. */
export const SERVER_SETTINGS: Setting[] = [
  { name: 'PORT', default: '4242', meaning: 'HTTP port (`0` picks a free one)', example: '4242' },
  { name: 'HOST', default: '0.0.0.0', meaning: 'interface to listen on', example: '127.0.0.1' },
  {
    name: 'DATABASE_URL',
    default: '',
    meaning: '`postgres://user:password@host:5432/db`: use PostgreSQL instead of the embedded database',
    example: 'postgres://vexil:secret@db.internal:5432/vexil',
  },
  {
    name: 'DATABASE_POOL_SIZE',
    default: '10',
    meaning:
      'connections per instance for requests when `DATABASE_URL` is set; background workers (deliveries, retention, the change-request scheduler) have 2 more of their own, plus two for LISTEN',
    example: '20',
  },
  {
    name: 'DATABASE_LISTEN_URL',
    default: '',
    meaning:
      'a direct connection to PostgreSQL for `LISTEN` when `DATABASE_URL` goes through a pooler in transaction mode, where `LISTEN` hears nothing (see "Connection poolers and managed PostgreSQL")',
    example: 'postgres://vexil:secret@db.internal:5432/vexil',
  },
  {
    name: 'DATABASE_CHANGE_POLL_MS',
    default: '1000',
    meaning: 'when `LISTEN` hears nothing: how often each instance reads the event log for changes other instances made (100–60000)',
    example: '500',
  },
  {
    name: 'DATABASE_WAIT_SECONDS',
    default: '60',
    meaning:
      'how long start-up keeps trying a PostgreSQL that does not answer yet (0–3600), waiting 0.25, 0.5, 1, 2, 4, 5, 5… s between tries and logging each at `warn`',
    example: '120',
  },
  {
    name: 'DATA_DIR',
    default: './data',
    meaning:
      'where the embedded database keeps its files (ignored with `DATABASE_URL`); relative to the directory Vexil starts in, so a start logs the absolute path and warns when it creates a new database there',
    example: '/var/lib/vexil',
  },
  {
    name: 'INIT_ADMIN_API_TOKENS',
    default: '',
    meaning:
      'comma-separated admin tokens `*:*.<secret>` (secret: 16+ URL-safe characters) created at start-up if missing, as Unleash reads them',
    example: '*:*.a-long-random-admin-secret',
  },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; logs are JSON lines (pino)',
    example: 'warn',
  },
  {
    name: 'BASE_URL',
    default: 'http://localhost:PORT',
    meaning: 'the public URL; `https://` makes the session cookie `Secure`',
    example: 'https://flags.example.com',
  },
  { name: 'SESSION_TTL_HOURS', default: '48', meaning: 'how long a login session lasts', example: '12' },
  {
    name: 'MCP_TOKEN_TTL_HOURS',
    default: '24',
    meaning: "how long a token a person grants an agent through MCP's sign-in (OAuth) works, 1 to 720",
    example: '8',
  },
  {
    name: 'FRONTEND_API_ORIGINS',
    default: '*',
    meaning:
      'comma-separated origins (`https://app.example.com`) whose pages may call the frontend API, until an admin sets them (`POST /api/admin/ui-config/cors`)',
    example: 'https://app.example.com',
  },
  {
    name: 'READ_TIMEOUT_MS',
    default: '10000',
    meaning: 'on PostgreSQL, how long one search may run before it is stopped (503); 100–600000',
    example: '5000',
  },
  {
    name: 'INTEGRATIONS_ALLOW_PRIVATE_NETWORKS',
    default: 'false',
    meaning: '`true` lets integrations call loopback, private, link-local and metadata addresses (refused otherwise)',
    example: 'true',
  },
  {
    name: 'INTEGRATIONS_DELIVERY_TIMEOUT_MS',
    default: '10000',
    meaning: 'how long one delivery attempt may take, connecting and answering included (100–300000)',
    example: '5000',
  },
  {
    name: 'INTEGRATIONS_MAX_ATTEMPTS',
    default: '5',
    meaning: 'attempts per delivery before it is given up (1–20); retries wait 1, 2, 4, 8… minutes (at most an hour)',
    example: '8',
  },
  { name: 'INTEGRATIONS_RETENTION_DAYS', default: '30', meaning: 'how long integration events are kept (1–3650)', example: '90' },
  {
    name: 'CLIENT_NEW_APPLICATIONS_PER_MINUTE',
    default: '60',
    meaning:
      'new applications one SDK token may register per minute, per instance (1–100000); beyond, registration answers 429 with `Retry-After`',
    example: '120',
  },
  {
    name: 'CLIENT_APPLICATIONS_MAX',
    default: '10000',
    meaning:
      'applications Vexil keeps in all (1–10000000); beyond, a new application (registered or first seen in a usage report) is a 429 until unseen ones are forgotten',
    example: '50000',
  },
  {
    name: 'SDK_REPORTS_HELD_MAX_MB',
    default: '64',
    meaning:
      'SDK registrations and metrics one instance holds in memory while PostgreSQL does not answer, written when it answers again; past it a report gets a 503 with `Retry-After`',
    example: '128',
  },
  {
    name: 'EMAIL_HOST',
    default: '',
    meaning:
      'the SMTP server password reset emails go through, named as Unleash names it; without it, people ask an Admin for a reset link',
    example: 'smtp.example.com',
  },
  { name: 'EMAIL_PORT', default: '587', meaning: "the SMTP server's port", example: '465' },
  {
    name: 'EMAIL_SECURE',
    default: 'false',
    meaning: '`false`: STARTTLS when the server offers it; `true`: TLS from the start',
    example: 'true',
  },
  { name: 'EMAIL_USER', default: '', meaning: 'the SMTP user (with `EMAIL_PASSWORD`)', example: 'vexil' },
  { name: 'EMAIL_PASSWORD', default: '', meaning: "the SMTP user's password (never logged or shown)", example: 'smtp-secret' },
  { name: 'EMAIL_SENDER', default: '', meaning: 'the address the emails come from', example: 'flags@example.com' },
  {
    name: 'EDGE_MASTER_SECRET',
    default: '',
    meaning:
      "at least 32 random characters: the key edge clients' secrets and the tokens `POST /edge/issue-token` issues are derived from (neither is stored); without it no edge client can be made",
    example: '0123456789abcdef0123456789abcdef',
  },
  {
    name: 'CLIENT_INSTANCE_RETENTION_HOURS',
    default: '48',
    meaning: 'an SDK instance not seen for this long is forgotten (1–87600)',
    example: '24',
  },
  {
    name: 'CLIENT_APPLICATION_RETENTION_DAYS',
    default: '30',
    meaning: 'an application none of whose SDKs registered for this long is forgotten (1–3650)',
    example: '60',
  },
  {
    name: 'IMPACT_METRICS_SERIES_PER_APPLICATION',
    default: '100',
    meaning: 'distinct impact metric series (name and label values) one application may have (1–10000)',
    example: '200',
  },
  {
    name: 'IMPACT_METRICS_SERIES_TOTAL',
    default: '10000',
    meaning: 'impact metric series of all applications together (1–1000000)',
    example: '20000',
  },
  { name: 'IMPACT_METRICS_RETENTION_DAYS', default: '7', meaning: 'how long impact metrics are kept, per minute (1–90)', example: '14' },
  {
    name: 'EXPERIMENT_EVENTS_PER_MINUTE',
    default: '600000',
    meaning: 'exposures and tracked events one SDK token may send per minute, together; past it a 429 (see [Experiments](experiments.md))',
    example: '100000',
  },
  {
    name: 'EXPERIMENT_EMBEDDED_EVENTS_MAX',
    default: '1000000',
    meaning:
      'on the embedded database only: the tracked events it keeps at most; past it the track endpoints answer 503 and say to move to PostgreSQL',
    example: '200000',
  },
  {
    name: 'EXPERIMENT_EVENT_RETENTION_DAYS',
    default: '90',
    meaning: 'how long tracked events are kept (7–3650): longer than any conversion window plus the CUPED lookback',
    example: '45',
  },
  {
    name: 'EXPERIMENT_ANALYSIS_TIMEOUT_MS',
    default: '60000',
    meaning: "how long one experiment's analysis may run on PostgreSQL before it is cancelled (1000–3600000)",
    example: '120000',
  },
  {
    name: 'OIDC_ISSUER',
    default: '',
    meaning:
      'the OpenID Connect provider\'s issuer URL (`https://`; `http://` only on localhost): turns on "Sign in with …" (see [Company sign-in](sso-and-scim.md#company-sign-in-openid-connect))',
    example: 'https://login.example.com',
  },
  {
    name: 'OIDC_CLIENT_ID',
    default: '',
    meaning: 'the client id Vexil is registered under at the provider (required with `OIDC_ISSUER`)',
    example: 'vexil',
  },
  {
    name: 'OIDC_CLIENT_SECRET',
    default: '',
    meaning: 'its secret (`client_secret_post`); without one Vexil signs in as a public client, with PKCE',
    example: 'oidc-client-secret',
  },
  {
    name: 'OIDC_REDIRECT_URI',
    default: 'BASE_URL/auth/oidc/callback',
    meaning: 'where the provider sends the browser back; register it at the provider',
    example: 'https://flags.example.com/auth/oidc/callback',
  },
  {
    name: 'OIDC_SCOPES',
    default: 'openid email profile',
    meaning: 'scopes asked for; add the one that puts groups in the ID token (often `groups`)',
    example: 'openid email profile groups',
  },
  {
    name: 'OIDC_GROUPS_CLAIM',
    default: 'groups',
    meaning: "the ID token claim listing the person's groups, matched against groups' SSO names",
    example: 'roles',
  },
  {
    name: 'OIDC_DEFAULT_ROLE',
    default: 'Viewer',
    meaning: "the root role of a person's user made at their first sign-in (1)",
    example: 'Editor',
  },
  {
    name: 'OIDC_EMAIL_DOMAINS',
    default: '',
    meaning: "comma-separated email domains the provider's people must have; empty lets any in (1)",
    example: 'example.com',
  },
  {
    name: 'OIDC_AUTO_CREATE',
    default: 'true',
    meaning: '`false`: a person the provider signs in must already have a user (1)',
    example: 'false',
  },
  {
    name: 'OIDC_NAME',
    default: "the issuer's host",
    meaning: 'what the sign-in button calls the provider ("Sign in with …")',
    example: 'Okta',
  },
  {
    name: 'OIDC_ONLY',
    default: 'false',
    meaning: '`true` turns password sign-in off (tokens keep working); needs OpenID Connect or SAML',
    example: 'true',
  },
  {
    name: 'SAML_METADATA_URL',
    default: '',
    meaning:
      'the SAML identity provider\'s metadata URL (`https://`; `http://` only on localhost): turns on "Sign in with …" by SAML (see [Company sign-in (SAML 2.0)](sso-and-scim.md#company-sign-in-saml-2-0))',
    example: 'https://idp.example.com/metadata',
  },
  {
    name: 'SAML_ENTITY_ID',
    default: 'BASE_URL/auth/saml/metadata',
    meaning: "Vexil's entity id: the audience assertions must name",
    example: 'https://flags.example.com/auth/saml/metadata',
  },
  {
    name: 'SAML_GROUPS_ATTRIBUTE',
    default: 'groups',
    meaning: "the assertion attribute listing the person's groups, matched against groups' SSO names",
    example: 'memberOf',
  },
  { name: 'SAML_EMAIL_ATTRIBUTE', default: 'email', meaning: 'the attribute with the email (else an email NameID)', example: 'mail' },
  { name: 'SAML_NAME_ATTRIBUTE', default: 'name', meaning: "the attribute with the person's name", example: 'displayName' },
  { name: 'SAML_NAME', default: "the metadata's host", meaning: 'what the sign-in button calls the SAML provider', example: 'Entra ID' },
  { name: 'SAML_DEFAULT_ROLE', default: 'Viewer', meaning: 'as `OIDC_DEFAULT_ROLE`, for the people SAML brings (1)', example: 'Editor' },
  { name: 'SAML_AUTO_CREATE', default: 'true', meaning: 'as `OIDC_AUTO_CREATE`, for the people SAML brings (1)', example: 'false' },
  { name: 'SAML_EMAIL_DOMAINS', default: '', meaning: 'as `OIDC_EMAIL_DOMAINS`, for the people SAML brings (1)', example: 'example.com' },
];

/** Vexil Edge's settings (`npm run edge`), read by `loadEdgeConfig`: Unleash Edge's names. */
export const EDGE_SETTINGS: Setting[] = [
  {
    name: 'UPSTREAM_URL',
    default: '',
    meaning:
      'the Vexil (or Unleash, or another edge) the edge follows, its base URL with or without `/api`; required unless `BOOTSTRAP_FILE` is set',
    example: 'https://flags.example.com',
  },
  {
    name: 'TOKENS',
    default: '',
    meaning:
      'comma-separated client tokens whose flags are followed from the start (strict mode: the edge serves tokens within their scopes); empty: dynamic mode, each token learnt from the upstream when an SDK first brings it',
    example: 'default:production.edge-client-secret',
  },
  { name: 'PORT', default: '3063', meaning: 'HTTP port (`0` picks a free one)', example: '3063' },
  {
    name: 'INTERFACE',
    default: '',
    meaning: "interface to listen on (Unleash Edge's name; `HOST` is read when it is not set)",
    example: '0.0.0.0',
  },
  { name: 'HOST', default: '0.0.0.0', meaning: 'interface to listen on, when `INTERFACE` is not set', example: '0.0.0.0' },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    meaning: "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent` (Unleash Edge's `RUST_LOG`)",
    example: 'warn',
  },
  { name: 'LOG_FORMAT', default: 'json', meaning: '`json` only: the edge logs JSON lines', example: 'json' },
  {
    name: 'BACKUP_FOLDER',
    default: '',
    meaning: 'where the configuration is written after each change, and read at a start while the upstream is away',
    example: '/var/lib/vexil-edge',
  },
  {
    name: 'REDIS_URL',
    default: '',
    meaning: '`redis://[user:password@]host:port[/db]` (`rediss://` for TLS): the backup in one Redis key every edge sharing it reads',
    example: 'redis://cache.internal:6379',
  },
  {
    name: 'FEATURES_REFRESH_INTERVAL_SECONDS',
    default: '15',
    meaning: 'how often the flags are asked for when the upstream has no stream to follow (1–86400)',
    example: '30',
  },
  {
    name: 'TOKEN_REVALIDATION_INTERVAL_SECONDS',
    default: '3600',
    meaning: 'how often the tokens served are checked with the upstream; one it no longer knows stops working (1–86400)',
    example: '600',
  },
  {
    name: 'METRICS_INTERVAL_SECONDS',
    default: '60',
    meaning: 'how often SDK usage gathered at the edge is sent upstream (1–86400)',
    example: '30',
  },
  { name: 'UPSTREAM_REQUEST_TIMEOUT', default: '5', meaning: 'seconds one request to the upstream may take (1–600)', example: '10' },
  { name: 'EDGE_REQUEST_TIMEOUT', default: '5', meaning: "seconds an SDK's request may take to arrive whole (1–600)", example: '10' },
  { name: 'EDGE_KEEPALIVE_TIMEOUT', default: '5', meaning: 'seconds an idle connection of an SDK stays open (1–600)', example: '15' },
  {
    name: 'APP_NAME',
    default: 'vexil-edge',
    meaning: 'the name the edge gives itself in its requests to the upstream',
    example: 'edge-eu',
  },
  {
    name: 'INSTANCE_ID',
    default: 'vexil-edge-<HOSTNAME>',
    meaning: 'the instance id the edge sends the upstream (its host name unless given)',
    example: 'edge-eu-1',
  },
  {
    name: 'HOSTNAME',
    default: '',
    meaning: "the machine's name, as containers set it: the instance id when INSTANCE_ID is not given",
    example: 'edge-7f9c',
  },
  {
    name: 'DISABLE_TOKENS_ENDPOINT',
    default: 'false',
    meaning: '`true` leaves out /internal-backstage/tokens (the tokens the edge serves, their secrets masked)',
    example: 'true',
  },
  {
    name: 'DISABLE_FEATURES_ENDPOINT',
    default: 'false',
    meaning: '`true` leaves out /internal-backstage/features (the flags the edge holds, per environment)',
    example: 'true',
  },
  {
    name: 'DISABLE_METRICS_ENDPOINT',
    default: 'false',
    meaning: '`true` leaves out /internal-backstage/metrics (Prometheus)',
    example: 'true',
  },
  {
    name: 'DISABLE_METRICS_BATCH_ENDPOINT',
    default: 'false',
    meaning: 'taken as Unleash Edge takes it: Vexil Edge has no such endpoint, so nothing changes',
    example: 'true',
  },
  {
    name: 'DISABLE_INSTANCE_DATA_ENDPOINT',
    default: 'false',
    meaning: 'taken as Unleash Edge takes it: Vexil Edge has no such endpoint, so nothing changes',
    example: 'true',
  },
  {
    name: 'STREAMING',
    default: 'false',
    meaning: 'taken for Unleash Edge: streaming is always served to SDKs, whatever it says',
    example: 'true',
  },
  { name: 'DELTA', default: 'false', meaning: 'taken for Unleash Edge: delta is always served to SDKs, whatever it says', example: 'true' },
  {
    name: 'TRUST_PROXY',
    default: 'false',
    meaning: "`true` takes the client's address from `X-Forwarded-For` (the edge stands behind a proxy or load balancer)",
    example: 'true',
  },
  {
    name: 'PRETRUSTED_TOKENS',
    default: '',
    meaning:
      'comma-separated frontend tokens (`<project>:<environment>.<secret>`) or Unleash Proxy keys (`<secret>@<environment>`) served without asking the upstream',
    example: 'default:production.web-frontend-secret',
  },
  {
    name: 'ALLOW_LIST',
    default: '',
    meaning:
      'comma-separated addresses and CIDR ranges that may call the SDK APIs (all when empty); `/internal-backstage/*` stays open to probes',
    example: '10.0.0.0/8',
  },
  { name: 'DENY_LIST', default: '', meaning: 'comma-separated addresses and CIDR ranges that may not', example: '10.0.9.0/24' },
  {
    name: 'BOOTSTRAP_FILE',
    default: '',
    meaning: 'offline mode: a features document (as `/api/client/features` answers) served instead of following an upstream',
    example: '/etc/vexil/features.json',
  },
  {
    name: 'CLIENT_TOKENS',
    default: '',
    meaning: 'offline mode: the client tokens served, taken as given',
    example: 'default:production.offline-client-secret',
  },
  {
    name: 'FRONTEND_TOKENS',
    default: '',
    meaning: 'offline mode: the frontend tokens served, taken as given',
    example: 'default:production.offline-frontend-secret',
  },
  {
    name: 'RELOAD_INTERVAL',
    default: '0',
    meaning: 'offline mode: seconds between readings of `BOOTSTRAP_FILE`; `0` reads it once (0–86400)',
    example: '60',
  },
];

/**
 * OpenTelemetry, for the server and the edge alike. The OpenTelemetry SDK reads the rest of the standard variables
 * itself (the page lists the usual ones).
 */
export const TELEMETRY_SETTINGS: Setting[] = [
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: '',
    meaning:
      'the OTLP collector (`http://collector:4318` for OTLP/HTTP): turns traces and flag evaluation events on; off, nothing of the SDK is loaded',
    example: 'http://collector.internal:4318',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    default: '',
    meaning: 'the collector for traces alone (its whole URL, `…/v1/traces`); turns telemetry on as well',
    example: 'http://collector.internal:4318/v1/traces',
  },
  {
    name: 'OTEL_SERVICE_NAME',
    default: 'vexil',
    meaning: 'the service the traces, events and metrics name (`vexil-edge` by default for the edge)',
    example: 'flags',
  },
  { name: 'OTEL_SDK_DISABLED', default: 'false', meaning: '`true` keeps telemetry off even with an endpoint set', example: 'false' },
  {
    name: 'OTEL_METRICS_EXPORTER',
    default: 'otlp',
    meaning: "`none` keeps Vexil's metrics to the Prometheus endpoint; `otlp` sends them to the collector as well, by the same names",
    example: 'otlp',
  },
  {
    name: 'OTEL_METRIC_EXPORT_INTERVAL',
    default: '60000',
    meaning: 'milliseconds between two exports of the metrics (100–86400000)',
    example: '15000',
  },
  {
    name: 'OTEL_EXPORTER_OTLP_PROTOCOL',
    default: 'http/protobuf',
    meaning: '`http/protobuf`, `http/json` or `grpc`: how every signal reaches the collector',
    example: 'http/json',
  },
  { name: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', default: '', meaning: 'the same, for the metrics alone', example: 'http/protobuf' },
  {
    name: 'FLAG_EVALUATION_EVENTS_RATIO',
    default: '0.01',
    meaning:
      'the share of server-side evaluations (frontend API, OFREP, playground) recorded as `feature_flag.evaluation` events, from 0 to 1',
    example: '0.1',
  },
];

/** One setting as a list item: its name, its default, what it does. */
const list = (settings: Setting[]) =>
  settings.map((setting) => `- **\`${setting.name}\`**${setting.default ? ` (default \`${setting.default}\`)` : ''}: ${setting.meaning}`);

/** docs/configuration.md as the settings above make it. */
export function configurationReference(): string {
  return [
    '<!-- Written by `npm run docs:config` from scripts/config-reference.ts; a test fails when they disagree. -->',
    '',
    '# Configuration',
    '',
    'Vexil and Vexil Edge are configured by environment variables, each read in one place (`src/config.ts`). An invalid',
    'value stops start-up with one line naming the variable and what it accepts.',
    '',
    '## The server',
    '',
    ...list(SERVER_SETTINGS),
    '',
    "(1) The starting sign-in policy of each provider: once an Admin sets a provider's policy (the Sign-in page), the",
    'stored one decides. SCIM gives the people it creates the default role of the policy of the provider they sign in',
    "with: OpenID Connect's when it is set up, else SAML's.",
    '',
    '## Vexil Edge',
    '',
    "Vexil Edge takes Unleash Edge's names, so an Unleash Edge's environment works unchanged where Vexil Edge can honour",
    'it ([Vexil Edge](edge.md)).',
    '',
    ...list(EDGE_SETTINGS),
    '',
    'These Unleash Edge settings are refused by name, with what to do instead, rather than ignored:',
    '',
    ...Object.entries(EDGE_SETTINGS_NOT_SUPPORTED).map(([name, instead]) => `- \`${name}\`: ${instead}`),
    '',
    '## OpenTelemetry (the server and the edge)',
    '',
    ...list(TELEMETRY_SETTINGS),
    '',
    'The OpenTelemetry SDK reads the other standard variables itself, among them `OTEL_EXPORTER_OTLP_HEADERS`,',
    '`OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, and `OTEL_RESOURCE_ATTRIBUTES`',
    '([Operations](operations.md#tracing-and-opentelemetry)).',
    '',
  ].join('\n');
}

if (process.argv[1] === import.meta.filename) {
  writeFileSync(join(import.meta.dirname, '../docs/configuration.md'), configurationReference());
}
