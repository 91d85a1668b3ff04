/**
 * The only reader of process.env. Every variable is parsed here once; an invalid value stops start-up with
 * one line that names the variable and what it accepts.
 */
import { MAX_EMAIL_DOMAINS, readEmailDomains } from './shared/email-domains.js';
import { parseAddressRange } from './shared/address-ranges.js';
import { parseOrigin } from './shared/origin.js';
import type { MailerOptions } from './shared/mailer.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type DatabaseConfig =
  | PostgresConfig
  /**
   * `dataDir` undefined keeps the database in memory (tests). `initialContents` starts a new database from a
   * dump of another (`PGlite.dumpDataDir`), which is much faster than creating one.
   */
  | { kind: 'pglite'; dataDir?: string; initialContents?: Blob };

export interface PostgresConfig {
  kind: 'postgres';
  url: string;
  /** A connection for LISTEN past a pooler in transaction mode, where LISTEN through `url` hears nothing. */
  listenUrl?: string;
  /** When LISTEN hears nothing: how often the event log is read for changes other instances made. */
  changePollMs: number;
  poolSize: number;
  /** How long start-up keeps trying a PostgreSQL that does not answer yet. */
  waitMs: number;
}

export interface Config {
  port: number;
  host: string;
  database: DatabaseConfig;
  /** Full admin token strings (`*:*.<secret>`) to create at start-up if missing. */
  initAdminApiTokens: string[];
  logLevel: LogLevel;
  baseUrl: string;
  sessionTtlHours: number;
  /** How long a token a person grants an MCP client (OAuth) works; the client asks the person again after. */
  mcpTokenTtlHours: number;
  /** How long one read of a search or listing may run on PostgreSQL before it is cancelled. */
  readTimeoutMs: number;
  /** Origins whose pages may call the frontend API until an admin sets them; `['*']` allows all. */
  frontendApiOrigins: string[];
  integrations: IntegrationsConfig;
  sdkBookkeeping: SdkBookkeepingConfig;
  impactMetrics: ImpactMetricsConfig;
  experiments: ExperimentsConfig;
  /** Sign-in through the company's OpenID Connect provider; absent when OIDC_ISSUER is not set. */
  oidc?: OidcConfig;
  /** SAML 2.0 sign-in, when SAML_METADATA_URL is set. */
  saml?: SamlConfig;
  /** Whether people may sign in with a password (off with OIDC_ONLY=true). */
  passwordSignIn: boolean;
  /** Where password reset emails are sent through, when EMAIL_HOST is set. */
  email?: EmailConfig;
  /** The key edge clients' secrets and the tokens they are issued are derived from (EDGE_MASTER_SECRET); never logged. */
  edgeMasterSecret?: string;
}

/** An SMTP server, named as Unleash names its settings (EMAIL_HOST, EMAIL_PORT…); the password is never logged or shown. */
export type EmailConfig = MailerOptions;

/** Bounds on the impact metrics SDKs send. */
export interface ImpactMetricsConfig {
  /** Distinct series (metric name and label values) one application may have. */
  seriesPerApplication: number;
  /** Distinct series of all applications together. */
  seriesTotal: number;
  /** How long per-minute values are kept. */
  retentionDays: number;
}

/** Bounds on what experiments take from SDKs and from the database. */
export interface ExperimentsConfig {
  /** Exposures and tracked events one SDK token may send per minute, together. */
  eventsPerMinutePerToken: number;
  /** On the embedded database: the tracked events it keeps at most (larger experiments belong on PostgreSQL). */
  embeddedTrackedEventCap: number;
  /** How long tracked events are kept: longer than any window plus CUPED's lookback. */
  trackedEventRetentionDays: number;
  /** How long one analysis may run on PostgreSQL before it is cancelled. */
  analysisTimeoutMs: number;
}

/** Who an identity provider may bring in, as the server starts (until an Admin sets the sign-in policy). */
export interface StartingSignInPolicy {
  /** The root role of a user the provider signs in for the first time. */
  defaultRole: 'Admin' | 'Editor' | 'Viewer';
  /** Whether sign-in creates users the provider brings. */
  autoCreate: boolean;
  /** The email domains the provider's people must have; empty lets any in. */
  emailDomains: string[];
}

export interface OidcConfig extends StartingSignInPolicy {
  issuer: URL;
  clientId: string;
  /** Absent for a public client, which PKCE alone protects. */
  clientSecret?: string;
  redirectUri: string;
  scopes: string;
  /** The ID token claim listing the user's groups, matched against groups' `mappingsSSO`. */
  groupsClaim: string;
  /** What the sign-in button calls the provider. */
  name: string;
  /** Plain http is accepted only for a provider on this machine (development and tests). */
  allowHttp: boolean;
}

/** SAML 2.0 sign-in: Vexil is the service provider; the identity provider is described by its metadata. */
export interface SamlConfig extends StartingSignInPolicy {
  /** Where the identity provider publishes its metadata (entity id, sign-in URL, signing certificates). */
  metadataUrl: URL;
  /** Vexil's own entity id (the audience assertions must name). */
  entityId: string;
  /** Where the identity provider posts its answer (the assertion consumer service); assertions must name it. */
  callbackUrl: string;
  /** The attribute listing the person's groups, matched against groups' `mappingsSSO`. */
  groupsAttribute: string;
  /** The attribute holding the person's email when the NameID is not one. */
  emailAttribute: string;
  /** The attribute holding the person's name. */
  nameAttribute: string;
  /** What the sign-in button calls the provider. */
  name: string;
  /** Plain http is accepted only for metadata on this machine (development and tests). */
  allowHttp: boolean;
}

