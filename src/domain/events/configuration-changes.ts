import { sql } from 'kysely';
import type { DatabaseHandle, Db, Unlisten } from '../../db/database.js';
import { CONFIGURATION_CHANNEL } from '../../db/notification-channels.js';
import { addChangesOf, changePayloadOf } from './record-event.js';

/**
 * Follows the changes every instance commits: `onChange` gets each commit's payload (notification-channels.ts), or
 * `undefined` when anything may have changed. Returns how to stop following.
 */
export type ConfigurationChanges = (onChange: (payload: string | undefined) => void) => Promise<Unlisten>;

/** Events read from the log in one poll; a longer run of new events is told as a change of everything. */
const POLL_BATCH = 1_000;
/** Missing ids asked about again, at most; past it, a change of everything is told. */
const MAX_GAPS = 10_000;
/** A missing id given up on even if a transaction older than it still runs, so that gaps cannot pile up for ever. */
const GAP_LIMIT_MS = 10 * 60_000;

/**
 * LISTEN where the connection hears it; else the event log is read every `pollMs` and each run of new events is told
 * as the payload their commits sent. Event ids are taken when a transaction inserts, not when it commits, so an id
 * missing from what was read may still come: it is asked about again until every transaction that was running when
 * it was seen missing has ended (then it was rolled back).
 */
export function configurationChanges(deps: { db: Db; listen: DatabaseHandle['listen'] }, pollMs: number): ConfigurationChanges {
  return async (onChange) => {
    const listening = await deps.listen(CONFIGURATION_CHANNEL, onChange);
    if (listening.hears) return listening.stop;
    const poller = new EventLogPoller(deps.db, onChange);
    await poller.start();
    let stopped = false;
    let polling: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      // One poll at a time: a slow one is not overtaken by the next.
      polling = polling.then(() => (stopped ? undefined : poller.poll().catch(() => undefined)));
    }, pollMs);
    return async () => {
      stopped = true;
      clearInterval(timer);
      await polling;
      await listening.stop();
    };
  };
}

class EventLogPoller {
  /** The highest event id read. */
  private last = 0;
  /** Ids below `last` not read yet, with when (the database's clock) they were first seen missing. */
  private readonly gaps = new Map<number, Date>();

  constructor(
    private readonly db: Db,
    private readonly onChange: (payload: string | undefined) => void,
  ) {}

  async start(): Promise<void> {
    const { last } = await this.db
      .selectFrom('events')
      .select((eb) => eb.fn.coalesce(eb.fn.max('id'), sql.lit(0)).as('last'))
      .executeTakeFirstOrThrow();
    this.last = Number(last);
  }

  async poll(): Promise<void> {
    // First the start of the oldest transaction still running, then the events: a missing id seen before that
    // start belongs to a transaction that has ended, and had it committed, this read would have it.
    const { oldest } = await sql<{ oldest: Date | null }>`SELECT min(xact_start) AS oldest FROM pg_stat_activity
      WHERE datname = current_database()`
      .execute(this.db)
      .then(({ rows }) => rows[0]!);
    const gaps = [...this.gaps.keys()];
    const events = await this.db
      .selectFrom('events')
      // Read after the statement's snapshot: any transaction it could not see had started before this.
      .select(['id', 'type', 'feature_name as featureName', sql<Date>`clock_timestamp()`.as('readAt')])
      .where((eb) => (gaps.length > 0 ? eb.or([eb('id', '>', this.last), eb('id', 'in', gaps)]) : eb('id', '>', this.last)))
      .orderBy('id')
      .limit(POLL_BATCH)
      .execute();
    for (const [id, seenMissingAt] of this.gaps) {
      if ((oldest !== null && oldest > seenMissingAt) || Date.now() - seenMissingAt.getTime() > GAP_LIMIT_MS) this.gaps.delete(id);
    }
    const changed = new Set<string>();
    let untracked = false;
    for (const event of events) {
      this.gaps.delete(event.id);
      for (let id = this.last + 1; id < event.id; id += 1) {
        if (this.gaps.size >= MAX_GAPS) {
          untracked = true;
          break;
        }
        this.gaps.set(id, event.readAt);
      }
      this.last = Math.max(this.last, event.id);
      addChangesOf(changed, event);
    }
    // Events not read yet, or ids that may still come but are not asked about: anything may have changed.
    if (events.length === POLL_BATCH || untracked) this.onChange(undefined);
    else if (changed.size > 0) this.onChange(changePayloadOf(changed));
  }
}
