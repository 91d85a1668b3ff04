import { type Kysely, type Migration, sql } from 'kysely';
import type { Db } from './database.js';
import * as foundation from './migrations/0001-foundation.js';
import * as flags from './migrations/0002-flags.js';
import * as favoriteProjects from './migrations/0003-favorite-projects.js';
import * as eventLog from './migrations/0004-event-log.js';
import * as usage from './migrations/0005-usage.js';
import * as integrations from './migrations/0006-integrations.js';
import * as changeRequests from './migrations/0007-change-requests.js';
import * as clientApplications from './migrations/0008-client-applications.js';
import * as strategyDefinitions from './migrations/0009-strategy-definitions.js';
import * as settings from './migrations/0010-settings.js';
import * as webhookSigning from './migrations/0011-webhook-signing.js';
import * as companyAccess from './migrations/0012-company-access.js';
import * as progressiveDelivery from './migrations/0013-progressive-delivery.js';
import * as hardening from './migrations/0014-hardening.js';
import * as sessions from './migrations/0015-sessions.js';
import * as signInAudit from './migrations/0016-sign-in-audit.js';
import * as scim from './migrations/0017-scim.js';
import * as customRoles from './migrations/0018-custom-roles.js';
import * as saml from './migrations/0019-saml.js';
import * as configurationRevision from './migrations/0020-configuration-revision.js';
import * as projectDefaultStrategies from './migrations/0021-project-default-strategies.js';
import * as userFeedbackAndSplash from './migrations/0022-user-feedback-and-splash.js';
import * as tags from './migrations/0023-tags.js';
import * as featureLinks from './migrations/0024-feature-links.js';
import * as passwordResetTokens from './migrations/0025-password-reset-tokens.js';
import * as featureTypeLifetimes from './migrations/0026-feature-type-lifetimes.js';
import * as applicationDetails from './migrations/0027-application-details.js';
import * as instanceId from './migrations/0028-instance-id.js';
import * as inviteLinks from './migrations/0029-invite-links.js';
import * as projectContextFields from './migrations/0030-project-context-fields.js';
import * as edgeClients from './migrations/0031-edge-clients.js';
import * as eventAgents from './migrations/0032-event-agents.js';
import * as agentAuthorization from './migrations/0033-agent-authorization.js';
import * as emailVerification from './migrations/0034-email-verification.js';
import * as experiments from './migrations/0035-experiments.js';
import * as experimentDataSources from './migrations/0036-experiment-data-sources.js';
import * as codeReferences from './migrations/0037-code-references.js';
import * as removalReadiness from './migrations/0038-removal-readiness.js';

/** Migrations in the order they run; names sort the same way. Never edit one that has shipped: add another. */
const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-flags': flags,
  '0003-favorite-projects': favoriteProjects,
  '0004-event-log': eventLog,
  '0005-usage': usage,
  '0006-integrations': integrations,
  '0007-change-requests': changeRequests,
  '0008-client-applications': clientApplications,
  '0009-strategy-definitions': strategyDefinitions,
  '0010-settings': settings,
  '0011-webhook-signing': webhookSigning,
  '0012-company-access': companyAccess,
  '0013-progressive-delivery': progressiveDelivery,
  '0014-hardening': hardening,
  '0015-sessions': sessions,
  '0016-sign-in-audit': signInAudit,
  '0017-scim': scim,
  '0018-custom-roles': customRoles,
  '0019-saml': saml,
  '0020-configuration-revision': configurationRevision,
  '0021-project-default-strategies': projectDefaultStrategies,
  '0022-user-feedback-and-splash': userFeedbackAndSplash,
  '0023-tags': tags,
  '0024-feature-links': featureLinks,
  '0025-password-reset-tokens': passwordResetTokens,
  '0026-feature-type-lifetimes': featureTypeLifetimes,
  '0027-application-details': applicationDetails,
  '0028-instance-id': instanceId,
  '0029-invite-links': inviteLinks,
  '0030-project-context-fields': projectContextFields,
  '0031-edge-clients': edgeClients,
  '0032-event-agents': eventAgents,
  '0033-agent-authorization': agentAuthorization,
  '0034-email-verification': emailVerification,
  '0035-experiments': experiments,
  '0036-experiment-data-sources': experimentDataSources,
  '0037-code-references': codeReferences,
  '0038-removal-readiness': removalReadiness,
};

/** An arbitrary constant naming the migrations' lock (`pg_advisory_xact_lock`), the same for every instance. */
const MIGRATION_LOCK = 7_235_113_001;

/**
 * Brings the schema up to date in one transaction, under a transaction-level advisory lock: instances starting
 * together on one PostgreSQL wait for each other, each migration runs once, and a failed one leaves nothing behind.
 * Nothing outlives the transaction (no session lock, no session setting), so it works the same through a pooler in
 * transaction mode (PgBouncer), where consecutive statements outside a transaction may reach different server
 * connections: Kysely's own Migrator takes a session lock there and releases it in another statement. The record of
 * what ran is Kysely's table (`kysely_migration`), so databases migrated before keep their history.
 */
export async function migrateToLatest(db: Db): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
    await sql`CREATE TABLE IF NOT EXISTS kysely_migration (name varchar(255) PRIMARY KEY, timestamp varchar(255) NOT NULL)`.execute(tx);
    const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(tx);
    const ran = new Set(rows.map((row) => row.name));
    const unknown = [...ran].filter((name) => !(name in migrations));
    if (unknown.length > 0) {
      throw new Error(`The database was migrated by a newer Vexil (migrations ${unknown.join(', ')} are not known to this one)`);
    }
    for (const [name, migration] of Object.entries(migrations)) {
      if (ran.has(name)) continue;
      await migration.up(tx as unknown as Kysely<unknown>);
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${name}, ${new Date().toISOString()})`.execute(tx);
    }
  });
}