/** Bounds on what SDKs make Vexil keep: the applications and instances they register. */
export interface SdkBookkeepingConfig {
  /** An SDK instance not seen for this long is forgotten. */
  instanceRetentionHours: number;
  /** An application none of whose SDKs registered for this long is forgotten, with its instances. */
  applicationRetentionDays: number;
  /** New applications one SDK token may register per minute (per instance of Vexil); more get a 429. */
  newApplicationsPerMinute: number;
  /** Applications Vexil keeps in all; a new one beyond gets a 429. */
  maxApplications: number;
  /** SDK reports (JSON bytes) one instance holds in memory while the database is away; past it, a 503. */
  heldReportsMaxBytes: number;
}

export interface IntegrationsConfig {
  /** Lets integrations call loopback, private, link-local and metadata addresses (off: refused). */
  allowPrivateNetworks: boolean;
  /** How long one delivery attempt may take, connection and answer included. */
  deliveryTimeoutMs: number;
  /** Attempts per delivery, the first included, before it is given up. */
  maxAttempts: number;
  /** How long integration events are kept. */
  retentionDays: number;
}

/**
 * OpenTelemetry export of traces and flag evaluation events: on when an OTLP endpoint is set. The OpenTelemetry SDK
 * reads the rest of its standard variables itself (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_*…).
 */
export interface TelemetryConfig {
  enabled: boolean;
  /** The share of server-side flag evaluations recorded as `feature_flag.evaluation` events, from 0 to 1. */
  flagEvaluationEventsRatio: number;
  /** OTEL_SERVICE_NAME: the service the traces name, when not the process's own (`vexil`, `vexil-edge`). */
  serviceName?: string;
  /** Vexil's metrics, by the names the Prometheus endpoint gives them, exported over OTLP as well; absent with OTEL_METRICS_EXPORTER=none. */
  metrics?: { protocol: OtlpProtocol; exportIntervalMs: number };
}

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function invalid(variable: string, expected: string, got: string): never {
  throw new ConfigError(`${variable} must be ${expected} (got "${got}")`);
}

function readInteger(env: Env, variable: string, fallback: number, min: number, max: number): number {
  const raw = env[variable]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    invalid(variable, `a whole number from ${min} to ${max}`, raw);
  }
  return value;
}

function readBoolean(env: Env, variable: string, fallback: boolean): boolean {
  const raw = env[variable]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase();
  if (value !== 'true' && value !== 'false') invalid(variable, 'true or false', raw);
  return value === 'true';
}

function readIntegrations(env: Env): IntegrationsConfig {
  return {
    allowPrivateNetworks: readBoolean(env, 'INTEGRATIONS_ALLOW_PRIVATE_NETWORKS', false),
    deliveryTimeoutMs: readInteger(env, 'INTEGRATIONS_DELIVERY_TIMEOUT_MS', 10_000, 100, 300_000),
    maxAttempts: readInteger(env, 'INTEGRATIONS_MAX_ATTEMPTS', 5, 1, 20),
    retentionDays: readInteger(env, 'INTEGRATIONS_RETENTION_DAYS', 30, 1, 3650),
  };
}

/** A PostgreSQL connection URL from `name`, or undefined when it is not set. */
function readPostgresUrl(env: Env, name: string): string | undefined {
  const url = env[name]?.trim();
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The URL may carry a password: never echo it.
    throw new ConfigError(`${name} must be a URL of the form postgres://user:password@host:port/database`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError(`${name} must start with postgres:// or postgresql:// (got "${parsed.protocol}//…")`);
  }
  return url;
}

function readDatabase(env: Env): DatabaseConfig {
  const url = readPostgresUrl(env, 'DATABASE_URL');
  const listenUrl = readPostgresUrl(env, 'DATABASE_LISTEN_URL');
  if (url) {
    return {
      kind: 'postgres',
      url,
      ...(listenUrl ? { listenUrl } : {}),
      changePollMs: readInteger(env, 'DATABASE_CHANGE_POLL_MS', 1000, 100, 60_000),
      poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
      waitMs: readInteger(env, 'DATABASE_WAIT_SECONDS', 60, 0, 3600) * 1000,
    };
  }
  if (listenUrl) throw new ConfigError('DATABASE_LISTEN_URL is for PostgreSQL: set DATABASE_URL too');
  const dataDir = env.DATA_DIR?.trim();
  return { kind: 'pglite', dataDir: dataDir === undefined || dataDir === '' ? './data' : dataDir };
}

const ADMIN_TOKEN_FORMAT = /^\*:\*\.[A-Za-z0-9_\-.~]{16,}$/;

