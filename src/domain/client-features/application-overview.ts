import type { Actor } from '../../db/unit-of-work.js';
import { inProjectVisibleTo } from '../access/project-visibility.js';
import { sql } from 'kysely';
import semver from 'semver';
import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { NotFoundError } from '../../shared/errors.js';
import { parseWholeNumber } from '../../shared/filters.js';
import { recordEvent } from '../events/record-event.js';

// What Unleash's application pages read: an application across its environments, its recent instances, the SDK
// versions worth upgrading, and the applications that use a project's flags.

/**
 * The oldest release of each SDK that is not outdated: the first with the features current servers rely on
 * (streaming, delta updates, strategy variants). `sdkVersion` is `name:version`, as SDKs register.
 */
const MINIMUM_SDK_VERSIONS: Record<string, string> = {
  'unleash-client-node': '5.3.2',
  'unleash-client-nextjs': '1.6.2',
  'unleash-client-java': '9.2.0',
  'unleash-client-go': '4.1.0',
  'unleash-client-python': '5.11.0',
  'unleash-client-ruby': '5.0.0',
  'unleash-client-dotnet': '4.1.3',
  'unleash-client-php': '2.3.0',
  'unleash-node-sdk': '6.6.0',
  'unleash-nextjs-sdk': '1.6.2',
  'unleash-java-sdk': '11.0.2',
  'unleash-go-sdk': '5.0.3',
  'unleash-python-sdk': '6.3.0',
  'unleash-ruby-sdk': '6.3.1',
  'unleash-dotnet-sdk': '5.3.0',
  'unleash-php-sdk': '2.9.1',
};

/** SDKs that run in a browser or app and read the frontend API; the others are backend SDKs. */
const FRONTEND_SDKS = new Set(['unleash-client-js', 'unleash-proxy-client', 'unleash-react-sdk', 'unleash-ios-sdk', 'unleash-android-sdk']);

const sdkName = (sdkVersion: string) => sdkVersion.split(':')[0]!;

export function isOutdatedSdk(sdkVersion: string): boolean {
  const [name, version] = sdkVersion.split(':');
  const minimum = name ? MINIMUM_SDK_VERSIONS[name] : undefined;
  return minimum !== undefined && version !== undefined && semver.valid(version) !== null && semver.lt(version, minimum);
}

/** An application's instances count as current for a day after their last report. */
const RECENT_MS = 24 * 3_600_000;

export interface ApplicationDetails {
  description?: string | null;
  url?: string | null;
  color?: string | null;
  icon?: string | null;
  strategies?: string[];
}

/**
 * Creates an application or describes it (Unleash's `POST /api/admin/metrics/applications/:appName`): what is given
 * replaces what was there, what is left out stays. Records `application-created` or `application-updated`.
 */
export async function describeApplication(uow: UnitOfWork, appName: string, details: ApplicationDetails): Promise<void> {
  const before = await uow.tx
    .selectFrom('client_applications')
    .select(['description', 'url', 'color', 'icon', 'strategies'])
    .where('app_name', '=', appName)
    .forUpdate()
    .executeTakeFirst();
  const given = Object.fromEntries(Object.entries(details).filter(([, value]) => value !== undefined)) as ApplicationDetails;
  if (!before) {
    await uow.tx
      .insertInto('client_applications')
      .values({ app_name: appName, strategies: given.strategies ?? [], created_at: uow.now, seen_at: uow.now, ...given })
      .execute();
    await recordEvent(uow, { type: 'application-created', data: { appName, ...given } });
    return;
  }
  if (Object.keys(given).length === 0) return;
  await uow.tx.updateTable('client_applications').set(given).where('app_name', '=', appName).execute();
  await recordEvent(uow, {
    type: 'application-updated',
    data: { appName, ...before, ...given },
    preData: { appName, ...before },
  });
}

interface OverviewEnvironment {
  name: string;
  instanceCount: number;
  sdks: string[];
  frontendSdks: string[];
  backendSdks: string[];
  lastSeen: string | null;
  issues: { missingFeatures: string[]; outdatedSdks: string[] };
}

/**
 * An application across the environments it reports from: its instances and SDKs of the last day, the flags it
 * evaluated (the names it asked for that no flag has are its missing features), the projects those flags are in,
 * and the strategies it runs that Vexil does not define.
 */
