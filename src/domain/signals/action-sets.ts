import { projectOfFlag } from '../features/feature-lookup.js';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ActionSetsTable } from '../../db/schema.js';
import type { Actor, UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, NotFoundError } from '../../shared/errors.js';
import { actorIdentity } from '../access/actor.js';
import { userActor } from '../access/authenticate.js';
import { assertActorMay } from '../access/permissions.js';
import { recordEvent } from '../events/record-event.js';
import { setFeatureEnvironmentEnabled } from '../features/feature-environments.js';
import { assertProjectEnvironment } from '../features/feature-lookup.js';

/**
 * Action sets: when a signal endpoint receives a payload that matches, turn flags on or off, as the service
 * account the set names (so the log says which automation did it, and its roles decide what it may do).
 */

export const ACTIONS = ['TOGGLE_FEATURE_ON', 'TOGGLE_FEATURE_OFF'] as const;
export type ActionName = (typeof ACTIONS)[number];

export interface ActionInput {
  action: ActionName;
  sortOrder: number;
  executionParams: { project: string; environment: string; featureName: string };
}

export interface ActionSetInput {
  name: string;
  description?: string | null;
  enabled?: boolean;
  actorId: number;
  match: { source: 'signal-endpoint'; sourceId: number; payload: Record<string, unknown> };
  actions: ActionInput[];
}

export interface ActionSetView extends Omit<ActionSetInput, 'actions' | 'description' | 'enabled'> {
  id: number;
  project: string;
  description: string | null;
  enabled: boolean;
  actions: Array<ActionInput & { id: number; createdAt: string; createdByUserId: number }>;
  createdAt: string;
  createdByUserId: number;
}

function toView(row: Selectable<ActionSetsTable>): ActionSetView {
  const actions = row.actions as ActionInput[];
  return {
    id: row.id,
    project: row.project,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    actorId: row.actor_id,
    match: { source: 'signal-endpoint', sourceId: row.source_id, payload: row.match_payload as Record<string, unknown> },
    actions: actions.map((action, index) => ({
      ...action,
      id: index + 1,
      createdAt: row.created_at.toISOString(),
      createdByUserId: row.created_by_user_id,
    })),
    createdAt: row.created_at.toISOString(),
    createdByUserId: row.created_by_user_id,
  };
}

export async function listActionSets(db: Db, project: string): Promise<ActionSetView[]> {
  const rows = await db.selectFrom('action_sets').selectAll().where('project', '=', project).orderBy('id').limit(500).execute();
  return rows.map(toView);
}

async function findActionSet(db: Db, project: string, id: number) {
  const row = await db.selectFrom('action_sets').selectAll().where('project', '=', project).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError(`Project "${project}" has no action set ${id}`);
  return row;
}

export async function getActionSet(db: Db, project: string, id: number): Promise<ActionSetView> {
  return toView(await findActionSet(db, project, id));
}

/** The actor must be a service account, the source an endpoint, and every action a flag environment of this project. */
async function assertValid(uow: UnitOfWork, project: string, input: ActionSetInput): Promise<void> {
  const actor = await uow.tx.selectFrom('users').select('is_service').where('id', '=', input.actorId).executeTakeFirst();
  if (!actor?.is_service) {
    throw new BadDataError('Actions run as a service account', [
      { path: '/body/actorId', message: `${input.actorId} is not a service account` },
    ]);
  }
  const source = await uow.tx.selectFrom('signal_endpoints').select('id').where('id', '=', input.match.sourceId).executeTakeFirst();
  if (!source) {
    throw new BadDataError('Unknown signal endpoint', [
      { path: '/body/match/sourceId', message: `there is no signal endpoint ${input.match.sourceId}` },
    ]);
  }
  for (const [index, action] of input.actions.entries()) {
    const path = `/body/actions/${index}/executionParams`;
    const { project: actionProject, environment, featureName } = action.executionParams;
    if (actionProject !== project) {
      throw new BadDataError('An action set acts in its own project', [
        { path: `${path}/project`, message: `must be "${project}" (got "${actionProject}")` },
      ]);
    }
    // Read through the area that owns flags (archived ones included, as an action may name one).
    if ((await projectOfFlag(uow.tx, featureName)) !== project)
      throw new BadDataError('Unknown flag', [
        { path: `${path}/featureName`, message: `project "${project}" has no flag "${featureName}"` },
      ]);
    await assertProjectEnvironment(uow.tx, project, environment).catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
      throw new BadDataError('Unknown environment', [{ path: `${path}/environment`, message: error.message }]);
    });
  }
}

