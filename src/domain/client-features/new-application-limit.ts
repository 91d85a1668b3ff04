import { TooManyRequestsError } from '../../shared/errors.js';

const MINUTE_MS = 60_000;

/**
 * How many new applications each SDK token may register per minute. Any holder of a token can register
 * applications, so without a bound one leaked token could fill the applications list (and the database) with
 * made-up names. Applications that exist already do not count: a fleet restarting re-registers freely.
 * Counted in memory per Vexil instance, in fixed one-minute windows per token.
 */
export class NewApplicationLimit {
  private readonly windows = new Map<number, { startedAt: number; count: number }>();

  constructor(
    private readonly perMinute: number,
    /** Applications Vexil keeps in all, so that many tokens, or a long time, cannot add up without bound. */
    private readonly maxApplications: number,
  ) {}

  /** Refuses one more application when `held` (the count with it) is past the most Vexil keeps. */
  assertRoom(held: number): void {
    if (held <= this.maxApplications) return;
    throw new TooManyRequestsError(
      `Vexil already keeps ${this.maxApplications} applications, the most it keeps (CLIENT_APPLICATIONS_MAX); applications not seen for CLIENT_APPLICATION_RETENTION_DAYS are forgotten`,
      3600,
    );
  }

  /** Counts one new application of the token, or refuses it with a 429 saying when the next is accepted. */
  admit(tokenId: number, now: Date): void {
    const at = now.getTime();
    let window = this.windows.get(tokenId);
    if (!window || at - window.startedAt >= MINUTE_MS || at < window.startedAt) {
      window = { startedAt: at, count: 0 };
      this.windows.set(tokenId, window);
    }
    if (window.count >= this.perMinute) {
      throw new TooManyRequestsError(
        `This token registered ${this.perMinute} new applications in the last minute, the most allowed (CLIENT_NEW_APPLICATIONS_PER_MINUTE)`,
        Math.max(1, Math.ceil((window.startedAt + MINUTE_MS - at) / 1000)),
      );
    }
    window.count += 1;
  }
}
