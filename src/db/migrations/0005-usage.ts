import { sql, type Kysely } from 'kysely';

/**
 * Usage reported by SDKs (client metrics): when each flag was last evaluated per environment, and hourly
 * yes/no counts per application. Feature search shows `lastSeenAt` and the last hour's `yes`/`no` from these.
 * Rows go with their flag or environment.
 */
const statements = [
  `CREATE TABLE feature_environment_usage (
    feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE ON UPDATE CASCADE,
    environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    last_seen_at timestamptz NOT NULL,
    CONSTRAINT feature_environment_usage_pkey PRIMARY KEY (feature_name, environment)
  )`,
  `CREATE TABLE feature_usage_hourly (
    feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE ON UPDATE CASCADE,
    environment text NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    app_name text NOT NULL,
    hour timestamptz NOT NULL,
    yes bigint NOT NULL,
    no bigint NOT NULL,
    CONSTRAINT feature_usage_hourly_pkey PRIMARY KEY (feature_name, environment, hour, app_name)
  )`,
  `CREATE INDEX feature_usage_hourly_hour_idx ON feature_usage_hourly (hour)`,
  // Feature search: substring matches on names, descriptions and tag values without reading every flag.
  `CREATE INDEX features_name_trgm_idx ON features USING gin (name gin_trgm_ops)`,
  `CREATE INDEX features_description_trgm_idx ON features USING gin (description gin_trgm_ops)`,
  `CREATE INDEX features_created_at_idx ON features (created_at, name)`,
  `CREATE INDEX feature_tags_value_trgm_idx ON feature_tags USING gin (tag_value gin_trgm_ops)`,
  // Status filters and environment sorts read which flags are on in an environment from the index alone.
  `CREATE INDEX feature_environments_enabled_idx ON feature_environments (environment, feature_name) WHERE enabled`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) {
    await sql.raw(statement).execute(db);
  }
}