function values(project: string, input: ActionSetInput) {
  return {
    project,
    name: input.name,
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    actor_id: input.actorId,
    source_id: input.match.sourceId,
    match_payload: JSON.stringify(input.match.payload),
    actions: JSON.stringify([...input.actions].sort((a, b) => a.sortOrder - b.sortOrder)),
  };
}

export async function createActionSet(uow: UnitOfWork, project: string, input: ActionSetInput): Promise<ActionSetView> {
  await assertValid(uow, project, input);
  const row = await uow.tx
    .insertInto('action_sets')
    .values({ ...values(project, input), created_by_user_id: actorIdentity(uow.actor).createdByUserId, created_at: uow.now })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = toView(row);
  await recordEvent(uow, { type: 'actions-created', project, data: view });
  return view;
}

export async function updateActionSet(uow: UnitOfWork, project: string, id: number, input: ActionSetInput): Promise<ActionSetView> {
  const before = toView(await findActionSet(uow.tx, project, id));
  await assertValid(uow, project, input);
  const row = await uow.tx
    .updateTable('action_sets')
    .set(values(project, input))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = toView(row);
  await recordEvent(uow, { type: 'actions-updated', project, data: view, preData: before });
  return view;
}

/** POST …/actions/:id/on and /off: the set runs on matching signals, or not; a change is recorded as `actions-updated`. */
export async function setActionSetEnabled(uow: UnitOfWork, project: string, id: number, enabled: boolean): Promise<ActionSetView> {
  const row = await findActionSet(uow.tx, project, id);
  if (row.enabled === enabled) return toView(row);
  const updated = await uow.tx.updateTable('action_sets').set({ enabled }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  const view = toView(updated);
  await recordEvent(uow, { type: 'actions-updated', project, data: view, preData: toView(row) });
  return view;
}

export async function deleteActionSet(uow: UnitOfWork, project: string, id: number): Promise<void> {
  const before = toView(await findActionSet(uow.tx, project, id));
  await uow.tx.deleteFrom('action_sets').where('id', '=', id).execute();
  await recordEvent(uow, { type: 'actions-deleted', project, preData: before });
}

/** Every key the rule names has that value in the signal (compared as JSON); a rule naming nothing matches all. */
function matches(rule: Record<string, unknown>, payload: Record<string, unknown>): boolean {
  return Object.entries(rule).every(([key, value]) => JSON.stringify(payload[key]) === JSON.stringify(value));
}

export interface ActionSetOutcome {
  actionSetId: number;
  name: string;
  state: 'success' | 'failed';
  message?: string;
}

/** Signals kept per endpoint, and runs per action set, newest first; older ones go as new ones come. */
const SIGNALS_KEPT = 1000;
const RUNS_KEPT = 1000;

/** Keeps one run of an action set in its log, and only the newest RUNS_KEPT of them. */
export async function recordRun(db: Db, outcome: ActionSetOutcome, signalId: number, at: Date): Promise<void> {
  await db
    .insertInto('action_set_events')
    .values({
      action_set_id: outcome.actionSetId,
      signal_id: signalId,
      state: outcome.state,
      message: outcome.message ?? null,
      created_at: at,
    })
    .execute();
  await keepNewest(db, { table: 'action_set_events', owner: 'action_set_id' }, outcome.actionSetId, RUNS_KEPT);
}

/** Deletes all but the newest `kept` rows of one owner in a log table (newest by id), in one statement. */
async function keepNewest(
  db: Db,
  log: { table: 'signals'; owner: 'signal_endpoint_id' } | { table: 'action_set_events'; owner: 'action_set_id' },
  ownerId: number,
  kept: number,
): Promise<void> {
  const table = sql.table(log.table);
  const owner = sql.ref(log.owner);
  await sql`
    DELETE FROM ${table} WHERE ${owner} = ${ownerId}
      AND id <= (SELECT id FROM ${table} WHERE ${owner} = ${ownerId} ORDER BY id DESC OFFSET ${kept} LIMIT 1)`.execute(db);
}

export interface ActionSetEventView {
  id: number;
  actionSetId: number;
  /** The signal the set ran on (Unleash's name for what set it off). */
  observableEventId: number | null;
  createdAt: string;
  state: 'success' | 'failed';
  message: string | null;
  /** The signal itself, while the endpoint still keeps it. */
  observableEvent: { id: number; payload: unknown; createdAt: string } | null;
}

/** GET …/actions/:id/events: the set's runs, newest first, with the signal each ran on while it is kept. */
export async function listActionSetEvents(db: Db, project: string, id: number, limit: number): Promise<ActionSetEventView[]> {
  await findActionSet(db, project, id);
  const rows = await db
    .selectFrom('action_set_events as e')
    .leftJoin('signals as s', 's.id', 'e.signal_id')
    .select(['e.id', 'e.action_set_id', 'e.signal_id', 'e.state', 'e.message', 'e.created_at', 's.payload', 's.created_at as signal_at'])
    .where('e.action_set_id', '=', id)
    .orderBy('e.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    actionSetId: row.action_set_id,
    observableEventId: row.signal_id === null ? null : Number(row.signal_id),
    createdAt: row.created_at.toISOString(),
    state: row.state,
    message: row.message,
    observableEvent:
      row.signal_id !== null && row.signal_at !== null
        ? { id: Number(row.signal_id), payload: row.payload, createdAt: row.signal_at.toISOString() }
        : null,
  }));
}

