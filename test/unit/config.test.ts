import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, loadEdgeConfig, loadTelemetryConfig } from '../../src/config.js';

describe('configuration', () => {
  test('has working defaults: port 4242 on the embedded database in ./data', () => {
    const config = loadConfig({});
    assert.deepEqual(config, {
      port: 4242,
      host: '0.0.0.0',
      database: { kind: 'pglite', dataDir: './data' },
      initAdminApiTokens: [],
      logLevel: 'info',
      baseUrl: 'http://localhost:4242',
      sessionTtlHours: 48,
      mcpTokenTtlHours: 24,
      readTimeoutMs: 10_000,
      frontendApiOrigins: ['*'],
      integrations: { allowPrivateNetworks: false, deliveryTimeoutMs: 10_000, maxAttempts: 5, retentionDays: 30 },
      sdkBookkeeping: {
        instanceRetentionHours: 48,
        applicationRetentionDays: 30,
        newApplicationsPerMinute: 60,
        maxApplications: 10_000,
        heldReportsMaxBytes: 64 * 1024 * 1024,
      },
      impactMetrics: { seriesPerApplication: 100, seriesTotal: 10_000, retentionDays: 7 },
      experiments: {
        eventsPerMinutePerToken: 600_000,
        embeddedTrackedEventCap: 1_000_000,
        trackedEventRetentionDays: 90,
        analysisTimeoutMs: 60_000,
      },
      passwordSignIn: true,
    });
  });

  test('reads OpenID Connect sign-in, with the redirect URI under BASE_URL and Viewer as the first role', () => {
    const config = loadConfig({
      BASE_URL: 'https://flags.acme.example',
      OIDC_ISSUER: 'https://login.acme.example/realms/staff',
      OIDC_CLIENT_ID: 'vexil',
      OIDC_CLIENT_SECRET: 's3cret',
      OIDC_SCOPES: 'openid email profile groups',
      OIDC_GROUPS_CLAIM: 'roles',
      OIDC_ONLY: 'true',
    });
    assert.deepEqual(
      { ...config.oidc, issuer: config.oidc?.issuer.href },
      {
        issuer: 'https://login.acme.example/realms/staff',
        clientId: 'vexil',
        clientSecret: 's3cret',
        redirectUri: 'https://flags.acme.example/auth/oidc/callback',
        scopes: 'openid email profile groups',
        defaultRole: 'Viewer',
        autoCreate: true,
        emailDomains: [],
        groupsClaim: 'roles',
        name: 'login.acme.example',
        allowHttp: false,
      },
    );
    assert.equal(config.passwordSignIn, false);
  });

  test('reads the starting sign-in policy: email domains and automatic creation, refusing a domain that is none', () => {
    const oidc = {
      OIDC_ISSUER: 'https://login.acme.example',
      OIDC_CLIENT_ID: 'vexil',
      OIDC_EMAIL_DOMAINS: 'Acme.example, corp.acme.example,acme.example',
      OIDC_AUTO_CREATE: 'false',
      OIDC_DEFAULT_ROLE: 'editor',
    };
    const config = loadConfig(oidc);
    assert.deepEqual(
      [config.oidc?.emailDomains, config.oidc?.autoCreate, config.oidc?.defaultRole],
      [['acme.example', 'corp.acme.example'], false, 'Editor'],
    );
    assert.throws(() => loadConfig({ ...oidc, OIDC_EMAIL_DOMAINS: 'acme.example, @acme' }), /OIDC_EMAIL_DOMAINS.*@acme/);
    assert.throws(() => loadConfig({ ...oidc, OIDC_AUTO_CREATE: 'maybe' }), /OIDC_AUTO_CREATE/);
    assert.throws(() => loadConfig({ OIDC_EMAIL_DOMAINS: 'acme.example' }), /OIDC_EMAIL_DOMAINS is set but OIDC_ISSUER is not/);
  });

  test('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://vexil:pw@db:5432/vexil',
      DATABASE_POOL_SIZE: '20',
      DATABASE_LISTEN_URL: 'postgres://vexil:pw@db-direct:5432/vexil',
      DATABASE_CHANGE_POLL_MS: '500',
      DATABASE_WAIT_SECONDS: '5',
      INIT_ADMIN_API_TOKENS: '*:*.first-secret-0123456789, *:*.second-secret-0123456789',
      LOG_LEVEL: 'WARN',
      BASE_URL: 'https://flags.example.com/',
      SESSION_TTL_HOURS: '8',
      MCP_TOKEN_TTL_HOURS: '2',
      READ_TIMEOUT_MS: '3000',
      FRONTEND_API_ORIGINS: 'https://app.example.com, http://localhost:3000',
      INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'TRUE',
      INTEGRATIONS_DELIVERY_TIMEOUT_MS: '2500',
      INTEGRATIONS_MAX_ATTEMPTS: '3',
      INTEGRATIONS_RETENTION_DAYS: '90',
      CLIENT_INSTANCE_RETENTION_HOURS: '12',
      CLIENT_APPLICATION_RETENTION_DAYS: '7',
      CLIENT_NEW_APPLICATIONS_PER_MINUTE: '500',
      CLIENT_APPLICATIONS_MAX: '2500',
      SDK_REPORTS_HELD_MAX_MB: '8',
      IMPACT_METRICS_SERIES_PER_APPLICATION: '50',
      IMPACT_METRICS_SERIES_TOTAL: '2000',
      IMPACT_METRICS_RETENTION_DAYS: '3',
      EXPERIMENT_EVENTS_PER_MINUTE: '1000',
      EXPERIMENT_EMBEDDED_EVENTS_MAX: '5000',
      EXPERIMENT_EVENT_RETENTION_DAYS: '30',
      EXPERIMENT_ANALYSIS_TIMEOUT_MS: '2000',
    });
    assert.deepEqual(config, {
      port: 8080,
      host: '127.0.0.1',
      database: {
        kind: 'postgres',
        url: 'postgres://vexil:pw@db:5432/vexil',
        listenUrl: 'postgres://vexil:pw@db-direct:5432/vexil',
        changePollMs: 500,
        poolSize: 20,
        waitMs: 5000,
      },
      initAdminApiTokens: ['*:*.first-secret-0123456789', '*:*.second-secret-0123456789'],
      logLevel: 'warn',
      baseUrl: 'https://flags.example.com',
      sessionTtlHours: 8,
      mcpTokenTtlHours: 2,
      readTimeoutMs: 3000,
      frontendApiOrigins: ['https://app.example.com', 'http://localhost:3000'],
      integrations: { allowPrivateNetworks: true, deliveryTimeoutMs: 2500, maxAttempts: 3, retentionDays: 90 },
      sdkBookkeeping: {
        instanceRetentionHours: 12,
        applicationRetentionDays: 7,
        newApplicationsPerMinute: 500,
        maxApplications: 2500,
        heldReportsMaxBytes: 8 * 1024 * 1024,
      },
      impactMetrics: { seriesPerApplication: 50, seriesTotal: 2000, retentionDays: 3 },
      experiments: { eventsPerMinutePerToken: 1000, embeddedTrackedEventCap: 5000, trackedEventRetentionDays: 30, analysisTimeoutMs: 2000 },
      passwordSignIn: true,
    });
  });

  test('DATA_DIR chooses where the embedded database lives', () => {
    assert.deepEqual(loadConfig({ DATA_DIR: '/var/lib/vexil' }).database, { kind: 'pglite', dataDir: '/var/lib/vexil' });
  });

  const invalid: Array<[string, Record<string, string>, RegExp]> = [
    ['a non-numeric PORT', { PORT: 'abc' }, /^PORT must be a whole number from 0 to 65535 \(got "abc"\)$/],
    ['a PORT out of range', { PORT: '70000' }, /^PORT must be/],
    [
      'no new applications per minute',
      { CLIENT_NEW_APPLICATIONS_PER_MINUTE: '0' },
      /^CLIENT_NEW_APPLICATIONS_PER_MINUTE must be a whole number from 1 to 100000/,
    ],
    ['no applications at all', { CLIENT_APPLICATIONS_MAX: '0' }, /^CLIENT_APPLICATIONS_MAX must be a whole number from 1 to 10000000/],
    ['a DATABASE_URL that is not a URL', { DATABASE_URL: 'not a url' }, /^DATABASE_URL must be a URL/],
    ['a DATABASE_URL of another database', { DATABASE_URL: 'mysql://u:p@h/db' }, /^DATABASE_URL must start with postgres:\/\//],
    ['a zero pool size', { DATABASE_URL: 'postgres://h/db', DATABASE_POOL_SIZE: '0' }, /^DATABASE_POOL_SIZE must be/],
    [
      'a DATABASE_LISTEN_URL of another database',
      { DATABASE_URL: 'postgres://h/db', DATABASE_LISTEN_URL: 'redis://h' },
      /^DATABASE_LISTEN_URL must start with postgres:\/\//,
    ],
    [
      'a DATABASE_LISTEN_URL without DATABASE_URL',
      { DATABASE_LISTEN_URL: 'postgres://h/db' },
      /^DATABASE_LISTEN_URL is for PostgreSQL: set DATABASE_URL too/,
    ],
    ['a change poll of no time', { DATABASE_URL: 'postgres://h/db', DATABASE_CHANGE_POLL_MS: '0' }, /^DATABASE_CHANGE_POLL_MS must be/],
    ['an SMTP port without a server', { EMAIL_PORT: '25' }, /^EMAIL_PORT is set but EMAIL_HOST is not/],
    // The message never echoes the secret.
    [
      'a short EDGE_MASTER_SECRET',
      { EDGE_MASTER_SECRET: 'too-short-secret' },
      /^EDGE_MASTER_SECRET must be at least 32 characters \(a random string\)$/,
    ],
    [
      'an SMTP user without a password',
      { EMAIL_HOST: 'smtp.example.com', EMAIL_USER: 'vexil' },
      /^EMAIL_USER and EMAIL_PASSWORD go together/,
    ],
    [
      'an SMTP sender that is no address',
      { EMAIL_HOST: 'smtp.example.com', EMAIL_SENDER: 'Vexil' },
      /^EMAIL_SENDER must be an email address/,
    ],
    ['an SMTP port out of range', { EMAIL_HOST: 'smtp.example.com', EMAIL_PORT: '70000' }, /^EMAIL_PORT must be/],
    [
      'a negative DATABASE_WAIT_SECONDS',
      { DATABASE_URL: 'postgres://h/db', DATABASE_WAIT_SECONDS: '-1' },
      /^DATABASE_WAIT_SECONDS must be a whole number from 0 to 3600/,
    ],
    ['an unknown LOG_LEVEL', { LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    ['a BASE_URL that is not http', { BASE_URL: 'ftp://x' }, /^BASE_URL must be an absolute http or https URL/],
    ['a malformed admin token', { INIT_ADMIN_API_TOKENS: 'default:development.0123456789abcdef' }, /^INIT_ADMIN_API_TOKENS must be/],
    ['a too short admin secret', { INIT_ADMIN_API_TOKENS: '*:*.short' }, /^INIT_ADMIN_API_TOKENS must be/],
    ['a HOST with spaces', { HOST: 'my host' }, /^HOST must be/],
    [
      'an INTEGRATIONS_ALLOW_PRIVATE_NETWORKS that is not a boolean',
      { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'yes' },
      /^INTEGRATIONS_ALLOW_PRIVATE_NETWORKS must be true or false \(got "yes"\)$/,
    ],
    [
      'an INTEGRATIONS_DELIVERY_TIMEOUT_MS out of range',
      { INTEGRATIONS_DELIVERY_TIMEOUT_MS: '50' },
      /^INTEGRATIONS_DELIVERY_TIMEOUT_MS must be a whole number from 100 to 300000 \(got "50"\)$/,
    ],
    [
      'a zero INTEGRATIONS_MAX_ATTEMPTS',
      { INTEGRATIONS_MAX_ATTEMPTS: '0' },
      /^INTEGRATIONS_MAX_ATTEMPTS must be a whole number from 1 to 20/,
    ],
    [
      'a fractional INTEGRATIONS_RETENTION_DAYS',
      { INTEGRATIONS_RETENTION_DAYS: '1.5' },
      /^INTEGRATIONS_RETENTION_DAYS must be a whole number from 1 to 3650/,
    ],
  ];
  const oidc = { OIDC_ISSUER: 'https://login.acme.example', OIDC_CLIENT_ID: 'vexil' };
  invalid.push(
    ['an OIDC_ISSUER that is not a URL', { ...oidc, OIDC_ISSUER: 'login.acme.example' }, /^OIDC_ISSUER must be the provider's issuer URL/],
    [
      'a plain-http OIDC_ISSUER elsewhere than localhost',
      { ...oidc, OIDC_ISSUER: 'http://login.acme.example' },
      /^OIDC_ISSUER must be an https:\/\/ URL/,
    ],
    ['OIDC_ISSUER without OIDC_CLIENT_ID', { OIDC_ISSUER: oidc.OIDC_ISSUER }, /^OIDC_CLIENT_ID must be set when OIDC_ISSUER is/],
    ['OIDC_CLIENT_ID without OIDC_ISSUER', { OIDC_CLIENT_ID: 'vexil' }, /^OIDC_CLIENT_ID is set but OIDC_ISSUER is not/],
    ['OIDC_ONLY without a provider', { OIDC_ONLY: 'true' }, /^OIDC_ONLY=true turns password sign-in off, so it needs OIDC_ISSUER/],
    [
      'SAML_METADATA_URL that is no URL',
      { SAML_METADATA_URL: 'idp metadata' },
      /^SAML_METADATA_URL must be the identity provider's metadata URL/,
    ],
    [
      'SAML_METADATA_URL over http elsewhere',
      { SAML_METADATA_URL: 'http://idp.example.com/metadata' },
      /^SAML_METADATA_URL must be an https:\/\/ URL/,
    ],
    ['SAML_NAME without SAML_METADATA_URL', { SAML_NAME: 'Corp' }, /^SAML_NAME is set but SAML_METADATA_URL is not/],
    ['an unknown OIDC_DEFAULT_ROLE', { ...oidc, OIDC_DEFAULT_ROLE: 'Owner' }, /^OIDC_DEFAULT_ROLE must be Admin, Editor or Viewer/],
    [
      'OIDC_SCOPES without openid',
      { ...oidc, OIDC_SCOPES: 'email profile' },
      /^OIDC_SCOPES must be space-separated scopes including openid/,
    ],
  );
  for (const [label, env, message] of invalid) {
    test(`stops on ${label}, naming the variable`, () => {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, message);
          assert.ok(!error.message.includes('\n'), 'one line');
          return true;
        },
      );
    });
  }

  test('never echoes secrets in its errors', () => {
    assert.throws(
      () => loadConfig({ INIT_ADMIN_API_TOKENS: '*:*.0123456789abcdef, not-a-token-topsecret' }),
      (error: Error) => !error.message.includes('topsecret') && /entry 2/.test(error.message),
    );
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres//user:hunter2@host' }),
      (error: Error) => !error.message.includes('hunter2'),
    );
  });
});

