import { sql, type Kysely } from 'kysely';

/**
 * Warehouse-native experiments: a data source is a customer's PostgreSQL, reached with read-only credentials kept
 * sealed (never shown again), and two queries over their own tables, one of assignments and one of events. An
 * experiment analysed there names the source and the key its assignments carry.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE experiment_data_sources (
       id serial PRIMARY KEY,
       name text NOT NULL CONSTRAINT experiment_data_sources_name_key UNIQUE,
       kind text NOT NULL CONSTRAINT experiment_data_sources_kind_check CHECK (kind IN ('postgres')),
       connection_sealed text NOT NULL,
       address text NOT NULL,
       assignment_query text NOT NULL,
       events_query text NOT NULL,
       created_at timestamptz NOT NULL
     )`,
    `ALTER TABLE experiments ADD COLUMN data_source_id integer REFERENCES experiment_data_sources (id)`,
    `ALTER TABLE experiments ADD COLUMN experiment_key text`,
    `ALTER TABLE experiments ADD CONSTRAINT experiments_data_source_key_check CHECK ((data_source_id IS NULL) = (experiment_key IS NULL))`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
