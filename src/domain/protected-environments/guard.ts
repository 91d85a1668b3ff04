import type { UnitOfWork } from '../../db/unit-of-work.js';
import { PermissionError } from '../../shared/errors.js';
import { actorRootRole } from '../access/actor.js';
import { roleHasPermission } from '../access/permissions.js';
import { recordEvent } from '../events/record-event.js';

/**
 * What a direct change touches: a flag in one environment (on/off, strategies, variants), a flag as a whole,
 * which reaches every environment of its project (archive, dependencies), or a segment, which reaches every
 * environment whose strategies use it.
 */
export type GuardedTarget =
  | { kind: 'flag-environment'; project: string; featureName: string; environment: string }
  | { kind: 'flag'; project: string; featureName: string }
  | { kind: 'segment'; segmentId: number }
  /** Adding or removing an environment of a project, which starts or stops serving every flag of the project there. */
  | { kind: 'project-environment'; project: string; environment: string }
  /** Deleting an environment, which removes it from every project. */
  | { kind: 'environment'; environment: string };

interface ProtectedEnvironment {
  project: string;
  environment: string;
}

async function protectedEnvironments(uow: UnitOfWork, target: GuardedTarget): Promise<ProtectedEnvironment[]> {
  if (target.kind === 'segment') {
    // Strategies of archived flags are not served, so they do not make a segment's change reach anyone.
    return uow.tx
      .selectFrom('feature_strategy_segments as fss')
      .innerJoin('feature_strategies as fs', 'fs.id', 'fss.strategy_id')
      .innerJoin('features as f', 'f.name', 'fs.feature_name')
      .innerJoin('change_request_settings as s', (join) =>
        join.onRef('s.project', '=', 'f.project').onRef('s.environment', '=', 'fs.environment'),
      )
      .select(['s.project', 's.environment'])
      .distinct()
      .where('fss.segment_id', '=', target.segmentId)
      .where('f.archived_at', 'is', null)
      .where('s.enabled', '=', true)
      .orderBy('s.project')
      .orderBy('s.environment')
      .execute();
  }
  let query = uow.tx.selectFrom('change_request_settings').select(['project', 'environment']).where('enabled', '=', true);
  if (target.kind !== 'environment') query = query.where('project', '=', target.project);
  if (target.kind !== 'flag') query = query.where('environment', '=', target.environment);
  return query.orderBy('project').orderBy('environment').execute();
}

const appliedScopes = new WeakMap<UnitOfWork, Promise<ProtectedEnvironment | undefined>>();

/** The project and environment of the change request this unit of work applies, read once per unit of work. */
function appliedScope(uow: UnitOfWork): Promise<ProtectedEnvironment | undefined> {
  const changeRequestId = uow.changeRequestId;
  if (changeRequestId === undefined) return Promise.resolve(undefined);
  let scope = appliedScopes.get(uow);
  if (!scope) {
    scope = uow.tx.selectFrom('change_requests').select(['project', 'environment']).where('id', '=', changeRequestId).executeTakeFirst();
    appliedScopes.set(uow, scope);
  }
  return scope;
}

/**
 * Whether a change request's approval covers a protected environment the change reaches: a change request covers
 * its own project and environment; a flag-wide change (archive, dependencies) made through a change request of the
 * flag's project covers that project. A segment reaching other projects' protected environments (a global one) is
 * covered only in the request's own: the others' approvers never saw it.
 */
function coveredByChangeRequest(target: GuardedTarget, scope: ProtectedEnvironment, reached: ProtectedEnvironment): boolean {
  switch (target.kind) {
    case 'flag-environment':
      return target.project === scope.project && target.environment === scope.environment;
    case 'flag':
      return target.project === scope.project;
    case 'segment':
      return reached.project === scope.project && reached.environment === scope.environment;
    case 'project-environment':
    case 'environment':
      return false;
  }
}

const listEnvironments = (environments: ProtectedEnvironment[]) =>
  environments.map((e) => `"${e.environment}" of project "${e.project}"`).join(', ');

function whatIsProtected(target: GuardedTarget, where: string): string {
  switch (target.kind) {
    case 'flag-environment':
      return `Change requests are enabled for environment ${where}`;
    case 'flag':
      return `Flag "${target.featureName}" reaches environments with change requests (${where})`;
    case 'segment':
      return `Segment ${target.segmentId} is used by strategies in environments with change requests (${where})`;
    case 'project-environment':
      return `Change requests are enabled for environment ${where}: adding or removing it there turns every flag of the project on or off in it`;
    case 'environment':
      return `Environment "${target.environment}" takes changes only through change requests in ${where}; deleting it turns their flags off`;
  }
}

function refusal(target: GuardedTarget, environments: ProtectedEnvironment[]): PermissionError {
  return new PermissionError(
    `${whatIsProtected(target, listEnvironments(environments))}: propose this change in a change request, or ask an Admin to bypass them`,
    ['SKIP_CHANGE_REQUEST'],
  );
}

const bypassesRecorded = new WeakMap<UnitOfWork, Set<string>>();

/** One `review-bypassed` event per target and unit of work, however many commands of that change guard it. */
async function recordBypass(uow: UnitOfWork, target: GuardedTarget, environments: ProtectedEnvironment[]): Promise<void> {
  const key = JSON.stringify(target);
  let recorded = bypassesRecorded.get(uow);
  if (!recorded) {
    recorded = new Set();
    bypassesRecorded.set(uow, recorded);
  }
  if (recorded.has(key)) return;
  recorded.add(key);
  // A segment may reach several projects; the event names a project only when it concerns one.
  const projects = [...new Set(environments.map((e) => e.project))];
  await recordEvent(uow, {
    type: 'review-bypassed',
    project: 'project' in target ? target.project : projects.length === 1 ? projects[0]! : null,
    environment: 'environment' in target ? target.environment : null,
    featureName: target.kind === 'flag-environment' || target.kind === 'flag' ? target.featureName : null,
    data: {
      ...(target.kind === 'segment' ? { segmentId: target.segmentId } : {}),
      protectedEnvironments: environments,
    },
  });
}

/**
 * The guard every command that changes a flag or segment calls first. While change requests are enabled for
 * an environment the change reaches, it goes through only when this unit of work applies a change request
 * covering it, or when the actor may skip change requests (Admins), which is recorded as `review-bypassed`
 * in the same transaction; anyone else gets a 403.
 */
export async function guardDirectChange(uow: UnitOfWork, target: GuardedTarget): Promise<void> {
  const reached = await protectedEnvironments(uow, target);
  if (reached.length === 0) return;
  const scope = await appliedScope(uow);
  const uncovered = scope ? reached.filter((environment) => !coveredByChangeRequest(target, scope, environment)) : reached;
  if (uncovered.length === 0) return;
  if (!roleHasPermission(actorRootRole(uow.actor), 'SKIP_CHANGE_REQUEST')) throw refusal(target, uncovered);
  await recordBypass(uow, target, uncovered);
}