/** A signal an endpoint received, kept (the newest thousand per endpoint); answers its id. */
export async function recordSignal(
  db: Db,
  signal: { endpointId: number; tokenId: number; payload: Record<string, unknown> },
  now: Date,
): Promise<number> {
  const row = await db
    .insertInto('signals')
    .values({ signal_endpoint_id: signal.endpointId, token_id: signal.tokenId, payload: JSON.stringify(signal.payload), created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  await keepNewest(db, { table: 'signals', owner: 'signal_endpoint_id' }, signal.endpointId, SIGNALS_KEPT);
  return Number(row.id);
}

export type ActionSetRow = Selectable<ActionSetsTable>;

/** The enabled action sets of the endpoint whose rule the signal matches, in the order they run. */
export async function actionSetsMatching(db: Db, endpointId: number, payload: Record<string, unknown>): Promise<ActionSetRow[]> {
  const sets = await db
    .selectFrom('action_sets')
    .selectAll()
    .where('source_id', '=', endpointId)
    .where('enabled', '=', true)
    .orderBy('id')
    .execute();
  return sets.filter((candidate) => matches(candidate.match_payload as Record<string, unknown>, payload));
}

/** The service account an action set runs as, with its roles as they are now. */
export async function actorOfActionSet(db: Db, set: ActionSetRow): Promise<Actor> {
  const account = await db
    .selectFrom('users')
    .select(['id', 'username', 'email', 'root_role', 'custom_root_role_id'])
    .where('id', '=', set.actor_id)
    .executeTakeFirstOrThrow();
  return userActor(db, account);
}

/** The set's actions, in the caller's unit of work run as the set's account: all of them or none. */
export async function runActionSet(uow: UnitOfWork, set: ActionSetRow): Promise<void> {
  for (const action of set.actions as ActionInput[]) {
    const { project, environment, featureName } = action.executionParams;
    assertActorMay(uow.actor, 'UPDATE_FEATURE_ENVIRONMENT', project, environment);
    await setFeatureEnvironmentEnabled(uow, { project, environment, featureName }, action.action === 'TOGGLE_FEATURE_ON');
  }
}

/** The last signals an endpoint received, newest first. */
export async function listSignals(db: Db, endpointId: number, limit: number) {
  const rows = await db
    .selectFrom('signals')
    .select(['id', 'payload', 'created_at'])
    .where('signal_endpoint_id', '=', endpointId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((signal) => ({ id: Number(signal.id), payload: signal.payload, createdAt: signal.created_at.toISOString() }));
}