function readInitAdminApiTokens(env: Env): string[] {
  const raw = env.INIT_ADMIN_API_TOKENS?.trim();
  if (!raw) return [];
  const tokens = raw.split(',').map((token) => token.trim());
  tokens.forEach((token, index) => {
    if (!ADMIN_TOKEN_FORMAT.test(token)) {
      // Never echo a token: it is a secret even when malformed.
      throw new ConfigError(
        `INIT_ADMIN_API_TOKENS must be comma-separated admin tokens of the form *:*.<secret> with a secret of at least 16 URL-safe characters (entry ${index + 1} is not)`,
      );
    }
  });
  return [...new Set(tokens)];
}

function readLogLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL?.trim().toLowerCase();
  if (!raw) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) invalid('LOG_LEVEL', `one of ${LOG_LEVELS.join(', ')}`, raw);
  return raw as LogLevel;
}

function readBaseUrl(env: Env, port: number): string {
  const raw = env.BASE_URL?.trim();
  if (!raw) return `http://localhost:${port}`;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    invalid('BASE_URL', 'an absolute http or https URL', raw);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    invalid('BASE_URL', 'an absolute http or https URL', raw);
  }
  return raw.replace(/\/+$/, '');
}

function readOrigins(env: Env): string[] {
  const raw = env.FRONTEND_API_ORIGINS?.trim();
  if (!raw || raw === '*') return ['*'];
  return raw.split(',').map((entry) => {
    const origin = parseOrigin(entry.trim());
    if (!origin) invalid('FRONTEND_API_ORIGINS', '* or comma-separated origins such as https://app.example.com', entry.trim());
    return origin;
  });
}

function readHost(env: Env): string {
  const raw = env.HOST?.trim();
  if (!raw) return '0.0.0.0';
  if (/\s|\//.test(raw)) invalid('HOST', 'a host name or IP address', raw);
  return raw;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An identity provider's URL: https, or http only for a provider on this machine (development and tests). */
function readProviderUrl(variable: string, raw: string, expected: string): { url: URL; allowHttp: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    invalid(variable, expected, raw);
  }
  const allowHttp = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowHttp)) {
    invalid(variable, 'an https:// URL (http:// only for a provider on localhost)', raw);
  }
  return { url, allowHttp };
}

/** Bounds on what experiments take from SDKs and from the database. */
export interface ExperimentsConfig {
  /** Exposures and tracked events one SDK token may send per minute, together. */
  eventsPerMinutePerToken: number;
  /** On the embedded database: the tracked events it keeps at most (larger experiments belong on PostgreSQL). */
  embeddedTrackedEventCap: number;
  /** How long tracked events are kept: longer than any window plus CUPED's lookback. */
  trackedEventRetentionDays: number;
  /** How long one analysis may run on PostgreSQL before it is cancelled. */
  analysisTimeoutMs: number;
}

/** Who an identity provider may bring in until an Admin sets it: `<PREFIX>_DEFAULT_ROLE`, `_AUTO_CREATE`, `_EMAIL_DOMAINS`. */
function readStartingPolicy(env: Env, prefix: 'OIDC' | 'SAML'): StartingSignInPolicy {
  const role = env[`${prefix}_DEFAULT_ROLE`]?.trim() || 'Viewer';
  const defaultRole = (['Admin', 'Editor', 'Viewer'] as const).find((candidate) => candidate.toLowerCase() === role.toLowerCase());
  if (!defaultRole) invalid(`${prefix}_DEFAULT_ROLE`, 'Admin, Editor or Viewer', role);
  const { domains: emailDomains, wrong } = readEmailDomains(env[`${prefix}_EMAIL_DOMAINS`] ?? '');
  if (wrong !== undefined || emailDomains.length > MAX_EMAIL_DOMAINS) {
    invalid(
      `${prefix}_EMAIL_DOMAINS`,
      `at most ${MAX_EMAIL_DOMAINS} comma-separated email domains such as example.com`,
      wrong ?? 'too many',
    );
  }
  return { defaultRole, autoCreate: readBoolean(env, `${prefix}_AUTO_CREATE`, true), emailDomains };
}

function readOidc(env: Env, baseUrl: string): OidcConfig | undefined {
  const rawIssuer = env.OIDC_ISSUER?.trim();
  if (!rawIssuer) {
    for (const variable of ['OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_REDIRECT_URI', 'OIDC_EMAIL_DOMAINS', 'OIDC_AUTO_CREATE']) {
      if (env[variable]?.trim())
        throw new ConfigError(`${variable} is set but OIDC_ISSUER is not; set OIDC_ISSUER to the provider's issuer URL`);
    }
    return undefined;
  }
  const { url: issuer, allowHttp } = readProviderUrl(
    'OIDC_ISSUER',
    rawIssuer,
    "the provider's issuer URL, such as https://login.example.com",
  );
  const clientId = env.OIDC_CLIENT_ID?.trim();
  if (!clientId)
    throw new ConfigError('OIDC_CLIENT_ID must be set when OIDC_ISSUER is: the client id Vexil is registered under at the provider');
  const redirectUri = env.OIDC_REDIRECT_URI?.trim() || `${baseUrl}/auth/oidc/callback`;
  try {
    new URL(redirectUri);
  } catch {
    invalid('OIDC_REDIRECT_URI', 'an absolute URL ending in /auth/oidc/callback', redirectUri);
  }
  const scopes = (env.OIDC_SCOPES?.trim() || 'openid email profile').split(/[\s,]+/).filter(Boolean);
  if (!scopes.includes('openid')) invalid('OIDC_SCOPES', 'space-separated scopes including openid', env.OIDC_SCOPES ?? '');
  return {
    issuer,
    clientId,
    clientSecret: env.OIDC_CLIENT_SECRET?.trim() || undefined,
    redirectUri,
    scopes: scopes.join(' '),
    ...readStartingPolicy(env, 'OIDC'),
    groupsClaim: env.OIDC_GROUPS_CLAIM?.trim() || 'groups',
    name: env.OIDC_NAME?.trim() || issuer.hostname,
    allowHttp,
  };
}

