import { sql, type Kysely } from 'kysely';

/**
 * Code references: what `vexil refs push` sends for one repository and branch, replaced whole by each push of a
 * newer commit. A reference names its flag as the code does, so one to a flag Vexil does not know is kept (and shown
 * as such) rather than refused. When a push no longer has a flag's references, the commit it happened in is kept.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `CREATE TABLE code_reference_pushes (
       repository text NOT NULL,
       branch text NOT NULL,
       commit_sha text NOT NULL,
       url_template text,
       pushed_at timestamptz NOT NULL,
       reference_count integer NOT NULL,
       PRIMARY KEY (repository, branch)
     )`,
    `CREATE TABLE code_references (
       id bigserial PRIMARY KEY,
       repository text NOT NULL,
       branch text NOT NULL,
       feature_name text NOT NULL,
       file text NOT NULL,
       line integer NOT NULL,
       column_number integer NOT NULL,
       language text NOT NULL,
       call text NOT NULL,
       expression text NOT NULL,
       context jsonb NOT NULL,
       FOREIGN KEY (repository, branch) REFERENCES code_reference_pushes (repository, branch) ON DELETE CASCADE
     )`,
    'CREATE INDEX code_references_feature_name ON code_references (feature_name)',
    'CREATE INDEX code_references_push ON code_references (repository, branch)',
    `CREATE TABLE code_reference_removals (
       feature_name text NOT NULL,
       repository text NOT NULL,
       branch text NOT NULL,
       commit_sha text NOT NULL,
       removed_at timestamptz NOT NULL,
       PRIMARY KEY (feature_name, repository, branch)
     )`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
