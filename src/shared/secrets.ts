import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** A random secret for tokens and session ids: 32 bytes of entropy, hex so it survives any transport. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('hex');
}

/** A password Vexil makes for a person (first admin, reset): random, and meeting the password policy. */
export function generatedPassword(): string {
  return `${randomSecret(9)}-Aa1`;
}

/**
 * Tokens and session ids are long random values, so a fast hash is enough to store them safely and
 * lets a request find its token with one indexed lookup. Passwords use scrypt below.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

// OWASP's scrypt parameters (N=2^17, r=8, p=1) cost ~128 MiB per hash; N=2^15 keeps a login at ~32 MiB and
// ~50 ms on these machines while staying well above the minimum recommendation.
const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LENGTH = 64;

function scryptAsync(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Stored as `scrypt$N$r$p$salt$key` (base64) so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT_PARAMS);
  const { N, r, p } = SCRYPT_PARAMS;
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT_PARAMS.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

const SEAL_ALGORITHM = 'aes-256-gcm';
const SEAL_IV_BYTES = 12;
const SEAL_TAG_BYTES = 16;

/**
 * Encrypts and authenticates a JSON value under a 32-byte key, as one URL-safe string: what the holder may carry
 * (a cookie) but neither read nor change.
 */
export function seal(key: Buffer, value: unknown): string {
  const iv = randomBytes(SEAL_IV_BYTES);
  const cipher = createCipheriv(SEAL_ALGORITHM, key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The value `seal` sealed under this key, or undefined for anything else (forged, changed, another key). */
export function unseal(key: Buffer, sealed: string): unknown {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= SEAL_IV_BYTES + SEAL_TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv(SEAL_ALGORITHM, key, bytes.subarray(0, SEAL_IV_BYTES));
    decipher.setAuthTag(bytes.subarray(SEAL_IV_BYTES, SEAL_IV_BYTES + SEAL_TAG_BYTES));
    const plain = Buffer.concat([decipher.update(bytes.subarray(SEAL_IV_BYTES + SEAL_TAG_BYTES)), decipher.final()]);
    return JSON.parse(plain.toString('utf8'));
  } catch {
    return undefined;
  }
}