function readSaml(env: Env, baseUrl: string): SamlConfig | undefined {
  const raw = env.SAML_METADATA_URL?.trim();
  if (!raw) {
    const variables = ['SAML_ENTITY_ID', 'SAML_NAME', 'SAML_GROUPS_ATTRIBUTE', 'SAML_EMAIL_ATTRIBUTE', 'SAML_NAME_ATTRIBUTE'];
    for (const variable of [...variables, 'SAML_DEFAULT_ROLE', 'SAML_AUTO_CREATE', 'SAML_EMAIL_DOMAINS']) {
      if (env[variable]?.trim())
        throw new ConfigError(`${variable} is set but SAML_METADATA_URL is not; set it to the identity provider's metadata URL`);
    }
    return undefined;
  }
  const { url: metadataUrl, allowHttp } = readProviderUrl(
    'SAML_METADATA_URL',
    raw,
    "the identity provider's metadata URL, such as https://idp.example.com/metadata",
  );
  return {
    metadataUrl,
    entityId: env.SAML_ENTITY_ID?.trim() || `${baseUrl}/auth/saml/metadata`,
    callbackUrl: `${baseUrl}/auth/saml/callback`,
    groupsAttribute: env.SAML_GROUPS_ATTRIBUTE?.trim() || 'groups',
    emailAttribute: env.SAML_EMAIL_ATTRIBUTE?.trim() || 'email',
    nameAttribute: env.SAML_NAME_ATTRIBUTE?.trim() || 'name',
    name: env.SAML_NAME?.trim() || metadataUrl.hostname,
    allowHttp,
    ...readStartingPolicy(env, 'SAML'),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const port = readInteger(env, 'PORT', 4242, 0, 65535);
  const baseUrl = readBaseUrl(env, port);
  const oidc = readOidc(env, baseUrl);
  const email = readEmail(env);
  const saml = readSaml(env, baseUrl);
  const oidcOnly = readBoolean(env, 'OIDC_ONLY', false);
  if (oidcOnly && !oidc && !saml) {
    throw new ConfigError('OIDC_ONLY=true turns password sign-in off, so it needs OIDC_ISSUER and OIDC_CLIENT_ID, or SAML_METADATA_URL');
  }
  return {
    port,
    host: readHost(env),
    database: readDatabase(env),
    initAdminApiTokens: readInitAdminApiTokens(env),
    logLevel: readLogLevel(env),
    baseUrl,
    sessionTtlHours: readInteger(env, 'SESSION_TTL_HOURS', 48, 1, 24 * 365),
    mcpTokenTtlHours: readInteger(env, 'MCP_TOKEN_TTL_HOURS', 24, 1, 24 * 30),
    readTimeoutMs: readInteger(env, 'READ_TIMEOUT_MS', 10_000, 100, 600_000),
    frontendApiOrigins: readOrigins(env),
    integrations: readIntegrations(env),
    sdkBookkeeping: {
      instanceRetentionHours: readInteger(env, 'CLIENT_INSTANCE_RETENTION_HOURS', 48, 1, 24 * 3650),
      applicationRetentionDays: readInteger(env, 'CLIENT_APPLICATION_RETENTION_DAYS', 30, 1, 3650),
      newApplicationsPerMinute: readInteger(env, 'CLIENT_NEW_APPLICATIONS_PER_MINUTE', 60, 1, 100_000),
      maxApplications: readInteger(env, 'CLIENT_APPLICATIONS_MAX', 10_000, 1, 10_000_000),
      heldReportsMaxBytes: readInteger(env, 'SDK_REPORTS_HELD_MAX_MB', 64, 0, 4096) * 1024 * 1024,
    },
    impactMetrics: {
      seriesPerApplication: readInteger(env, 'IMPACT_METRICS_SERIES_PER_APPLICATION', 100, 1, 10_000),
      seriesTotal: readInteger(env, 'IMPACT_METRICS_SERIES_TOTAL', 10_000, 1, 1_000_000),
      retentionDays: readInteger(env, 'IMPACT_METRICS_RETENTION_DAYS', 7, 1, 90),
    },
    experiments: {
      eventsPerMinutePerToken: readInteger(env, 'EXPERIMENT_EVENTS_PER_MINUTE', 600_000, 1, 100_000_000),
      embeddedTrackedEventCap: readInteger(env, 'EXPERIMENT_EMBEDDED_EVENTS_MAX', 1_000_000, 1, 100_000_000),
      trackedEventRetentionDays: readInteger(env, 'EXPERIMENT_EVENT_RETENTION_DAYS', 90, 7, 3650),
      analysisTimeoutMs: readInteger(env, 'EXPERIMENT_ANALYSIS_TIMEOUT_MS', 60_000, 1000, 3_600_000),
    },
    ...(oidc ? { oidc } : {}),
    ...(saml ? { saml } : {}),
    passwordSignIn: !oidcOnly,
    ...(email ? { email } : {}),
    ...readEdgeMasterSecret(env),
  };
}

function readEdgeMasterSecret(env: Env): { edgeMasterSecret?: string } {
  const secret = env.EDGE_MASTER_SECRET?.trim();
  if (!secret) return {};
  // Never echo it: it is the root of every edge client's secret.
  if (secret.length < 32) throw new ConfigError('EDGE_MASTER_SECRET must be at least 32 characters (a random string)');
  return { edgeMasterSecret: secret };
}

function readEmail(env: Env): EmailConfig | undefined {
  const host = env.EMAIL_HOST?.trim();
  if (!host) {
    for (const variable of ['EMAIL_PORT', 'EMAIL_SECURE', 'EMAIL_USER', 'EMAIL_PASSWORD', 'EMAIL_SENDER']) {
      if (env[variable]?.trim()) throw new ConfigError(`${variable} is set but EMAIL_HOST is not; set EMAIL_HOST to the SMTP server`);
    }
    return undefined;
  }
  const user = env.EMAIL_USER?.trim();
  const password = env.EMAIL_PASSWORD;
  if (Boolean(user) !== Boolean(password)) throw new ConfigError('EMAIL_USER and EMAIL_PASSWORD go together: set both or neither');
  const sender = env.EMAIL_SENDER?.trim() || 'noreply@vexil.local';
  if (!/^[^@\s]+@[^@\s]+$/.test(sender)) throw new ConfigError(`EMAIL_SENDER must be an email address (got "${sender}")`);
  return {
    host,
    port: readInteger(env, 'EMAIL_PORT', 587, 1, 65_535),
    secure: readBoolean(env, 'EMAIL_SECURE', false),
    ...(user && password ? { user, password } : {}),
    sender,
  };
}

/** Vexil Edge's settings, named as Unleash Edge names them so its deployment files carry over. */
export interface EdgeConfig {
  /** Where the flags come from: an upstream to follow, or a file (offline mode, for air-gapped sites and tests). */
  source: EdgeUpstream | EdgeOffline;
  port: number;
  host: string;
  logLevel: LogLevel;
  /** Where the configuration is written on each change and read at a start while the upstream is away. */
  backupFolder?: string;
  /** A Redis the configuration is written to and read from as well (edges on other machines can share it). */
  redisUrl?: string;
  /** How often the flags are fetched from an upstream that cannot stream them. */
  featuresRefreshIntervalMs: number;
  /** How often a token the edge serves is checked with the upstream again. */
  tokenRevalidationIntervalMs: number;
  /** How often SDK usage gathered at the edge is sent upstream. */
  metricsIntervalMs: number;
  /** How long one request to the upstream may take. */
  upstreamTimeoutMs: number;
  /** Take the client's address from X-Forwarded-For (the edge stands behind a proxy or load balancer). */
  trustProxy: boolean;
  /** Frontend tokens served without asking the upstream (Unleash Edge's PRETRUSTED_TOKENS; legacy proxy keys too). */
  pretrustedTokens: Array<{ secret: string; environment: string; projects: string[] }>;
  /** Addresses and ranges that may call the SDK APIs (all when empty), and those that may not. */
  allowList: string[];
  denyList: string[];
  /** Unleash Edge's backstage views switched off (DISABLE_TOKENS_ENDPOINT, DISABLE_FEATURES_ENDPOINT, DISABLE_METRICS_ENDPOINT). */
  backstage: { disableTokens: boolean; disableFeatures: boolean; disableMetrics: boolean };
  /** How the edge names itself to its upstream (Unleash Edge's APP_NAME and INSTANCE_ID). */
  appName: string;
  instanceId: string;
  /** How long an SDK's request may take, and an idle connection stay open (EDGE_REQUEST_TIMEOUT, EDGE_KEEPALIVE_TIMEOUT). */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export interface EdgeUpstream {
  kind: 'upstream';
  /** The Vexil, Unleash or Vexil Edge the edge follows (its base URL, without `/api`). */
  upstreamUrl: string;
  /** Client tokens whose flags are followed from the start; the edge serves tokens within their scopes. */
  tokens: string[];
}

export interface EdgeOffline {
  kind: 'offline';
  /** A features document as `/api/client/features` answers it. */
  bootstrapFile: string;
  /** The tokens served, taken as given (nobody to ask). */
  clientTokens: string[];
  frontendTokens: string[];
  /** How often the file is read again; 0: never. */
  reloadIntervalMs: number;
}

/**
 * Unleash Edge settings Vexil Edge does not take: refused by name with what to do instead, never ignored, so no one
 * relies on one unknowingly.
 */
export const EDGE_SETTINGS_NOT_SUPPORTED: Record<string, string> = {
  REDIS_HOST: 'give the whole address in REDIS_URL',
  REDIS_PORT: 'give the whole address in REDIS_URL',
  REDIS_USERNAME: 'give the user in REDIS_URL (redis://user:password@host:port)',
  REDIS_PASSWORD: 'give the password in REDIS_URL (redis://user:password@host:port)',
  REDIS_SCHEME: 'write the scheme in REDIS_URL (redis:// or rediss://)',
  REDIS_MODE: 'one Redis server is supported (REDIS_URL), not a cluster',
  TLS_ENABLE: 'terminate TLS in front of the edge (a load balancer or reverse proxy)',
  UPSTREAM_CERTIFICATE_FILE: 'give Node the certificate with NODE_EXTRA_CA_CERTS',
  SKIP_SSL_VERIFICATION: 'the upstream is always verified; give Node its certificate with NODE_EXTRA_CA_CERTS',
  CUSTOM_CLIENT_HEADERS: 'headers to the upstream are not configurable in this version',
  PKCS8_CLIENT_CERTIFICATE_FILE:
    'client certificates towards the upstream are not supported; put the upstream behind a proxy that adds one',
  PKCS8_CLIENT_KEY_FILE: 'client certificates towards the upstream are not supported; put the upstream behind a proxy that adds one',
  PKCS12_IDENTITY_FILE: 'client certificates towards the upstream are not supported; put the upstream behind a proxy that adds one',
  PKCS12_PASSPHRASE: 'client certificates towards the upstream are not supported; put the upstream behind a proxy that adds one',
  S3_BUCKET_NAME: 'keep the backup in BACKUP_FOLDER or REDIS_URL',
  BASE_PATH: 'the edge serves at the root; let a reverse proxy strip a prefix',
  WORKERS: 'an edge is one Node process; run several behind a load balancer (they agree on ETags)',
  DISABLE_ALL_ENDPOINT: 'the /all paths are always served, to frontend tokens only',
  // Unleash Edge 20.x's other settings Vexil Edge has no counterpart for (docs/edge.md has the table of them all).
  REDIS_SECURE: 'write the scheme in REDIS_URL (rediss:// for TLS)',
  REDIS_READ_CONNECTION_TIMEOUT_MILLISECONDS: "Redis is given Vexil Edge's own timeouts",
  REDIS_WRITE_CONNECTION_TIMEOUT_MILLISECONDS: "Redis is given Vexil Edge's own timeouts",
  S3_FORCE_PATH_STYLE: 'keep the backup in BACKUP_FOLDER or REDIS_URL',
  PEM_CERT_FILE: 'client certificates towards the upstream are not supported; put the upstream behind a proxy that adds one',
  UPSTREAM_SOCKET_TIMEOUT: 'UPSTREAM_REQUEST_TIMEOUT bounds each request to the upstream, connecting included',
  CLIENT_KEEPALIVE_TIMEOUT: "connections to the upstream are kept as Node's HTTP client keeps them",
  CONSUMPTION: "consumption reporting is Unleash's commercial offering",
  PROMETHEUS_REMOTE_WRITE_URL: 'scrape /internal-backstage/metrics, or send metrics over OpenTelemetry (OTEL_EXPORTER_OTLP_ENDPOINT)',
  PROMETHEUS_PUSH_INTERVAL: 'scrape /internal-backstage/metrics, or send metrics over OpenTelemetry (OTEL_METRIC_EXPORT_INTERVAL)',
  PROMETHEUS_USERNAME: 'scrape /internal-backstage/metrics, or send metrics over OpenTelemetry',
  PROMETHEUS_PASSWORD: 'scrape /internal-backstage/metrics, or send metrics over OpenTelemetry',
  PROMETHEUS_USER_ID: 'scrape /internal-backstage/metrics, or send metrics over OpenTelemetry',
  EC2_INSTANCE_ID: 'name the instance with INSTANCE_ID',
  CLIENT_ID:
    "Unleash Enterprise Edge's token issuing is answered by a Vexil server (docs/edge.md), not asked by Vexil Edge: give it TOKENS",
  UNLEASH_CLIENT_SECRET: "Unleash Enterprise Edge's token issuing is answered by a Vexil server, not asked by Vexil Edge: give it TOKENS",
  DESIRED_ENVIRONMENTS: "Unleash Enterprise Edge's token issuing is answered by a Vexil server, not asked by Vexil Edge: give it TOKENS",
  DESIRED_PROJECTS: "Unleash Enterprise Edge's token issuing is answered by a Vexil server, not asked by Vexil Edge: give it TOKENS",
  EDGE_AUTH_HEADER: 'SDKs send their token in Authorization; a reverse proxy can rename a header',
  UPSTREAM_AUTH_HEADER: 'the upstream is sent the token in Authorization',
  TOKEN_HEADER: 'SDKs send their token in Authorization; a reverse proxy can rename a header',
  EDGE_HOSTING: "only for Unleash's hosted Edge",
  TLS_SERVER_KEY: 'terminate TLS in front of the edge (a load balancer or reverse proxy)',
  TLS_SERVER_CERT: 'terminate TLS in front of the edge (a load balancer or reverse proxy)',
  TLS_SERVER_PORT: 'terminate TLS in front of the edge (a load balancer or reverse proxy)',
  REDIRECT_HTTP_TO_HTTPS: 'terminate TLS, and redirect to it, in front of the edge',
  CORS_ORIGIN: 'the frontend API answers every origin (frontend tokens are public); restrict origins in a reverse proxy',
  CORS_ALLOWED_HEADERS: 'the frontend API allows the headers frontend SDKs send',
  CORS_MAX_AGE: 'the frontend API sets its own preflight age',
  CORS_EXPOSED_HEADERS: 'the frontend API exposes the headers frontend SDKs read',
  CORS_METHODS: 'the frontend API allows the methods frontend SDKs use',
  SENTRY_DSN: 'errors are in the logs and in OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT)',
  SENTRY_TRACING_RATE: 'traces go to OpenTelemetry (OTEL_TRACES_SAMPLER_ARG)',
  SENTRY_DEBUG: 'errors are in the logs and in OpenTelemetry traces',
  SENTRY_ENABLE_LOGS: 'errors are in the logs and in OpenTelemetry traces',
  DATADOG_URL: "send OpenTelemetry to the Datadog agent's OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)",
  PROXY_TRUSTED_SERVERS: 'TRUST_PROXY=true trusts the proxy in front; put the edge behind the one it should trust',
  CA_CERTIFICATE_FILE: 'give Node the certificate with NODE_EXTRA_CA_CERTS',
};

function readEdgeUpstream(env: Env): string {
  const raw = env.UPSTREAM_URL?.trim();
  if (!raw) throw new ConfigError('UPSTREAM_URL is required: the base URL of the Vexil or Unleash server the edge follows');
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    invalid('UPSTREAM_URL', 'an absolute http or https URL', raw);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') invalid('UPSTREAM_URL', 'an absolute http or https URL', raw);
  // Unleash Edge takes the server's URL with or without `/api`; the edge adds the paths itself.
  return raw.replace(/\/+$/, '').replace(/\/api$/, '');
}

/** An SDK token as Unleash and Vexil write them: `<project or * or []>:<environment>.<secret>`. */
const SDK_TOKEN_FORMAT = /^[^:\s]+:[^.\s]+\.[A-Za-z0-9_\-.~]+$/;

function readEdgeTokens(env: Env, variable: string): string[] {
  const raw = env[variable]?.trim();
  if (!raw) return [];
  const tokens = raw.split(',').map((token) => token.trim());
  tokens.forEach((token, index) => {
    if (!SDK_TOKEN_FORMAT.test(token)) {
      // Never echo a token: it is a secret even when malformed.
      throw new ConfigError(
        `${variable} must be comma-separated tokens of the form <project>:<environment>.<secret> (entry ${index + 1} is not)`,
      );
    }
  });
  return [...new Set(tokens)];
}

function readEdgeSource(env: Env): EdgeUpstream | EdgeOffline {
  const bootstrapFile = env.BOOTSTRAP_FILE?.trim();
  if (!bootstrapFile) return { kind: 'upstream', upstreamUrl: readEdgeUpstream(env), tokens: readEdgeTokens(env, 'TOKENS') };
  if (env.UPSTREAM_URL?.trim()) throw new ConfigError('Set UPSTREAM_URL (follow a server) or BOOTSTRAP_FILE (offline mode), not both');
  const clientTokens = readEdgeTokens(env, 'CLIENT_TOKENS');
  const frontendTokens = readEdgeTokens(env, 'FRONTEND_TOKENS');
  if (clientTokens.length === 0 && frontendTokens.length === 0) {
    throw new ConfigError('Offline mode (BOOTSTRAP_FILE) serves only the tokens in CLIENT_TOKENS and FRONTEND_TOKENS; set at least one');
  }
  return {
    kind: 'offline',
    bootstrapFile,
    clientTokens,
    frontendTokens,
    reloadIntervalMs: readInteger(env, 'RELOAD_INTERVAL', 0, 0, 86_400) * 1000,
  };
}

/** Comma-separated addresses and CIDR ranges. */
function readAddressList(env: Env, variable: string): string[] {
  const raw = env[variable]?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry) => {
    const trimmed = entry.trim();
    if (!parseAddressRange(trimmed)) invalid(variable, 'comma-separated IP addresses or CIDR ranges such as 10.0.0.0/8', trimmed);
    return trimmed;
  });
}

