import { TooManyRequestsError } from '../../shared/errors.js';

/** Failed logins a window may hold before the next attempt is refused, and the window's length. */
export interface LoginThrottleLimits {
  windowMs: number;
  /** Failures for one account from one address: password guessing. */
  perAccountAndAddress: number;
  /** Failures from one address over every account: password spraying. */
  perAddress: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginThrottleLimits = { windowMs: 60_000, perAccountAndAddress: 10, perAddress: 30 };

// Keys of addresses that stopped failing are swept once the table passes this size, so a flood of addresses
// cannot grow it without bound.
const MAX_TRACKED_KEYS = 100_000;

/**
 * Sliding-window throttle of failed password logins, in memory. Every limit is keyed by the caller's address, so
 * an attacker can slow down only their own attempts: the account's owner, from any other address, still logs in
 * (a lock-out per account alone would let anyone lock any user out for as long as they keep guessing). Each
 * instance counts its own attempts; a refusal ends once the oldest failure leaves the window.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly limits: LoginThrottleLimits = DEFAULT_LOGIN_LIMITS) {}

  private keys(login: string, address: string): Array<[string, number]> {
    return [
      [`address\u0000${address}`, this.limits.perAddress],
      [`account\u0000${address}\u0000${login.trim().toLowerCase()}`, this.limits.perAccountAndAddress],
    ];
  }

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const kept = times.filter((time) => now - time < this.limits.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    else this.failures.set(key, kept);
    return kept;
  }

  /** Throws a 429 when the address has used up a limit; checked before the password is. */
  assertAllowed(login: string, address: string, now: Date): void {
    for (const [key, limit] of this.keys(login, address)) {
      const times = this.recent(key, now.getTime());
      if (times.length >= limit) {
        const retryAfterMs = times[times.length - limit]! + this.limits.windowMs - now.getTime();
        throw new TooManyRequestsError(
          `Too many failed logins from your address; try again in ${Math.ceil(retryAfterMs / 1000)} seconds`,
          Math.max(1, Math.ceil(retryAfterMs / 1000)),
        );
      }
    }
  }

  recordFailure(login: string, address: string, now: Date): void {
    if (this.failures.size > MAX_TRACKED_KEYS) this.sweep(now.getTime());
    for (const [key, limit] of this.keys(login, address)) {
      const times = this.recent(key, now.getTime());
      times.push(now.getTime());
      this.failures.set(key, times.slice(-limit));
    }
  }

  /**
   * Whether a refused sign-in from this address goes into the sign-in audit: at most `perAddress` a window, so a
   * client sending refused sign-ins (throttled ones, forged callbacks) as fast as it can makes the audit grow no
   * faster than the throttle lets it guess.
   */
  mayRecordRefusal(address: string, now: Date): boolean {
    // Kept in the same sliding windows as failures, under a key of its own, and swept with them.
    if (this.failures.size > MAX_TRACKED_KEYS) this.sweep(now.getTime());
    const key = `recorded\u0000${address}`;
    const times = this.recent(key, now.getTime());
    if (times.length >= this.limits.perAddress) return false;
    this.failures.set(key, [...times, now.getTime()]);
    return true;
  }

  /** A successful login forgets that account's failures from that address. */
  recordSuccess(login: string, address: string): void {
    this.failures.delete(this.keys(login, address)[1]![0]);
  }

  private sweep(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
  }
}
