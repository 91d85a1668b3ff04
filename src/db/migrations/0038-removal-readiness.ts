import { sql, type Kysely } from 'kysely';

/**
 * The last removal-readiness verdict of each flag in each production environment, as the hourly watch judged it:
 * what search filters on and project health counts, and what tells the watch that a flag has just become ready
 * (a verdict that changed), so the event is recorded once however many instances watch.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE removal_readiness (
      feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE ON UPDATE CASCADE,
      environment text NOT NULL,
      verdict text NOT NULL,
      reasons jsonb NOT NULL,
      judged_at timestamptz NOT NULL,
      PRIMARY KEY (feature_name, environment)
    )`.execute(db);
  await sql`CREATE INDEX removal_readiness_verdict ON removal_readiness (verdict)`.execute(db);
}