/**
 * PRETRUSTED_TOKENS: frontend tokens as `<project>:<environment>.<secret>`, or legacy Unleash Proxy keys as
 * `<secret>@<environment>` (every project).
 */
function readPretrustedTokens(env: Env): EdgeConfig['pretrustedTokens'] {
  const raw = env.PRETRUSTED_TOKENS?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry, index) => {
    const token = entry.trim();
    const legacy = /^([^@\s]+)@([^@\s]+)$/.exec(token);
    if (legacy) return { secret: token, environment: legacy[2]!, projects: ['*'] };
    const parts = /^([^:\s]+):([^.\s]+)\.\S+$/.exec(token);
    if (!parts) {
      // Never echo a token.
      throw new ConfigError(
        `PRETRUSTED_TOKENS must be comma-separated frontend tokens (<project>:<environment>.<secret>) or proxy keys (<secret>@<environment>); entry ${index + 1} is neither`,
      );
    }
    const project = parts[1]!;
    return { secret: token, environment: parts[2]!, projects: project === '*' || project === '[]' ? ['*'] : [project] };
  });
}

function readRatio(env: Env, variable: string, fallback: number): number {
  const raw = env[variable]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^(0|1|0?\.\d+|1\.0*)$/.test(raw) || value > 1) invalid(variable, 'a number from 0 to 1', raw);
  return value;
}

