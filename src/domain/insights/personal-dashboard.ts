import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { actorRootRole } from '../access/actor.js';
import { describeEvent } from '../events/event-descriptions.js';
import { getProject } from '../projects/projects.js';
import { getHeldRoles, getProfile, signedInPersonOf } from '../users/profile.js';
import { personName } from '../features/project-flags.js';
import { onboardingStatus } from './onboarding.js';
import { flagHealth } from './project-insights.js';

// Unleash's personal dashboard: the projects a person takes part in, the flags they made or follow, and whom to ask.

const LATEST_EVENTS = 10;

const userIdOf = (actor: Actor) => signedInPersonOf(actor, 'a personal dashboard');

/** The people and groups holding the Owner role in each of the projects, with emails for an Admin only. */
async function ownersOf(db: Db, projects: string[], showEmails: boolean) {
  if (projects.length === 0) return [];
  const [users, groups] = await Promise.all([
    db
      .selectFrom('project_access as pa')
      .innerJoin('users as u', 'u.id', 'pa.user_id')
      .select(['pa.project_id', 'u.id', 'u.name', 'u.username', 'u.email', 'u.image_url'])
      .where('pa.project_id', 'in', projects)
      .where('pa.role', '=', 'Owner')
      .where('u.deactivated_at', 'is', null)
      .orderBy('u.id')
      .execute(),
    db
      .selectFrom('project_access as pa')
      .innerJoin('groups as g', 'g.id', 'pa.group_id')
      .select(['pa.project_id', 'g.name'])
      .where('pa.project_id', 'in', projects)
      .where('pa.role', '=', 'Owner')
      .orderBy('g.name')
      .execute(),
  ]);
  return [
    ...users.map((row) => ({
      project: row.project_id,
      owner: { ownerType: 'user' as const, name: personName(row), imageUrl: row.image_url, email: showEmails ? row.email : null },
    })),
    ...groups.map((row) => ({ project: row.project_id, owner: { ownerType: 'group' as const, name: row.name } })),
  ];
}

/** `GET /api/admin/personal-dashboard`. */
export async function personalDashboard(db: Db, actor: Actor, now: Date) {
  const userId = userIdOf(actor);
  const showEmails = actorRootRole(actor) === 'Admin';
  const profile = await getProfile(db, actor, false);
  const [admins, projects, flags, owners] = await Promise.all([
    db
      .selectFrom('users')
      .select(['id', 'name', 'username', 'email', 'image_url'])
      .where('root_role', '=', 'Admin')
      .where('custom_root_role_id', 'is', null)
      .where('is_service', '=', false)
      .where('deactivated_at', 'is', null)
      .orderBy('id')
      .limit(100)
      .execute(),
    Promise.all(
      profile.projects.map(async (id) => {
        const [project, health, counts] = await Promise.all([
          getProject(db, id),
          flagHealth(db, id, now),
          db
            .selectFrom('features')
            .where('project', '=', id)
            .where('archived_at', 'is', null)
            .select((eb) => [
              eb.fn.countAll<string>().as('flags'),
              eb
                .selectFrom('project_access')
                .where('project_id', '=', id)
                .where('user_id', 'is not', null)
                .select((inner) => inner.fn.count<string>('user_id').distinct().as('n'))
                .as('members'),
            ])
            .executeTakeFirstOrThrow(),
        ]);
        return {
          id,
          name: project.name,
          health: health.rating,
          technicalDebt: 100 - health.rating,
          memberCount: Number(counts.members ?? 0),
          featureCount: Number(counts.flags),
        };
      }),
    ),
    db
      .selectFrom('features as f')
      .select(['f.name', 'f.project', 'f.type'])
      .where('f.archived_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('f.created_by_user_id', '=', userId),
          eb.exists(
            eb
              .selectFrom('favorite_features as ff')
              .select('ff.feature_name')
              .whereRef('ff.feature_name', '=', 'f.name')
              .where('ff.user_id', '=', userId),
          ),
        ]),
      )
      .orderBy('f.name')
      .limit(1000)
      .execute(),
    ownersOf(db, profile.projects, showEmails),
  ]);
  const seen = new Set<string>();
  return {
    admins: admins.map((row) => ({
      id: row.id,
      name: personName(row),
      ...(row.username ? { username: row.username } : {}),
      ...(row.image_url ? { imageUrl: row.image_url } : {}),
      ...(showEmails && row.email ? { email: row.email } : {}),
    })),
    projectOwners: owners.flatMap(({ owner }) =>
      owner.ownerType === 'user' && !seen.has(owner.name) && seen.add(owner.name) ? [owner] : [],
    ),
    projects,
    flags,
  };
}

/** `GET /api/admin/personal-dashboard/:projectId`: one of the person's projects in more detail. */
export async function personalDashboardProject(db: Db, actor: Actor, project: string, now: Date) {
  userIdOf(actor);
  await getProject(db, project);
  const [health, onboarding, events, owners, roles] = await Promise.all([
    flagHealth(db, project, now),
    onboardingStatus(db, project),
    db
      .selectFrom('events as e')
      .leftJoin('users as u', 'u.id', 'e.created_by_user_id')
      .select([
        'e.id',
        'e.type',
        'e.created_by',
        'e.created_at',
        'e.project',
        'e.environment',
        'e.feature_name',
        'e.data',
        'e.pre_data',
        'u.image_url',
      ])
      .where('e.project', '=', project)
      .orderBy('e.id', 'desc')
      .limit(LATEST_EVENTS)
      .execute(),
    ownersOf(db, [project], actorRootRole(actor) === 'Admin'),
    getHeldRoles(db, actor, project),
  ]);
  const totalFlags = health.activeCount + health.staleCount;
  return {
    insights: {
      // Vexil keeps no history of a project's health, so the windows' averages are unknown.
      avgHealthCurrentWindow: null,
      avgHealthPastWindow: null,
      totalFlags,
      activeFlags: health.activeCount - health.potentiallyStaleCount,
      staleFlags: health.staleCount,
      potentiallyStaleFlags: health.potentiallyStaleCount,
      health: health.rating,
      technicalDebt: 100 - health.rating,
    },
    onboardingStatus: onboarding,
    latestEvents: events.map((row) => ({
      id: row.id,
      summary: describeEvent({
        type: row.type,
        createdBy: row.created_by,
        project: row.project,
        environment: row.environment,
        featureName: row.feature_name,
        data: row.data,
        preData: row.pre_data,
      }).summary,
      createdBy: row.created_by,
      createdByImageUrl: row.image_url ?? '',
      createdAt: row.created_at.toISOString(),
    })),
    owners: owners.length > 0 ? owners.map(({ owner }) => owner) : [{ ownerType: 'system' as const }],
    roles: roles.map((role) => ({
      id: role.id,
      name: role.name,
      type: role.type === 'custom' ? ('custom' as const) : ('project' as const),
    })),
  };
}
