import type { Clock } from '../shared/clock.js';
import type { Db, Tx } from './database.js';
import { assertWritesAllowed, type MaintenanceExemption } from './maintenance-gate.js';
import type { RootRoleName } from './schema.js';

/**
 * What a user may do in one project, through their roles there (their own and their groups'): permissions held in
 * the whole project, and those held in one environment only (`byEnvironment`).
 */
export interface ProjectAccess {
  permissions: ReadonlySet<string>;
  byEnvironment: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Who performs a unit of work: the identity its events are recorded under and permissions are checked against. */
export type Actor =
  | {
      kind: 'user';
      userId: number;
      username: string;
      /** The strongest of the user's own built-in root role and those of their groups. */
      rootRole: RootRoleName;
      /** The name of the root role to show: a custom one the user holds, or `rootRole`. */
      rootRoleName: string;
      /** What the root roles held (built-in and custom, own and groups') allow everywhere. */
      rootPermissions: ReadonlySet<string>;
      projects: ReadonlyMap<string, ProjectAccess>;
      /** The agent acting for this person (an MCP client's name and version), recorded on each event. */
      via?: string;
      /**
       * The OAuth client the person granted the token to (its registered name and id), for an agent token: what the
       * person approved, beside what the client says it is.
       */
      grantedTo?: string;
    }
  /** An identity provider creating or updating the user signing in through it. */
  | { kind: 'identity-provider'; name: string }
  | { kind: 'admin-token'; tokenId: number; tokenName: string; via?: string }
  | { kind: 'system' };

/**
 * One transaction, the actor performing it and one instant: everything a command needs to change state and
 * record the events of that change atomically. Every query inside goes through `tx`: on PGlite the root
 * handle would wait for the transaction's connection forever, on PostgreSQL it would escape the transaction.
 */
export interface UnitOfWork {
  readonly tx: Tx;
  readonly actor: Actor;
  readonly now: Date;
  /**
   * Set when this unit of work applies a change request: the guard of protected environments lets its
   * changes through, and the events written carry its id.
   */
  readonly changeRequestId?: number;
  /**
   * Runs `task` once, inside the transaction, after the work is done and before the commit; a second call
   * with the same key is ignored. For writes that are cheaper, or only safe, done once per transaction. A task
   * given `last` runs after all the others (those they add included): for a lock to hold only until the commit.
   */
  beforeCommit(key: string, task: () => Promise<void>, options?: { last?: boolean }): void;
}

export interface UnitOfWorkDeps {
  db: Db;
  clock: Clock;
}

export interface UnitOfWorkOptions {
  /** The change request this unit of work applies. */
  changeRequestId?: number;
  /** Do the work, then roll it back: what a dry run answers is what the real run would do, checks included. */
  rollback?: boolean;
  /**
   * Why this work may commit while maintenance mode is on. Without one, a unit of work is refused with a 503 while it
   * is on, whoever starts it (a route, a tool, a worker): the one place every write passes.
   */
  inMaintenance?: MaintenanceExemption;
}

/** Thrown inside the transaction to roll back a dry run; never leaves inUnitOfWork. */
class RolledBack<T> {
  constructor(readonly result: T) {}
}

/** Runs `work` in one transaction: it commits when `work` resolves and rolls back when it throws. */
export function inUnitOfWork<T>(
  deps: UnitOfWorkDeps,
  actor: Actor,
  work: (uow: UnitOfWork) => Promise<T>,
  options: UnitOfWorkOptions = {},
): Promise<T> {
  const transaction = deps.db.transaction().execute(async (tx) => {
    const tasks = new Map<string, () => Promise<void>>();
    const lastTasks = new Map<string, () => Promise<void>>();
    const beforeCommit = (key: string, task: () => Promise<void>, { last = false } = {}) => {
      const queue = last ? lastTasks : tasks;
      if (!queue.has(key)) queue.set(key, task);
    };
    // A dry run changes nothing, and answers what the real run would do even in maintenance mode.
    if (!options.rollback) await assertWritesAllowed(tx, options.inMaintenance);
    const result = await work({ tx, actor, now: deps.clock.now(), beforeCommit, changeRequestId: options.changeRequestId });
    for (const task of tasks.values()) await task();
    for (const task of lastTasks.values()) await task();
    if (options.rollback) throw new RolledBack(result);
    return result;
  });
  if (!options.rollback) return transaction;
  return transaction.catch((error: unknown) => {
    if (error instanceof RolledBack) return error.result as T;
    throw error;
  });
}

/** Runs reads against one consistent snapshot of the database (repeatable read, read only); writes nothing. */
export function inReadSnapshot<T>(db: Db, read: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}
