import type { Transaction } from 'kysely';
import type { Actor } from '../domain/access/actor.js';
import type { Clock } from '../shared/clock.js';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/**
 * One transaction, the actor performing it and one instant: everything a command needs to change state and
 * record the events of that change atomically. Every query inside goes through `tx`: on PGlite the root
 * handle would wait for the transaction's connection forever, on PostgreSQL it would escape the transaction.
 */
export interface UnitOfWork {
  readonly tx: Transaction<Database>;
  readonly actor: Actor;
  readonly now: Date;
}

export interface UnitOfWorkDeps {
  db: Db;
  clock: Clock;
}

/** Runs `work` in one transaction: it commits when `work` resolves and rolls back when it throws. */
export function inUnitOfWork<T>(deps: UnitOfWorkDeps, actor: Actor, work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
  return deps.db.transaction().execute((tx) => work({ tx, actor, now: deps.clock.now() }));
}