/** Read by the server's and the edge's entry before anything else loads: instrumentation must precede the modules it patches. */
export function loadTelemetryConfig(env: Env = process.env): TelemetryConfig {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const metricsExporter = env.OTEL_METRICS_EXPORTER?.trim() || 'otlp';
  if (metricsExporter !== 'otlp' && metricsExporter !== 'none') invalid('OTEL_METRICS_EXPORTER', 'otlp or none', metricsExporter);
  // The metrics' own protocol, else the one every signal uses, as the OpenTelemetry SDK reads them.
  const protocolVariable = env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL?.trim()
    ? 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = env[protocolVariable]?.trim() || 'http/protobuf';
  if (!OTLP_PROTOCOLS.includes(protocol as OtlpProtocol)) invalid(protocolVariable, 'http/protobuf, http/json or grpc', protocol);
  const serviceName = env.OTEL_SERVICE_NAME?.trim();
  return {
    enabled: Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true',
    flagEvaluationEventsRatio: readRatio(env, 'FLAG_EVALUATION_EVENTS_RATIO', 0.01),
    ...(serviceName ? { serviceName } : {}),
    ...(metricsExporter === 'otlp'
      ? {
          metrics: {
            protocol: protocol as OtlpProtocol,
            exportIntervalMs: readInteger(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000, 100, 86_400_000),
          },
        }
      : {}),
  };
}

