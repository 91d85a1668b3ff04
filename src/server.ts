import { ChangeFeed } from './domain/events/change-feed.js';
import { HourlyCount } from './shared/hourly-count.js';
import { REGISTRATIONS_PER_ADDRESS_HOUR } from './domain/agent-authorization/agent-authorization.js';
import { McpSessions } from './http/mcp/mcp-sessions.js';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { DatabaseHandle, Db } from './db/database.js';
import { startEmbeddedMaintenance } from './db/embedded-maintenance.js';
import { CHANGED_SETTINGS } from './db/notification-channels.js';
import { inUnitOfWork, type UnitOfWorkDeps } from './db/unit-of-work.js';
import { SYSTEM_ACTOR } from './domain/access/actor.js';
import { setUpInstallation, type BootstrapResult } from './domain/bootstrap/bootstrap.js';
import { ClientFeatureStore } from './domain/client-features/client-feature-store.js';
import { configurationChanges } from './domain/events/configuration-changes.js';
import { loadEnvironmentConfiguration } from './domain/client-features/environment-configuration.js';
import { NewApplicationLimit } from './domain/client-features/new-application-limit.js';
import { metricsSourcesOf } from './domain/metrics/database-figures.js';
import { FrontendApiOrigins } from './domain/settings/frontend-api-origins.js';
import { MaintenanceMode } from './domain/settings/maintenance-mode.js';
import { OidcSignIn } from './domain/sign-in/oidc-sign-in.js';
import { SamlSignIn } from './domain/sign-in/saml-sign-in.js';
import { SdkReportWriter } from './domain/usage/sdk-report-writer.js';
import { UsageTally } from './domain/usage/usage-tally.js';
import { LoginThrottle } from './domain/users/login-throttle.js';
import { ResetEmailLimit } from './domain/users/password-reset.js';
import { createMailer } from './shared/mailer.js';
import { buildApp, type BuildAppOptions } from './http/app.js';
import type { AppDeps, AppServices } from './http/deps.js';
import { EventStreams } from './http/sdk-api/event-streams.js';
import { Metrics } from './shared/metrics.js';
import { ChangeRequestScheduler } from './workers/change-request-scheduler.js';
import { startClientRetention } from './workers/client-retention.js';
import { startResetLinkRetention } from './workers/reset-link-retention.js';
import { startDeliveryWorker } from './workers/delivery-worker.js';
import { startEvaluationUsageWriter, writeEvaluationUsage } from './workers/evaluation-usage-writer.js';
import { startIntegrationEventRetention } from './workers/integration-event-retention.js';
import { ReleasePlanScheduler } from './workers/release-plan-scheduler.js';
import { startExperimentUpkeep } from './workers/experiment-upkeep.js';
import { startRemovalReadinessWatch } from './workers/removal-readiness-watch.js';
import { ExperimentIngest } from './domain/experiments/ingest.js';
import { ExperimentAnalyses } from './domain/experiments/results.js';

/**
 * The composition root: the one place that builds the server's long-lived services (the SDK store and its change
 * feed, the frontend origins, the limits, the evaluation usage tally, the OIDC client, the event streams) and its
 * workers, hands them to the app, and ends them in order. Route modules and the app build none of them.
 */

/** How often SDK reports held while the database is away are tried again. */
const HELD_REPORTS_RETRY_MS = 1_000;

/** Evaluations Vexil makes itself (OFREP) are recorded as the usage of this application. */
const EVALUATION_USAGE_APPLICATION = 'openfeature';

/** The set-up of every start (admin tokens, the first admin user), once across instances starting together. */
export function bootstrap(deps: UnitOfWorkDeps, initAdminApiTokens: string[]): Promise<BootstrapResult> {
  return inUnitOfWork(deps, SYSTEM_ACTOR, (uow) => setUpInstallation(uow, initAdminApiTokens), { inMaintenance: 'installation' });
}

