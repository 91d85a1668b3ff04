import { sql, type Kysely } from 'kysely';

/** What a person says about an application beside what its SDKs report (Unleash's `POST /api/admin/metrics/applications/:appName`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE client_applications
    ADD COLUMN description text,
    ADD COLUMN url text,
    ADD COLUMN color text,
    ADD COLUMN icon text`.execute(db);
}
