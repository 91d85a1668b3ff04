import type { Db } from '../../db/database.js';
import type { Actor } from '../../db/unit-of-work.js';
import { getFeature } from '../features/features.js';
import type { FeatureEnvironmentView, StrategyView } from '../features/feature-views.js';

export type RemovalVerdict = 'keep' | 'ready to remove (keep the on branch)' | 'ready to remove (keep the off branch)' | 'ready to archive';

export interface EnvironmentReadiness {
  environment: string;
  verdict: RemovalVerdict;
  /** Why, in plain sentences: what holds the flag back, or what makes it ready. */
  reasons: string[];
}

export interface RemovalReadiness {
  flag: string;
  project: string;
  /** One per production environment of the flag's project. */
  environments: EnvironmentReadiness[];
  /** The branch every one of them is ready to keep, if they agree on one: what a cleanup keeps. */
  settledBranch: 'on' | 'off' | null;
}

/** The branch every environment judged is ready to keep, if they agree on one. */
export function settledBranch(environments: EnvironmentReadiness[]): 'on' | 'off' | null {
  const branches = new Set(
    environments.map((env) =>
      env.verdict === 'ready to remove (keep the on branch)'
        ? 'on'
        : env.verdict === 'ready to remove (keep the off branch)'
          ? 'off'
          : null,
    ),
  );
  return branches.size === 1 ? [...branches][0]! : null;
}

/**
 * The event recorded when a flag becomes ready to leave the code (or, its references gone, to be archived) in a
 * production environment (readiness-watch.ts). It describes the flag without changing it, so it does not count as a
 * change that restarts the stable weeks.
 */
export const BECAME_READY_EVENT = 'feature-ready-for-removal' as const;

const DAY_MS = 86_400_000;
/** Unchanged this long in production, a flag's branch has won (as flag health's "ready to remove" counts it). */
const STABLE_DAYS = 21;
/** An SDK that evaluated the flag this recently still asks for it, whatever the pushed code says. */
const RECENTLY_EVALUATED_DAYS = 7;
/** Types meant to stay: switched in an incident, by entitlement or by operators, never "done". */
const LONG_LIVED_TYPES = new Set(['kill-switch', 'permission', 'operational']);
const OPEN_CHANGE_REQUEST_STATES = ['Draft', 'In review', 'Approved', 'Scheduled'] as const;

/** A strategy that serves everyone the same: no constraint, no segment, no variants, the whole rollout. */
function servesEveryone(strategy: StrategyView): boolean {
  if (strategy.disabled || strategy.constraints.length > 0 || strategy.segments.length > 0 || strategy.variants.length > 0) return false;
  if (strategy.name === 'default') return true;
  const share = strategy.parameters.rollout ?? strategy.parameters.percentage;
  return share === '100';
}

function stateIn(environment: FeatureEnvironmentView): 'on' | 'off' | 'partial' {
  const active = environment.strategies.filter((strategy) => !strategy.disabled);
  if (!environment.enabled || active.length === 0) return 'off';
  return active.some(servesEveryone) ? 'on' : 'partial';
}

const days = (ms: number) => Math.floor(ms / DAY_MS);

/**
 * Whether a flag can leave the code, per production environment, from what Vexil knows beside the code: its type,
 * whether production serves everyone the same and since when, what SDKs last evaluated, where pushed code reads it,
 * the flags that depend on it, and the change requests and release plans still working on it.
 */
export async function removalReadiness(db: Db, actor: Actor, project: string, flag: string, now: Date): Promise<RemovalReadiness> {
  const view = await getFeature(db, project, flag, actor);
  const [references, removal, openRequests, plans, lastChanges] = await Promise.all([
    db
      .selectFrom('code_references')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('feature_name', '=', flag)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('code_reference_removals')
      .select(['repository', 'commit_sha'])
      .where('feature_name', '=', flag)
      .orderBy('removed_at', 'desc')
      .limit(1)
      .executeTakeFirst(),
    db
      .selectFrom('change_requests as cr')
      .innerJoin('change_request_changes as c', 'c.change_request_id', 'cr.id')
      .select(['cr.id', 'cr.environment'])
      .distinct()
      .where('c.feature_name', '=', flag)
      .where('cr.project', '=', project)
      .where('cr.state', 'in', OPEN_CHANGE_REQUEST_STATES)
      .execute(),
    db
      .selectFrom('release_plans')
      .select('environment')
      .where('feature_name', '=', flag)
      .where('active_milestone_id', 'is not', null)
      .execute(),
    db
      .selectFrom('events')
      .select(['environment', (eb) => eb.fn.max('created_at').as('at')])
      .where('feature_name', '=', flag)
      .where('environment', 'is not', null)
      .where('type', '!=', BECAME_READY_EVENT)
      .groupBy('environment')
      .execute(),
  ]);
  const referenceCount = Number(references.count);
  const changedAt = new Map(lastChanges.map((row) => [row.environment!, new Date(row.at as unknown as string)]));
  const environments = view.environments
    .filter((environment) => environment.type === 'production')
    .map((environment): EnvironmentReadiness => {
      const holds: string[] = [];
      if (LONG_LIVED_TYPES.has(view.type)) holds.push(`a ${view.type} flag is meant to stay`);
      if (view.children.length > 0) holds.push(`flags depend on it: ${view.children.join(', ')}`);
      for (const request of openRequests.filter((row) => row.environment === environment.name)) {
        holds.push(`change request #${request.id} is still open`);
      }
      if (plans.some((plan) => plan.environment === environment.name)) holds.push('a release plan is still rolling it out');
      const lastSeen = environment.lastSeenAt ? new Date(environment.lastSeenAt) : null;
      const evaluated = lastSeen ? `last evaluated ${days(now.getTime() - lastSeen.getTime())} days ago` : 'never evaluated here';
      if (referenceCount === 0 && removal) {
        if (lastSeen && now.getTime() - lastSeen.getTime() < RECENTLY_EVALUATED_DAYS * DAY_MS) {
          holds.push(`no pushed code reads it, but an SDK evaluated it ${days(now.getTime() - lastSeen.getTime())} days ago`);
        }
        if (holds.length > 0) return { environment: environment.name, verdict: 'keep', reasons: holds };
        return {
          environment: environment.name,
          verdict: 'ready to archive',
          reasons: [`no pushed code reads it since commit ${removal.commit_sha} of ${removal.repository}`, evaluated],
        };
      }
      const state = stateIn(environment);
      const since = changedAt.get(environment.name) ?? new Date(view.createdAt);
      const stableDays = days(now.getTime() - since.getTime());
      if (state === 'partial') holds.push('it serves some users one way and some the other');
      else if (stableDays < STABLE_DAYS) {
        holds.push(`${state} for everyone for ${stableDays} days: ready after ${STABLE_DAYS} unchanged`);
      }
      if (holds.length > 0) return { environment: environment.name, verdict: 'keep', reasons: holds };
      const inCode =
        referenceCount > 0
          ? `${referenceCount} reference${referenceCount === 1 ? '' : 's'} in pushed code to change`
          : 'no pushed code reference known';
      return {
        environment: environment.name,
        verdict: state === 'on' ? 'ready to remove (keep the on branch)' : 'ready to remove (keep the off branch)',
        reasons: [`${state} for everyone in ${environment.name} for ${stableDays} days`, evaluated, inCode],
      };
    });
  return { flag, project, environments, settledBranch: settledBranch(environments) };
}