describe('Vexil Edge configuration', () => {
  test("takes Unleash Edge's settings: the upstream (with or without /api), TOKENS, the intervals in seconds, port 3063", () => {
    assert.deepEqual(
      loadEdgeConfig({
        UPSTREAM_URL: 'https://flags.acme.example/api/',
        TOKENS: '*:production.abc123, shop:development.def456',
        FEATURES_REFRESH_INTERVAL_SECONDS: '5',
        BACKUP_FOLDER: '/var/lib/edge',
        TRUST_PROXY: 'true',
        INTERFACE: '127.0.0.1',
      }),
      {
        source: { kind: 'upstream', upstreamUrl: 'https://flags.acme.example', tokens: ['*:production.abc123', 'shop:development.def456'] },
        port: 3063,
        host: '127.0.0.1',
        logLevel: 'info',
        backupFolder: '/var/lib/edge',
        featuresRefreshIntervalMs: 5_000,
        tokenRevalidationIntervalMs: 3_600_000,
        metricsIntervalMs: 60_000,
        upstreamTimeoutMs: 5_000,
        trustProxy: true,
        pretrustedTokens: [],
        allowList: [],
        denyList: [],
        backstage: { disableTokens: false, disableFeatures: false, disableMetrics: false },
        appName: 'vexil-edge',
        instanceId: 'vexil-edge-unknown',
        requestTimeoutMs: 5000,
        keepAliveTimeoutMs: 5000,
      },
    );
  });

  test('PRETRUSTED_TOKENS (frontend tokens and legacy proxy keys), ALLOW_LIST and DENY_LIST', () => {
    const config = loadEdgeConfig({
      UPSTREAM_URL: 'http://flags',
      PRETRUSTED_TOKENS: 'shop:production.f1a2b3, proxy-key-1@development',
      ALLOW_LIST: '10.0.0.0/8, 192.168.1.7, 2001:db8::/32',
      DENY_LIST: '10.6.6.6',
    });
    assert.deepEqual(config.pretrustedTokens, [
      { secret: 'shop:production.f1a2b3', environment: 'production', projects: ['shop'] },
      { secret: 'proxy-key-1@development', environment: 'development', projects: ['*'] },
    ]);
    assert.deepEqual([config.allowList, config.denyList], [['10.0.0.0/8', '192.168.1.7', '2001:db8::/32'], ['10.6.6.6']]);
  });

  test('offline mode: BOOTSTRAP_FILE with CLIENT_TOKENS and FRONTEND_TOKENS, read again on RELOAD_INTERVAL', () => {
    assert.deepEqual(
      loadEdgeConfig({
        BOOTSTRAP_FILE: './features.json',
        CLIENT_TOKENS: '*:production.a1',
        FRONTEND_TOKENS: '*:production.b2',
        RELOAD_INTERVAL: '30',
      }).source,
      {
        kind: 'offline',
        bootstrapFile: './features.json',
        clientTokens: ['*:production.a1'],
        frontendTokens: ['*:production.b2'],
        reloadIntervalMs: 30_000,
      },
    );
  });

  test('refuses what it cannot honour, naming the setting and never echoing a token', () => {
    for (const [env, message] of [
      [{}, /^UPSTREAM_URL is required/],
      [{ UPSTREAM_URL: 'ftp://flags' }, /^UPSTREAM_URL must be an absolute http or https URL/],
      [{ UPSTREAM_URL: 'http://flags', TOKENS: 'not a token' }, /^TOKENS must be comma-separated tokens .* \(entry 1 is not\)$/],
      [
        { UPSTREAM_URL: 'http://flags', REDIS_PASSWORD: 'hunter2' },
        /^REDIS_PASSWORD is not supported by Vexil Edge: give the password in REDIS_URL/,
      ],
      [{ UPSTREAM_URL: 'http://flags', REDIS_URL: 'http://cache' }, /^REDIS_URL must be a URL of the form redis:/],
      [
        { UPSTREAM_URL: 'http://flags', ALLOW_LIST: '10.0.0.0/8, not-an-address' },
        /^ALLOW_LIST must be comma-separated IP addresses or CIDR ranges/,
      ],
      [{ UPSTREAM_URL: 'http://flags', PRETRUSTED_TOKENS: 'nonsense' }, /^PRETRUSTED_TOKENS must be .* entry 1 is neither$/],
      [{ UPSTREAM_URL: 'http://flags', DENY_LIST: '300.1.1.1' }, /^DENY_LIST must be comma-separated IP addresses/],
      [{ UPSTREAM_URL: 'http://flags', LOG_FORMAT: 'pretty' }, /^LOG_FORMAT must be json/],
      [{ UPSTREAM_URL: 'http://flags', WORKERS: '4' }, /^WORKERS is not supported by Vexil Edge: an edge is one Node process/],
      [{ UPSTREAM_URL: 'http://flags', BOOTSTRAP_FILE: 'f.json' }, /not both$/],
      [{ BOOTSTRAP_FILE: 'f.json' }, /set at least one$/],
      [{ UPSTREAM_URL: 'http://flags', METRICS_INTERVAL_SECONDS: '0' }, /^METRICS_INTERVAL_SECONDS must be a whole number from 1 to 86400/],
    ] as const) {
      assert.throws(
        () => loadEdgeConfig(env as Record<string, string>),
        (error: Error) => error instanceof ConfigError && message.test(error.message) && !error.message.includes('not a token'),
        JSON.stringify(env),
      );
    }
  });
});

