import { sql, type Kysely } from 'kysely';

/**
 * Standard Webhooks signing secrets, one per integration. The previous secret keeps signing (beside the new one)
 * for a day after a rotation, so receivers can switch without dropping deliveries. Configurations made before
 * this migration get a secret too; nobody has seen it, so they are rotated to learn one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE addons
      ADD COLUMN signing_secret text,
      ADD COLUMN signing_secret_created_at timestamptz,
      ADD COLUMN previous_signing_secret text,
      ADD COLUMN previous_signing_secret_expires_at timestamptz`.execute(db);
  // 32 random bytes from two version-4 UUIDs (244 random bits): no extension needed on either engine.
  await sql`
    UPDATE addons SET
      signing_secret = 'whsec_' || encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64'),
      signing_secret_created_at = now()`.execute(db);
  await sql`
    ALTER TABLE addons
      ALTER COLUMN signing_secret SET NOT NULL,
      ALTER COLUMN signing_secret_created_at SET NOT NULL`.execute(db);
}