export interface ComposedApp {
  app: FastifyInstance;
  services: AppServices;
}

/** The app and the services it holds; closing the app ends its streams first and then its services. */
export async function composeApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<ComposedApp> {
  const metrics = new Metrics(metricsSourcesOf(deps));
  // Work no request waits for is logged once the app's logger exists, and counted, so a failing reload is seen.
  let log: FastifyBaseLogger | undefined;
  const backgroundFailure = (work: string, what: string) => (error: unknown, environment?: string) => {
    metrics.backgroundFailures.inc({ work });
    log?.error({ err: error, environment }, `${what} failed; it is tried again on the next change or read`);
  };
  const changeFeed = new ChangeFeed(
    configurationChanges(deps, deps.config.database.kind === 'postgres' ? deps.config.database.changePollMs : 0),
    backgroundFailure('change feed subscriber', 'A subscriber of the change feed'),
  );
  const clientFeatures = new ClientFeatureStore(
    (environment, only, alsoSegments) => loadEnvironmentConfiguration(deps.db, environment, only, alsoSegments),
    backgroundFailure('sdk store rebuild', "Rebuilding an environment's SDK configuration"),
  );
  changeFeed.subscribe((payload) => clientFeatures.changed(payload));
  metrics.countCachedClientAnswers(() => clientFeatures.cachedAnswers());
  const frontendApiOrigins = new FrontendApiOrigins(deps.db, deps.config.frontendApiOrigins);
  changeFeed.onChangeOf(CHANGED_SETTINGS, () => frontendApiOrigins.invalidate());
  const maintenanceMode = new MaintenanceMode(deps.db);
  changeFeed.onChangeOf(CHANGED_SETTINGS, () => maintenanceMode.invalidate());
  await changeFeed.start();
  const ingest = new ExperimentIngest(deps.db, deps.clock, {
    eventsPerMinutePerToken: deps.config.experiments.eventsPerMinutePerToken,
    ...(deps.config.database.kind === 'pglite' ? { embeddedTrackedEventCap: deps.config.experiments.embeddedTrackedEventCap } : {}),
  });
  const services: AppServices = {
    metrics,
    changeFeed,
    clientFeatures,
    frontendApiOrigins,
    maintenanceMode,
    newApplicationLimit: new NewApplicationLimit(
      deps.config.sdkBookkeeping.newApplicationsPerMinute,
      deps.config.sdkBookkeeping.maxApplications,
    ),
    evaluationUsage: new UsageTally(EVALUATION_USAGE_APPLICATION, deps.clock.now()),
    sdkReports: new SdkReportWriter(deps, {
      maxHeldBytes: deps.config.sdkBookkeeping.heldReportsMaxBytes,
      retryMs: HELD_REPORTS_RETRY_MS,
      databaseUp: deps.databaseUp,
      onOutcome: (kind, outcome) => metrics.heldSdkReports.inc({ kind, outcome }),
    }),
    loginThrottle: new LoginThrottle(),
    oauthRegistrations: new HourlyCount(REGISTRATIONS_PER_ADDRESS_HOUR),
    mailer: deps.config.email ? createMailer(deps.config.email) : undefined,
    resetEmailLimit: new ResetEmailLimit(),
    oidc: deps.config.oidc ? new OidcSignIn(deps.config.oidc, deps) : undefined,
    saml: deps.config.saml ? new SamlSignIn(deps.config.saml, deps) : undefined,
    streams: new EventStreams(metrics.streamingConnections),
    mcpSessions: new McpSessions(deps.clock),
    experimentIngest: ingest,
    assignments: ingest,
    experimentAnalyses: new ExperimentAnalyses(deps.db, deps.clock, {
      allowPrivateNetworks: deps.config.integrations.allowPrivateNetworks,
      statementTimeoutMs: deps.config.experiments.analysisTimeoutMs,
    }),
  };
  changeFeed.subscribe(() => services.experimentIngest.changed());
  services.experimentIngest.start(backgroundFailure('experiment assignments', "Writing experiments' assignments"));
  const app = await buildApp({ ...deps, ...services }, options);
  log = app.log;
  services.sdkReports.logTo(app.log);
  // Open streams end before the server waits for requests in flight: SDKs reconnect, to another instance.
  app.addHook('preClose', async () => {
    services.streams.endAll();
    await services.mcpSessions.close();
  });
  app.addHook('onClose', async () => {
    await writeEvaluationUsage(deps, services.evaluationUsage).catch((error: unknown) =>
      app.log.error({ err: error }, 'Recording the usage of OpenFeature evaluations failed'),
    );
    await services.sdkReports.stop();
    await services.experimentIngest.stop();
    services.mailer?.close();
    await changeFeed.stop();
  });
  // A provider that is down must not stop Vexil from starting; the log says so at once, and sign-ins retry.
  for (const [provider, what] of [
    [services.oidc, 'OpenID Connect'],
    [services.saml, 'SAML'],
  ] as const) {
    if (!provider) continue;
    app.addHook('onReady', async () => {
      void provider.check().then((problem) => problem && app.log.warn(`${what} sign-in is not ready: ${problem}`));
    });
  }
  return { app, services };
}

