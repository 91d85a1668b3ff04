import { BadDataError, type ErrorDetail } from '../../shared/errors.js';

/** Unleash's password rules (OWASP-based): 10 to 128 characters mixing lower and upper case, digits and symbols. */
const RULES: Array<{ test: (password: string) => boolean; message: string }> = [
  { test: (p) => p.length >= 10, message: 'The password must be at least 10 characters long' },
  { test: (p) => p.length <= 128, message: 'The password must be at most 128 characters long' },
  { test: (p) => /[a-z]/.test(p), message: 'The password must contain at least one lowercase letter' },
  { test: (p) => /[A-Z]/.test(p), message: 'The password must contain at least one uppercase letter' },
  { test: (p) => /[0-9]/.test(p), message: 'The password must contain at least one number' },
  { test: (p) => /[^A-Za-z0-9]/.test(p), message: 'The password must contain at least one special character' },
  { test: (p) => !/(.)\1\1/.test(p), message: 'The password may not repeat a character three or more times in a row' },
];

export function assertStrongPassword(password: string, path: string): void {
  const details: ErrorDetail[] = RULES.filter((rule) => !rule.test(password)).map((rule) => ({
    message: rule.message,
    path,
  }));
  if (details.length > 0) throw new BadDataError('The password is too weak', details);
}
