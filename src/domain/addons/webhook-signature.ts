import { createHmac, randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { AddonsTable } from '../../db/schema.js';

/**
 * Standard Webhooks (standardwebhooks.com) signatures: `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per
 * secret in use, so a receiver holding either the old or the new secret verifies during a rotation.
 */
const SECRET_PREFIX = 'whsec_';

/** How long the secret before a rotation keeps signing beside the new one. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

type SigningColumns = Pick<Selectable<AddonsTable>, 'signing_secret' | 'previous_signing_secret' | 'previous_signing_secret_expires_at'>;

export function signingSecretsInUse(addon: SigningColumns, now: Date): string[] {
  const previousValid =
    addon.previous_signing_secret !== null &&
    addon.previous_signing_secret_expires_at !== null &&
    addon.previous_signing_secret_expires_at.getTime() > now.getTime();
  return previousValid ? [addon.signing_secret, addon.previous_signing_secret!] : [addon.signing_secret];
}

function sign(secret: string, signedContent: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(signedContent).digest('base64')}`;
}

/** `webhookId` stays the same across a delivery's retries, so receivers can drop duplicates. */
export function standardWebhookHeaders(secrets: string[], webhookId: string, sentAt: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(sentAt.getTime() / 1000));
  const signedContent = `${webhookId}.${timestamp}.${body}`;
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map((secret) => sign(secret, signedContent)).join(' '),
  };
}
