import { sql, type Kysely } from 'kysely';

/**
 * How long a flag of each type is expected to live before it is potentially stale: data an Admin changes, as in
 * Unleash, no longer a constant. Null: flags of that type are meant to stay. Seeded with Unleash's defaults.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE feature_type_lifetimes (
    type text PRIMARY KEY,
    lifetime_days integer CHECK (lifetime_days > 0)
  )`.execute(db);
  await sql`INSERT INTO feature_type_lifetimes (type, lifetime_days) VALUES
    ('release', 40), ('experiment', 40), ('operational', 7), ('kill-switch', NULL), ('permission', NULL), ('sunset', 90)`.execute(db);
}