describe('the SMTP server for password reset emails', () => {
  test('reads EMAIL_* as Unleash names them', () => {
    const config = loadConfig({
      EMAIL_HOST: 'smtp.example.com',
      EMAIL_PORT: '465',
      EMAIL_SECURE: 'true',
      EMAIL_USER: 'vexil',
      EMAIL_PASSWORD: 'smtp-secret',
      EMAIL_SENDER: 'flags@example.com',
    });
    assert.deepEqual(config.email, {
      host: 'smtp.example.com',
      port: 465,
      secure: true,
      user: 'vexil',
      password: 'smtp-secret',
      sender: 'flags@example.com',
    });
    assert.equal(loadConfig({}).email, undefined);
  });
});

describe('OpenTelemetry', () => {
  test('is off without an OTLP endpoint, on with one unless OTEL_SDK_DISABLED, and samples 1% of evaluations by default', () => {
    const metrics = { protocol: 'http/protobuf', exportIntervalMs: 60_000 };
    assert.deepEqual(loadTelemetryConfig({}), { enabled: false, flagEvaluationEventsRatio: 0.01, metrics });
    assert.deepEqual(loadTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), {
      enabled: true,
      flagEvaluationEventsRatio: 0.01,
      metrics,
    });
    assert.equal(loadTelemetryConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).enabled, true);
    assert.equal(loadTelemetryConfig({ OTEL_SERVICE_NAME: ' flags ' }).serviceName, 'flags');
    assert.equal(loadTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).enabled, false);
    for (const [given, ratio] of [
      ['0', 0],
      ['1', 1],
      ['0.25', 0.25],
      ['.5', 0.5],
      ['1.0', 1],
    ] as const) {
      assert.equal(loadTelemetryConfig({ FLAG_EVALUATION_EVENTS_RATIO: given }).flagEvaluationEventsRatio, ratio);
    }
  });

  test('exports the metrics over OTLP unless OTEL_METRICS_EXPORTER=none, by the metrics protocol, else the common one', () => {
    assert.equal(loadTelemetryConfig({ OTEL_METRICS_EXPORTER: 'none' }).metrics, undefined);
    assert.deepEqual(loadTelemetryConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_METRIC_EXPORT_INTERVAL: '15000' }).metrics, {
      protocol: 'grpc',
      exportIntervalMs: 15_000,
    });
    assert.deepEqual(
      loadTelemetryConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' }).metrics?.protocol,
      'http/json',
    );
    for (const [env, message] of [
      [{ OTEL_METRICS_EXPORTER: 'prometheus' }, 'OTEL_METRICS_EXPORTER must be otlp or none (got "prometheus")'],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http' }, 'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf, http/json or grpc (got "http")'],
      [
        { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'udp' },
        'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL must be http/protobuf, http/json or grpc (got "udp")',
      ],
      [{ OTEL_METRIC_EXPORT_INTERVAL: '10' }, 'OTEL_METRIC_EXPORT_INTERVAL must be a whole number from 100 to 86400000 (got "10")'],
    ] as const) {
      assert.throws(
        () => loadTelemetryConfig(env),
        (error: unknown) => error instanceof ConfigError && error.message === message,
      );
    }
  });

  test('refuses an evaluation event ratio that is not a number from 0 to 1', () => {
    for (const given of ['1.5', '-0.1', 'half', '10%', '2']) {
      assert.throws(
        () => loadTelemetryConfig({ FLAG_EVALUATION_EVENTS_RATIO: given }),
        (error: unknown) =>
          error instanceof ConfigError && error.message === `FLAG_EVALUATION_EVENTS_RATIO must be a number from 0 to 1 (got "${given}")`,
      );
    }
  });
});
