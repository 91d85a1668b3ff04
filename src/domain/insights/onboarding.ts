import type { Db } from '../../db/database.js';

export type OnboardingStatus = { status: 'onboarding-started' | 'onboarded' } | { status: 'first-flag-created'; feature: string };

/** Started until the first flag; that flag until an SDK has evaluated any of the project's flags; then onboarded. */
export async function onboardingStatus(db: Db, project: string): Promise<OnboardingStatus> {
  const seen = await db
    .selectFrom('feature_environment_usage as u')
    .innerJoin('features as f', 'f.name', 'u.feature_name')
    .where('f.project', '=', project)
    .select('u.feature_name')
    .limit(1)
    .executeTakeFirst();
  if (seen) return { status: 'onboarded' };
  const first = await db
    .selectFrom('features')
    .where('project', '=', project)
    .select('name')
    .orderBy('created_at')
    .orderBy('name')
    .limit(1)
    .executeTakeFirst();
  return first ? { status: 'first-flag-created', feature: first.name } : { status: 'onboarding-started' };
}