export interface WorkerDeps extends AppDeps {
  /** The workers' own connections on PostgreSQL: a burst of API writes must not starve deliveries. */
  workerDb: Db;
  engine: DatabaseHandle['engine'];
}

/** The periodic work of a running server; stopping waits for each pass in flight, so the database can close after. */
export async function startWorkers(
  deps: WorkerDeps,
  services: AppServices,
  log: FastifyBaseLogger,
): Promise<{ stopScheduling(): Promise<void>; stop(): Promise<void> }> {
  const workerDeps = { ...deps, db: deps.workerDb, metrics: services.metrics };
  const stopMaintenance = deps.engine === 'pglite' ? startEmbeddedMaintenance(deps.db, log) : () => undefined;
  const changeRequestScheduler = new ChangeRequestScheduler(workerDeps, log);
  changeRequestScheduler.start();
  const releasePlanScheduler = new ReleasePlanScheduler(
    { ...workerDeps, impactMetricsRetentionDays: deps.config.impactMetrics.retentionDays },
    log.child({ component: 'release-plans' }),
  );
  releasePlanScheduler.start();
  const integrationsLog = log.child({ component: 'integrations' });
  const deliveryWorker = await startDeliveryWorker({ ...workerDeps, log: integrationsLog });
  const integrationEventRetention = startIntegrationEventRetention({ ...workerDeps, log: integrationsLog });
  const clientRetention = startClientRetention({ ...workerDeps, log: log.child({ component: 'sdk-bookkeeping' }) });
  const resetLinkRetention = startResetLinkRetention({ ...workerDeps, log: log.child({ component: 'password-reset' }) });
  const evaluationUsageWriter = startEvaluationUsageWriter(deps, services.evaluationUsage, log);
  const experimentUpkeep = startExperimentUpkeep({
    ...workerDeps,
    analyses: services.experimentAnalyses,
    log: log.child({ component: 'experiments' }),
  });
  const removalReadinessWatch = startRemovalReadinessWatch({ ...workerDeps, log: log.child({ component: 'code-references' }) });
  return {
    /** Scheduled changes stop before requests in flight finish, so none starts during shutdown. */
    async stopScheduling() {
      stopMaintenance();
      await Promise.all([changeRequestScheduler.stop(), releasePlanScheduler.stop()]);
    },
    /** Deliveries in flight finish (each within the delivery timeout) while requests in flight do. */
    async stop() {
      await Promise.all([
        deliveryWorker.stop(),
        integrationEventRetention.stop(),
        clientRetention.stop(),
        resetLinkRetention.stop(),
        evaluationUsageWriter.stop(),
        experimentUpkeep.stop(),
        removalReadinessWatch.stop(),
      ]);
    },
  };
}
