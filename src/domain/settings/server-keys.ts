import type { Db } from '../../db/database.js';
import { randomSecret } from '../../shared/secrets.js';

/**
 * A 32-byte key every instance sharing the database uses, made by whichever instance asks first (the insert
 * that loses the race keeps the winner's). Never leaves the server: no route reads this table.
 */
export async function serverKey(db: Db, name: string, now: Date): Promise<Buffer> {
  await db
    .insertInto('server_keys')
    .values({ name, key: randomSecret(32), created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('server_keys').select('key').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.key, 'hex');
}
