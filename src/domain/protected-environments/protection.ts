import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';

/**
 * Whether changes to a project environment go through change requests, and how many approvals a request
 * there needs. This area (this module and the guard) is the one reader and writer of `change_request_settings`; an environment
 * without a row is unprotected and needs one approval once protected.
 */
export interface Protection {
  changeRequestsEnabled: boolean;
  requiredApprovals: number;
}

const UNPROTECTED: Protection = { changeRequestsEnabled: false, requiredApprovals: 1 };

const key = (project: string, environment: string) => `${project}\u0000${environment}`;

export async function protectionOf(db: Db, project: string, environment: string): Promise<Protection> {
  return (await protectionOfProjects(db, [project])).get(project, environment);
}

export async function isProtected(db: Db, project: string, environment: string): Promise<boolean> {
  return (await protectionOf(db, project, environment)).changeRequestsEnabled;
}

/** The environments of these projects that take changes only through change requests, by project and name. */
export function protectedEnvironmentsOf(db: Db, projects: string[]): Promise<Array<{ project: string; environment: string }>> {
  return db
    .selectFrom('change_request_settings')
    .select(['project', 'environment'])
    .where('project', 'in', [...new Set(projects)])
    .where('enabled', '=', true)
    .orderBy('project')
    .orderBy('environment')
    .execute();
}

/** The protection of every environment of these projects, read in one query. */
export async function protectionOfProjects(db: Db, projects: string[]): Promise<{ get(project: string, environment: string): Protection }> {
  const rows =
    projects.length === 0
      ? []
      : await db
          .selectFrom('change_request_settings')
          .selectAll()
          .where('project', 'in', [...new Set(projects)])
          .execute();
  const byEnvironment = new Map(
    rows.map((row) => [
      key(row.project, row.environment),
      { changeRequestsEnabled: row.enabled, requiredApprovals: row.required_approvals },
    ]),
  );
  return { get: (project, environment) => byEnvironment.get(key(project, environment)) ?? UNPROTECTED };
}

/**
 * Sets an environment's protection, keeping the required approvals as they were when left out; answers
 * what it was before. The row is locked first, so two changes at once apply one after the other.
 */
export async function setProtection(
  uow: UnitOfWork,
  project: string,
  environment: string,
  input: { changeRequestsEnabled: boolean; requiredApprovals?: number },
): Promise<{ before: Protection; after: Protection }> {
  const row = await uow.tx
    .selectFrom('change_request_settings')
    .select(['enabled', 'required_approvals'])
    .where('project', '=', project)
    .where('environment', '=', environment)
    .forUpdate()
    .executeTakeFirst();
  const before = row ? { changeRequestsEnabled: row.enabled, requiredApprovals: row.required_approvals } : UNPROTECTED;
  const after = {
    changeRequestsEnabled: input.changeRequestsEnabled,
    requiredApprovals: input.requiredApprovals ?? before.requiredApprovals,
  };
  const values = { enabled: after.changeRequestsEnabled, required_approvals: after.requiredApprovals };
  await uow.tx
    .insertInto('change_request_settings')
    .values({ project, environment, ...values })
    .onConflict((oc) => oc.columns(['project', 'environment']).doUpdateSet(values))
    .execute();
  return { before, after };
}
