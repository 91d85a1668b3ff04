import { sql, type Kysely } from 'kysely';

/**
 * A project's default strategy per environment: what turning a flag on there without strategies adds, as in Unleash
 * (a 100% flexible rollout when the project sets none). NULL: none set.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw('ALTER TABLE project_environments ADD COLUMN default_strategy jsonb').execute(db);
}