export function loadEdgeConfig(env: Env = process.env): EdgeConfig {
  for (const [variable, instead] of Object.entries(EDGE_SETTINGS_NOT_SUPPORTED)) {
    if (env[variable]?.trim()) throw new ConfigError(`${variable} is not supported by Vexil Edge: ${instead} (see docs/edge.md)`);
  }
  const logFormat = env.LOG_FORMAT?.trim();
  if (logFormat && logFormat !== 'json') invalid('LOG_FORMAT', 'json (Vexil Edge logs JSON lines)', logFormat);
  const backupFolder = env.BACKUP_FOLDER?.trim();
  const redisUrl = env.REDIS_URL?.trim();
  if (redisUrl && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    // The URL may carry a password: never echo it.
    throw new ConfigError('REDIS_URL must be a URL of the form redis://[user:password@]host:port[/db] (or rediss:// for TLS)');
  }
  const seconds = (variable: string, fallback: number, min: number, max: number) => readInteger(env, variable, fallback, min, max) * 1000;
  return {
    source: readEdgeSource(env),
    port: readInteger(env, 'PORT', 3063, 0, 65535),
    host: env.INTERFACE?.trim() ? readHost({ HOST: env.INTERFACE }) : readHost(env),
    logLevel: readLogLevel(env),
    ...(backupFolder ? { backupFolder } : {}),
    ...(redisUrl ? { redisUrl } : {}),
    featuresRefreshIntervalMs: seconds('FEATURES_REFRESH_INTERVAL_SECONDS', 15, 1, 86_400),
    tokenRevalidationIntervalMs: seconds('TOKEN_REVALIDATION_INTERVAL_SECONDS', 3600, 1, 86_400),
    metricsIntervalMs: seconds('METRICS_INTERVAL_SECONDS', 60, 1, 86_400),
    upstreamTimeoutMs: seconds('UPSTREAM_REQUEST_TIMEOUT', 5, 1, 600),
    trustProxy: readBoolean(env, 'TRUST_PROXY', false),
    pretrustedTokens: readPretrustedTokens(env),
    allowList: readAddressList(env, 'ALLOW_LIST'),
    denyList: readAddressList(env, 'DENY_LIST'),
    backstage: {
      disableTokens: readBoolean(env, 'DISABLE_TOKENS_ENDPOINT', false),
      disableFeatures: readBoolean(env, 'DISABLE_FEATURES_ENDPOINT', false),
      disableMetrics: readBoolean(env, 'DISABLE_METRICS_ENDPOINT', false),
    },
    appName: env.APP_NAME?.trim() || 'vexil-edge',
    instanceId: env.INSTANCE_ID?.trim() || `vexil-edge-${env.HOSTNAME?.trim() || 'unknown'}`,
    requestTimeoutMs: seconds('EDGE_REQUEST_TIMEOUT', 5, 1, 600),
    keepAliveTimeoutMs: seconds('EDGE_KEEPALIVE_TIMEOUT', 5, 1, 600),
    ...readUnleashEdgeSwitches(env),
  };
}

/**
 * Unleash Edge switches Vexil Edge takes and has nothing to change for: streaming and delta are always served,
 * and the endpoints these disable do not exist here. Each must still be a boolean, as Unleash Edge requires.
 */
function readUnleashEdgeSwitches(env: Env): Record<string, never> {
  for (const variable of ['STREAMING', 'DELTA', 'DISABLE_METRICS_BATCH_ENDPOINT', 'DISABLE_INSTANCE_DATA_ENDPOINT']) {
    readBoolean(env, variable, false);
  }
  return {};
}
