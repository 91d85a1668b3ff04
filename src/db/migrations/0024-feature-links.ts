import { sql, type Kysely } from 'kysely';

/** Links from a flag to what concerns it (a ticket, a dashboard, the code), as Unleash 7 has them. Gone with the flag. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE feature_links (
       id text PRIMARY KEY,
       feature_name text NOT NULL REFERENCES features (name) ON DELETE CASCADE ON UPDATE CASCADE,
       url text NOT NULL,
       title text,
       created_at timestamptz NOT NULL,
       -- The order links were added in, whatever the clock says.
       position bigint GENERATED ALWAYS AS IDENTITY
     )`,
    'CREATE INDEX feature_links_feature_idx ON feature_links (feature_name, position)',
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