export async function applicationOverview(db: Db, actor: Actor, appName: string, now: Date) {
  const application = await db.selectFrom('client_applications').select('strategies').where('app_name', '=', appName).executeTakeFirst();
  if (!application) throw new NotFoundError(`Could not find the application "${appName}"`);
  const since = new Date(now.getTime() - RECENT_MS);
  const [instances, usage, missing, strategies] = await Promise.all([
    db
      .selectFrom('client_instances')
      .where('app_name', '=', appName)
      .where('seen_at', '>=', since)
      .select([
        'environment',
        sql<string>`count(DISTINCT instance_id)`.as('instances'),
        sql<string[] | null>`array_agg(DISTINCT sdk_version) FILTER (WHERE sdk_version IS NOT NULL)`.as('sdks'),
        sql<Date>`max(seen_at)`.as('last_seen'),
      ])
      .groupBy('environment')
      .execute(),
    db
      .selectFrom('feature_usage_hourly as h')
      .innerJoin('features as f', 'f.name', 'h.feature_name')
      .where('h.app_name', '=', appName)
      .where(inProjectVisibleTo(actor, 'f.project'))
      .select(['h.environment', 'f.project', 'f.name'])
      .distinct()
      .execute(),
    db
      .selectFrom('client_application_missing_flags as m')
      .where('m.app_name', '=', appName)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('features').select('name').whereRef('features.name', '=', 'm.feature_name'))),
      )
      .select(['m.environment', 'm.feature_name'])
      .orderBy('m.feature_name')
      .execute(),
    db.selectFrom('strategy_definitions').select('name').execute(),
  ]);
  const names = new Set([...instances.map((row) => row.environment), ...usage.map((row) => row.environment)]);
  const environments: OverviewEnvironment[] = [...names].sort().map((name) => {
    const reported = instances.find((row) => row.environment === name);
    const sdks = [...(reported?.sdks ?? [])].sort();
    return {
      name,
      instanceCount: Number(reported?.instances ?? 0),
      sdks,
      frontendSdks: sdks.filter((sdk) => FRONTEND_SDKS.has(sdkName(sdk))),
      backendSdks: sdks.filter((sdk) => !FRONTEND_SDKS.has(sdkName(sdk))),
      lastSeen: reported ? new Date(reported.last_seen).toISOString() : null,
      issues: {
        missingFeatures: missing.filter((row) => row.environment === name).map((row) => row.feature_name),
        outdatedSdks: sdks.filter(isOutdatedSdk),
      },
    };
  });
  const defined = new Set(strategies.map((row) => row.name));
  return {
    projects: [...new Set(usage.map((row) => row.project))].sort(),
    featureCount: new Set(usage.map((row) => row.name)).size,
    environments,
    issues: { missingStrategies: application.strategies.filter((strategy) => !defined.has(strategy)).sort() },
  };
}

/** The application's instances in one environment that reported in the last day, the latest first. */
export async function recentEnvironmentInstances(db: Db, appName: string, environment: string, now: Date) {
  const rows = await db
    .selectFrom('client_instances')
    .select(['instance_id', 'sdk_version', 'client_ip', 'seen_at'])
    .where('app_name', '=', appName)
    .where('environment', '=', environment)
    .where('seen_at', '>=', new Date(now.getTime() - RECENT_MS))
    .orderBy('seen_at', 'desc')
    .orderBy('instance_id')
    .limit(1000)
    .execute();
  return {
    instances: rows.map((row) => ({
      instanceId: row.instance_id,
      sdkVersion: row.sdk_version,
      clientIp: row.client_ip,
      lastSeen: row.seen_at.toISOString(),
    })),
  };
}

/** The outdated SDK versions in use, each with the applications using it (of one project's flags, when given). */
export async function outdatedSdks(db: Db, project?: string) {
  let query = db
    .selectFrom('client_instances as i')
    .select(['i.sdk_version', 'i.app_name'])
    .distinct()
    .where('i.sdk_version', 'is not', null);
  if (project !== undefined) {
    query = query.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('feature_usage_hourly as h')
          .innerJoin('features as f', 'f.name', 'h.feature_name')
          .select('h.app_name')
          .whereRef('h.app_name', '=', 'i.app_name')
          .where('f.project', '=', project),
      ),
    );
  }
  const byVersion = new Map<string, string[]>();
  for (const row of await query.execute()) {
    const version = row.sdk_version!;
    if (isOutdatedSdk(version)) byVersion.set(version, [...(byVersion.get(version) ?? []), row.app_name]);
  }
  return {
    sdks: [...byVersion]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([sdkVersion, applications]) => ({ sdkVersion, applications: applications.sort() })),
  };
}

export interface ProjectApplicationsQuery {
  /** Part of an application's name, environment, instance or SDK. */
  query?: string;
  offset?: string;
  limit?: string;
  sortBy?: string;
  sortOrder?: string;
}

/** The applications that evaluated a project's flags, with their environments, instances and SDKs, a page at a time. */
export async function projectApplications(db: Db, project: string, parameters: ProjectApplicationsQuery) {
  const limit = parseWholeNumber('limit', parameters.limit, 50, 1, 1000);
  const offset = parseWholeNumber('offset', parameters.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const exists = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!exists) throw new NotFoundError(`Could not find project "${project}"`);
  const apps = await db
    .selectFrom('feature_usage_hourly as h')
    .innerJoin('features as f', 'f.name', 'h.feature_name')
    .where('f.project', '=', project)
    .select('h.app_name')
    .distinct()
    .orderBy('h.app_name')
    .limit(10_000)
    .execute();
  const names = apps.map((row) => row.app_name);
  const instances =
    names.length === 0
      ? []
      : await db
          .selectFrom('client_instances')
          .select(['app_name', 'environment', 'instance_id', 'sdk_version'])
          .where('app_name', 'in', names)
          .orderBy('instance_id')
          .execute();
  const text = parameters.query?.trim().toLowerCase();
  const applications = names
    .map((name) => {
      const own = instances.filter((row) => row.app_name === name);
      const versions = new Map<string, Set<string>>();
      for (const row of own) {
        if (!row.sdk_version) continue;
        const [sdk, version = ''] = row.sdk_version.split(':');
        versions.set(sdk!, (versions.get(sdk!) ?? new Set()).add(version));
      }
      return {
        name,
        environments: [...new Set(own.map((row) => row.environment))].sort(),
        instances: [...new Set(own.map((row) => row.instance_id))],
        sdks: [...versions].sort(([a], [b]) => a.localeCompare(b)).map(([sdk, set]) => ({ name: sdk, versions: [...set].sort() })),
      };
    })
    .filter(
      (application) =>
        !text ||
        [application.name, ...application.environments, ...application.instances, ...application.sdks.map((sdk) => sdk.name)].some(
          (value) => value.toLowerCase().includes(text),
        ),
    );
  if (parameters.sortOrder === 'desc') applications.reverse();
  return { total: applications.length, applications: applications.slice(offset, offset + limit) };
}
