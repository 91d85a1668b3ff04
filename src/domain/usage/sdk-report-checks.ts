import { BadDataError } from '../../shared/errors.js';
import type { SdkToken } from '../access/authenticate.js';

/*
 * What SDKs report, and what is refused before anything is counted: reports dated where no SDK can honestly date
 * them, and reports for another environment than the token's. The server and Vexil Edge check alike.
 */

/** One metrics report of an SDK (Unleash's client metrics format). */
export interface ClientMetrics {
  appName: string;
  bucket: {
    start: string;
    stop: string;
    toggles: Record<string, { yes: number; no: number; variants?: Record<string, number> }>;
  };
}

const HOUR_MS = 3_600_000;
/** A report may end this far ahead of the server's clock (clocks drift); later is refused. */
export const MAX_REPORT_AHEAD_MS = 5 * 60_000;
/** A report may end this long ago (an SDK that was offline); older is refused. */
export const MAX_REPORT_AGE_MS = 2 * 24 * HOUR_MS;

/**
 * Refuses a report time outside what an SDK can honestly send: more than a few minutes ahead of now, or more
 * than two days ago. Counts for 2099 or 1970 would otherwise sit in the usage history for good.
 */
export function assertReportTime(reported: string, now: Date, path: string): void {
  const at = Date.parse(reported);
  if (at > now.getTime() + MAX_REPORT_AHEAD_MS) {
    throw new BadDataError('The metrics are dated in the future', [
      { path, message: `must be at most 5 minutes after the server's time ${now.toISOString()} (got ${JSON.stringify(reported)})` },
    ]);
  }
  if (at < now.getTime() - MAX_REPORT_AGE_MS) {
    throw new BadDataError('The metrics are too old to be recorded', [
      { path, message: `must be at most 2 days before the server's time ${now.toISOString()} (got ${JSON.stringify(reported)})` },
    ]);
  }
}

/** Refuses a report's bucket that ends at a time no SDK can honestly send, or before it starts. */
export function assertReportBucket(bucket: ClientMetrics['bucket'], now: Date): void {
  assertReportTime(bucket.stop, now, '/body/bucket/stop');
  if (Date.parse(bucket.stop) < Date.parse(bucket.start)) {
    throw new BadDataError('The metrics bucket ends before it starts', [
      { path: '/body/bucket/stop', message: `stop must not be before start (got ${JSON.stringify(bucket.stop)})` },
    ]);
  }
}

/** A client token reports for its own environment only (`default` is what SDKs send when not told). */
export function assertTokenEnvironment(token: SdkToken, environment: string | undefined, path: string): void {
  if (environment === undefined || environment === 'default' || environment === token.environment) return;
  throw new BadDataError(`This token is for the environment "${token.environment}"`, [
    { path, message: `must be the token's environment "${token.environment}" (got ${JSON.stringify(environment)})` },
  ]);
}

/** What another edge (Unleash Edge, or Vexil Edge in a chain) sends in bulk: every part for the token's environment, each dated as an SDK may date it. */
export function assertBulkReport(
  token: SdkToken,
  report: { applications?: Array<{ environment?: string }>; metrics: Array<{ environment: string; timestamp: string }> },
  now: Date,
): void {
  for (const [i, application] of (report.applications ?? []).entries()) {
    assertTokenEnvironment(token, application.environment, `/body/applications/${i}/environment`);
  }
  for (const [i, metric] of report.metrics.entries()) {
    assertTokenEnvironment(token, metric.environment, `/body/metrics/${i}/environment`);
    assertReportTime(metric.timestamp, now, `/body/metrics/${i}/timestamp`);
  }
}
