import { sql, type Kysely } from 'kysely';

/**
 * The revision of what SDKs read, raised by every commit that changes it, as its last statement: the row's lock
 * orders those commits, so a snapshot that sees a revision sees every change committed under it. The newest event id
 * was the revision before, but ids are taken when a transaction records its event, not when it commits, and a change
 * committed after a later one kept the revision already served. It starts where that one was, so revisions SDKs hold
 * stay older than the next.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE configuration_revision (
       singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
       revision bigint NOT NULL
     )`,
    `INSERT INTO configuration_revision (revision) SELECT coalesce(max(id), 0) FROM events`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
