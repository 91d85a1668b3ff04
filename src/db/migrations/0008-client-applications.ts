import { sql, type Kysely } from 'kysely';

/**
 * Applications and their instances as SDKs register them (`POST /api/client/register`), for the applications
 * list. An application is created on its first registration; each instance is refreshed on every one.
 */
const statements = [
  `CREATE TABLE client_applications (
    app_name text PRIMARY KEY,
    strategies text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL
  )`,
  `CREATE TABLE client_instances (
    app_name text NOT NULL REFERENCES client_applications (app_name) ON DELETE CASCADE,
    instance_id text NOT NULL,
    environment text NOT NULL,
    sdk_version text,
    client_ip text,
    started_at timestamptz,
    interval_ms bigint,
    created_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL,
    CONSTRAINT client_instances_pkey PRIMARY KEY (app_name, instance_id, environment)
  )`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
