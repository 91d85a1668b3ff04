import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { VERSION } from '../../shared/version.js';

// Unleash's instance statistics (`GET /api/admin/instance-admin/statistics`): what an operator reports about the
// installation's size. Every figure is a count over the tables; nothing is sent anywhere.

const DAY_MS = 86_400_000;
/** Unleash's built-in roles: three root roles and three project roles. */
const BUILT_IN_ROLES = 6;

export interface SignInMethods {
  oidc: boolean;
  saml: boolean;
  password: boolean;
}

const count = (value: unknown) => Number(value ?? 0);

export async function instanceStatistics(db: Db, signIn: SignInMethods, now: Date) {
  const ago = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const [instance, users, tokens, flags, tables, clientApps, events, buckets, limits] = await Promise.all([
    db.selectFrom('settings').select('content').where('name', '=', 'instance.id').executeTakeFirst(),
    db
      .selectFrom('users')
      .select([
        sql<string>`count(*) FILTER (WHERE NOT is_service)`.as('users'),
        sql<string>`count(*) FILTER (WHERE is_service)`.as('service_accounts'),
        sql<string>`count(*) FILTER (WHERE NOT is_service AND root_role = 'Viewer' AND custom_root_role_id IS NULL)`.as('viewers'),
        sql<string>`count(DISTINCT custom_root_role_id)`.as('custom_root_roles_in_use'),
        ...([7, 30, 60, 90] as const).map((days) =>
          sql<string>`count(*) FILTER (WHERE NOT is_service AND seen_at >= ${ago(days)})`.as(`active_${days}`),
        ),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('api_tokens')
      .select(['type', (eb) => eb.fn.countAll<string>().as('count')])
      .groupBy('type')
      .orderBy('type')
      .execute(),
    db
      .selectFrom('features')
      .select([
        sql<string>`count(*) FILTER (WHERE archived_at IS NULL)`.as('active'),
        sql<string>`count(*) FILTER (WHERE archived_at IS NOT NULL)`.as('archived'),
      ])
      .executeTakeFirstOrThrow(),
    sql<Record<string, string>>`SELECT
      (SELECT count(*) FROM projects) AS projects,
      (SELECT count(*) FROM context_fields) AS context_fields,
      (SELECT count(*) FROM roles) AS custom_roles,
      (SELECT count(*) FROM roles WHERE type = 'root-custom') AS custom_root_roles,
      (SELECT count(*) FROM groups) AS groups,
      (SELECT count(*) FROM environments) AS environments,
      (SELECT count(*) FROM segments) AS segments,
      (SELECT count(*) FROM strategy_definitions) AS strategies,
      (SELECT count(*) FROM release_plan_templates) AS release_templates,
      (SELECT count(*) FROM release_plans) AS release_plans,
      (SELECT count(*) FROM scim_tokens) AS scim_tokens`.execute(db),
    db
      .selectFrom('client_applications')
      .select([
        sql<string>`count(*) FILTER (WHERE seen_at >= ${ago(7)})`.as('d7'),
        sql<string>`count(*) FILTER (WHERE seen_at >= ${ago(30)})`.as('d30'),
        (eb) => eb.fn.countAll<string>().as('all'),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('events')
      .select([
        sql<string>`count(*) FILTER (WHERE type = 'features-exported')`.as('exports'),
        sql<string>`count(*) FILTER (WHERE type = 'features-imported')`.as('imports'),
        ...([30, 60, 90] as const).map((days) =>
          sql<string>`count(*) FILTER (WHERE created_at >= ${ago(days)}
            AND environment IN (SELECT name FROM environments WHERE type = 'production'))`.as(`production_${days}`),
        ),
      ])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('feature_usage_hourly')
      .where('hour', '>=', ago(2))
      .where('hour', '<', ago(1))
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow(),
    sql<Record<string, string | null>>`SELECT
      (SELECT max(n) FROM (SELECT count(*) AS n FROM feature_strategies GROUP BY feature_name, environment) per_environment)
        AS max_environment_strategies,
      (SELECT max(jsonb_array_length(constraints::jsonb)) FROM feature_strategies) AS max_constraints,
      (SELECT max(jsonb_array_length(c -> 'values')) FROM feature_strategies s,
         jsonb_array_elements(s.constraints::jsonb) c WHERE jsonb_typeof(c -> 'values') = 'array') AS max_constraint_values`.execute(db),
  ]);
  const table = tables.rows[0]!;
  const limit = limits.rows[0]!;
  const instanceId = String((instance?.content as { id?: string } | undefined)?.id ?? '');
  const statistics = {
    timestamp: now.toISOString(),
    instanceId,
    versionOSS: VERSION,
    versionEnterprise: '',
    users: count(users.users),
    serviceAccounts: count(users.service_accounts),
    apiTokens: Object.fromEntries(tokens.map((row) => [row.type, count(row.count)])),
    activeUsers: {
      last7: count(users.active_7),
      last30: count(users.active_30),
      last60: count(users.active_60),
      last90: count(users.active_90),
    },
    licensedUsers: count(users.users),
    readOnlyUsers: count(users.viewers),
    featureToggles: count(flags.active),
    archivedFeatureToggles: count(flags.archived),
    projects: count(table.projects),
    contextFields: count(table.context_fields),
    roles: BUILT_IN_ROLES + count(table.custom_roles),
    customRootRoles: count(table.custom_root_roles),
    customRootRolesInUse: count(users.custom_root_roles_in_use),
    groups: count(table.groups),
    environments: count(table.environments),
    segments: count(table.segments),
    strategies: count(table.strategies),
    SAMLenabled: signIn.saml,
    OIDCenabled: signIn.oidc,
    passwordAuthEnabled: signIn.password,
    SCIMenabled: count(table.scim_tokens) > 0,
    clientApps: [
      { range: '7d', count: count(clientApps.d7) },
      { range: '30d', count: count(clientApps.d30) },
      { range: 'allTime', count: count(clientApps.all) },
    ],
    featureExports: count(events.exports),
    featureImports: count(events.imports),
    productionChanges: { last30: count(events.production_30), last60: count(events.production_60), last90: count(events.production_90) },
    previousDayMetricsBucketsCount: { enabledCount: count(buckets.count), variantCount: 0 },
    maxEnvironmentStrategies: count(limit.max_environment_strategies),
    maxConstraints: count(limit.max_constraints),
    maxConstraintValues: count(limit.max_constraint_values),
    releaseTemplates: count(table.release_templates),
    releasePlans: count(table.release_plans),
    edgeInstanceUsage: {},
  };
  // Unleash signs the figures a licence depends on, so a report can be checked against tampering by hand.
  const sum = createHash('sha256')
    .update(
      `${instanceId}${statistics.users}${statistics.featureToggles}${statistics.projects}${statistics.roles}${statistics.groups}${statistics.environments}${statistics.segments}`,
    )
    .digest('hex');
  return { ...statistics, sum };
}
