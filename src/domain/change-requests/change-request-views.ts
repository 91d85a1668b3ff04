import { inProjectVisibleTo } from '../access/project-visibility.js';
import type { Selectable } from 'kysely';
import type { ChangeRequestChangesTable, ChangeRequestState, ChangeRequestsTable } from '../../db/schema.js';
import { NotFoundError } from '../../shared/errors.js';
import type { Actor } from '../../db/unit-of-work.js';
import { actorIdentity } from '../access/actor.js';
import { actorMay } from '../access/permissions.js';
import { iso } from '../../shared/dates.js';
import { isFeatureChange, type ChangeInput, type ChangeRequestScope } from './change-actions.js';
import { changeConflict, defaultChangeFor, flagConflict, loadLiveState, type LiveState, type StoredChange } from './change-conflicts.js';
import type { Db, LockingHandle } from '../../db/database.js';
import { protectionOfProjects } from '../protected-environments/protection.js';

export type ChangeRequestRow = Selectable<ChangeRequestsTable>;

/** The states in which a change request still takes changes and decisions; the others are final. */
export const OPEN_STATES: readonly ChangeRequestState[] = ['Draft', 'In review', 'Approved', 'Scheduled'];

export const isOpen = (state: ChangeRequestState) => OPEN_STATES.includes(state);

export interface UserReference {
  id: number;
  username: string;
  imageUrl: string | null;
}

export interface ChangeView {
  id: number;
  action: string;
  payload: unknown;
  conflict?: string;
  createdBy: UserReference;
  createdAt: string;
}

export interface FeatureChangeGroupView {
  name: string;
  conflict?: string;
  changes: ChangeView[];
  defaultChange?: { action: string; payload: unknown };
}

export interface ReviewView {
  createdBy: UserReference;
  createdAt: string;
}

export interface CommentView {
  id: number;
  text: string;
  createdBy: UserReference;
  createdAt: string;
}

/** A change request as Unleash's `changeRequestSchema` shows it (spec 2.4), with who applied it. */
export interface ChangeRequestView {
  id: number;
  title: string;
  environment: string;
  minApprovals: number;
  project: string;
  features: FeatureChangeGroupView[];
  segments: Array<ChangeView & { name: string }>;
  approvals: ReviewView[];
  rejections: ReviewView[];
  comments: CommentView[];
  createdBy: UserReference;
  createdAt: string;
  state: ChangeRequestState;
  schedule?: { scheduledAt: string; status: 'pending' | 'failed'; failureReason?: string; reason?: string };
  appliedBy?: UserReference;
  appliedAt?: string;
  /** What applying it changed, as the events it recorded tell it (before and after). */
  appliedChanges?: AppliedChangeView[];
}

export interface AppliedChangeView {
  eventId: number;
  type: string;
  featureName: string | null;
  preData: unknown;
  data: unknown;
}

/** The stored change as the API took it. */
export function toStoredChange(row: Selectable<ChangeRequestChangesTable>): StoredChange {
  const payload = row.payload ?? undefined;
  const change = (
    row.feature_name === null
      ? { action: row.action, payload }
      : { action: row.action, feature: row.feature_name, ...(payload === undefined ? {} : { payload }) }
  ) as ChangeInput;
  return { id: row.id, change, base: row.base };
}

export const scopeOf = (row: ChangeRequestRow): ChangeRequestScope => ({ project: row.project, environment: row.environment });

function groupBy<T>(items: T[], key: (item: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

/**
 * Full views of the given change requests in a fixed number of queries whatever their count. Conflicts and
 * default changes are worked out for open requests only: a final request's changes were applied or dropped.
 */
export async function loadChangeRequestViews(db: Db, rows: ChangeRequestRow[]): Promise<ChangeRequestView[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const [changeRows, reviews, comments, applied, protection] = await Promise.all([
    db.selectFrom('change_request_changes').selectAll().where('change_request_id', 'in', ids).orderBy('id').execute(),
    db
      .selectFrom('change_request_reviews')
      .selectAll()
      .where('change_request_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('user_id')
      .execute(),
    db.selectFrom('change_request_comments').selectAll().where('change_request_id', 'in', ids).orderBy('id').execute(),
    appliedEvents(
      db,
      rows.filter((row) => row.state === 'Applied').map((row) => row.id),
    ),
    protectionOfProjects(
      db,
      rows.map((row) => row.project),
    ),
  ]);
  const changesByRequest = groupBy(changeRows, (row) => row.change_request_id);
  const openRequests = rows.filter((row) => isOpen(row.state));
  const live = await loadLiveState(
    db,
    openRequests.map((row) => ({ scope: scopeOf(row), changes: (changesByRequest.get(row.id) ?? []).map(toStoredChange) })),
  );
  const userIds = [
    ...rows.flatMap((row) => [row.created_by_user_id, ...(row.applied_by_user_id === null ? [] : [row.applied_by_user_id])]),
    ...changeRows.map((row) => row.created_by_user_id),
    ...reviews.map((row) => row.user_id),
    ...comments.map((row) => row.created_by_user_id),
  ];
  const images = await imageUrls(db, userIds);
  const user = (id: number, username: string): UserReference => ({ id, username, imageUrl: images.get(id) ?? null });
  const reviewsByRequest = groupBy(reviews, (row) => row.change_request_id);
  const commentsByRequest = groupBy(comments, (row) => row.change_request_id);

  return rows.map((row): ChangeRequestView => {
    const requestChanges = changesByRequest.get(row.id) ?? [];
    const requestReviews = reviewsByRequest.get(row.id) ?? [];
    const review = (decision: 'approved' | 'rejected') =>
      requestReviews
        .filter((r) => r.decision === decision)
        .map((r) => ({ createdBy: user(r.user_id, r.username), createdAt: r.created_at.toISOString() }));
    const view: ChangeRequestView = {
      id: row.id,
      title: row.title ?? `Change request #${row.id}`,
      environment: row.environment,
      minApprovals: protection.get(row.project, row.environment).requiredApprovals,
      project: row.project,
      ...groupChanges(row, requestChanges, isOpen(row.state) ? live : undefined, user),
      approvals: review('approved'),
      rejections: review('rejected'),
      comments: (commentsByRequest.get(row.id) ?? []).map((c) => ({
        id: c.id,
        text: c.text,
        createdBy: user(c.created_by_user_id, c.created_by),
        createdAt: c.created_at.toISOString(),
      })),
      createdBy: user(row.created_by_user_id, row.created_by),
      createdAt: row.created_at.toISOString(),
      state: row.state,
    };
    if (row.state === 'Scheduled' && row.scheduled_at && row.schedule_status) {
      const failure = row.schedule_failure_reason ?? undefined;
      view.schedule = {
        scheduledAt: row.scheduled_at.toISOString(),
        status: row.schedule_status,
        ...(failure === undefined ? {} : { failureReason: failure, reason: failure }),
      };
    }
    if (row.applied_by_user_id !== null && row.applied_by !== null && row.applied_at !== null) {
      view.appliedBy = user(row.applied_by_user_id, row.applied_by);
      view.appliedAt = iso(row.applied_at)!;
    }
    if (row.state === 'Applied') view.appliedChanges = applied.get(row.id) ?? [];
    return view;
  });
}

/**
 * The changes the application of each request made, from the events recorded in its transaction (the change
 * request's own lifecycle events left out): the audit log is what it changed, before and after.
 */
async function appliedEvents(db: Db, ids: number[]): Promise<Map<number, AppliedChangeView[]>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('events')
    .select(['id', 'change_request_id', 'type', 'feature_name', 'pre_data', 'data'])
    .where('change_request_id', 'in', ids)
    .where('type', 'not like', 'change-%')
    .orderBy('change_request_id')
    .orderBy('id')
    .execute();
  const byRequest = new Map<number, AppliedChangeView[]>();
  for (const row of rows) {
    const list = byRequest.get(row.change_request_id!) ?? [];
    list.push({ eventId: row.id, type: row.type, featureName: row.feature_name, preData: row.pre_data, data: row.data });
    byRequest.set(row.change_request_id!, list);
  }
  return byRequest;
}

function groupChanges(
  row: ChangeRequestRow,
  changeRows: Array<Selectable<ChangeRequestChangesTable>>,
  live: LiveState | undefined,
  user: (id: number, username: string) => UserReference,
): Pick<ChangeRequestView, 'features' | 'segments'> {
  const scope = scopeOf(row);
  const toView = (changeRow: Selectable<ChangeRequestChangesTable>, stored: StoredChange): ChangeView => {
    const conflict = live ? changeConflict(live, scope, stored) : undefined;
    return {
      id: changeRow.id,
      action: changeRow.action,
      payload: changeRow.payload ?? {},
      ...(conflict === undefined ? {} : { conflict }),
      createdBy: user(changeRow.created_by_user_id, changeRow.created_by),
      createdAt: changeRow.created_at.toISOString(),
    };
  };
  const features = new Map<string, { changes: ChangeView[]; inputs: ChangeInput[] }>();
  const segments: Array<ChangeView & { name: string }> = [];
  for (const changeRow of changeRows) {
    const stored = toStoredChange(changeRow);
    const view = toView(changeRow, stored);
    if (isFeatureChange(stored.change)) {
      const group = features.get(stored.change.feature) ?? { changes: [], inputs: [] };
      group.changes.push(view);
      group.inputs.push(stored.change);
      features.set(stored.change.feature, group);
    } else {
      // The segment's current name, or the one it had when the change was made if it is gone since.
      const name = live?.segments.get(stored.change.payload.id)?.name ?? (stored.base as { name: string }).name;
      segments.push({ ...view, name });
    }
  }
  return {
    features: [...features].map(([name, group]) => {
      const conflict = live ? groupConflict(live, scope, name, group.changes) : undefined;
      const defaultChange = live ? defaultChangeFor(live, scope, name, group.inputs) : undefined;
      return {
        name,
        ...(conflict === undefined ? {} : { conflict }),
        changes: group.changes,
        ...(defaultChange === undefined ? {} : { defaultChange }),
      };
    }),
    segments,
  };
}

/** A flag-wide conflict, or how many of the flag's changes conflict. */
function groupConflict(live: LiveState, scope: ChangeRequestScope, flag: string, changes: ChangeView[]): string | undefined {
  const flagLevel = flagConflict(live, scope, flag);
  if (flagLevel) return flagLevel;
  const conflicting = changes.filter((change) => change.conflict !== undefined).length;
  if (conflicting === 0) return undefined;
  return `${conflicting} change${conflicting === 1 ? '' : 's'} to flag "${flag}" conflict${conflicting === 1 ? 's' : ''} with its current state`;
}

async function imageUrls(db: Db, ids: number[]): Promise<Map<number, string | null>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'image_url']).where('id', 'in', unique).execute();
  return new Map(rows.map((row) => [row.id, row.image_url]));
}

export async function findChangeRequest<Lock extends boolean = false>(
  db: LockingHandle<Lock>,
  project: string,
  id: number,
  lock?: Lock,
): Promise<ChangeRequestRow> {
  let query = db.selectFrom('change_requests').selectAll().where('id', '=', id).where('project', '=', project);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find change request ${id} in project "${project}"`);
  return row;
}

async function assertProjectExists(db: Db, project: string): Promise<void> {
  const row = await db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst();
  if (!row) throw new NotFoundError(`Could not find project "${project}"`);
}

export async function getChangeRequest(db: Db, project: string, id: number): Promise<ChangeRequestView> {
  const [view] = await loadChangeRequestViews(db, [await findChangeRequest(db, project, id)]);
  return view!;
}

/** The caller's own open change requests in the project (spec 4.6), newest first. */
export async function listPendingChangeRequests(db: Db, project: string, actor: Actor): Promise<ChangeRequestView[]> {
  await assertProjectExists(db, project);
  const rows = await db
    .selectFrom('change_requests')
    .selectAll()
    .where('project', '=', project)
    .where('created_by_user_id', '=', actorIdentity(actor).createdByUserId)
    .where('state', 'in', OPEN_STATES)
    .orderBy('id', 'desc')
    .execute();
  return loadChangeRequestViews(db, rows);
}

/** How many of each list `openChangeRequestsOf` answers at most: far more than anyone works through at once. */
const MAX_LISTED = 500;

/**
 * The open change requests a person has to do with, across projects, oldest first: those waiting for her review
 * (in review, opened by someone else, in a project where she may approve, not yet approved by her) and those she
 * opened (in any open state).
 */
export async function openChangeRequestsOf(db: Db, actor: Actor): Promise<{ toReview: ChangeRequestView[]; mine: ChangeRequestView[] }> {
  const me = actorIdentity(actor).createdByUserId;
  const reviewable = await db
    .selectFrom('change_requests as cr')
    .selectAll('cr')
    .where('cr.state', '=', 'In review')
    .where('cr.created_by_user_id', '!=', me)
    // Reviewing is a project permission an Editor's root role holds everywhere; a private project's stay its own.
    .where(inProjectVisibleTo(actor, 'cr.project'))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('change_request_reviews as r')
            .select('r.user_id')
            .whereRef('r.change_request_id', '=', 'cr.id')
            .where('r.user_id', '=', me),
        ),
      ),
    )
    .orderBy('cr.id')
    .limit(MAX_LISTED * 10)
    .execute();
  const toReview = reviewable.filter((row) => actorMay(actor, 'APPROVE_CHANGE_REQUEST', row.project, row.environment)).slice(0, MAX_LISTED);
  const mine = await db
    .selectFrom('change_requests')
    .selectAll()
    .where('created_by_user_id', '=', me)
    .where('state', 'in', OPEN_STATES)
    .where(inProjectVisibleTo(actor, 'project'))
    .orderBy('id')
    .limit(MAX_LISTED)
    .execute();
  const views = new Map((await loadChangeRequestViews(db, [...toReview, ...mine])).map((view) => [view.id, view]));
  return { toReview: toReview.map((row) => views.get(row.id)!), mine: mine.map((row) => views.get(row.id)!) };
}

/** Everyone's open change requests in the project that change the flag, newest first. */
export async function listPendingChangeRequestsForFeature(db: Db, project: string, featureName: string): Promise<ChangeRequestView[]> {
  await assertProjectExists(db, project);
  const rows = await db
    .selectFrom('change_requests as cr')
    .selectAll('cr')
    .where('cr.project', '=', project)
    .where('cr.state', 'in', OPEN_STATES)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('change_request_changes as c')
          .select('c.id')
          .whereRef('c.change_request_id', '=', 'cr.id')
          .where('c.feature_name', '=', featureName),
      ),
    )
    .orderBy('cr.id', 'desc')
    .execute();
  return loadChangeRequestViews(db, rows);
}

/** All change requests of the project, newest first, a page at a time. */
export async function listChangeRequests(db: Db, project: string, page: { limit: number; offset: number }): Promise<ChangeRequestView[]> {
  await assertProjectExists(db, project);
  const rows = await db
    .selectFrom('change_requests')
    .selectAll()
    .where('project', '=', project)
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return loadChangeRequestViews(db, rows);
}

/** Ids of the open change requests changing each flag, by flag and environment, for feature search. */
export async function openChangeRequestIds(db: Db, featureNames: string[]): Promise<Map<string, number[]>> {
  if (featureNames.length === 0) return new Map();
  const rows = await db
    .selectFrom('change_request_changes as c')
    .innerJoin('change_requests as cr', 'cr.id', 'c.change_request_id')
    .select(['c.feature_name', 'cr.environment', 'cr.id'])
    .distinct()
    .where('c.feature_name', 'in', featureNames)
    .where('cr.state', 'in', OPEN_STATES)
    .orderBy('cr.id')
    .execute();
  const ids = new Map<string, number[]>();
  for (const row of rows) {
    const key = `${row.feature_name}\u0000${row.environment}`;
    ids.set(key, [...(ids.get(key) ?? []), row.id]);
  }
  return ids;
}

/** Unleash's `changeRequestConfigSchema` entry for one environment of the project. */
export interface ChangeRequestEnvironmentConfig {
  environment: string;
  type: string;
  changeRequestEnabled: boolean;
  requiredApprovals: number;
}

/** Every environment of the project, in display order, with its change request configuration. */
export async function getChangeRequestConfig(db: Db, project: string): Promise<ChangeRequestEnvironmentConfig[]> {
  await assertProjectExists(db, project);
  const rows = await db
    .selectFrom('project_environments as pe')
    .innerJoin('environments as e', 'e.name', 'pe.environment_name')
    .select(['e.name', 'e.type'])
    .where('pe.project_id', '=', project)
    .orderBy('e.sort_order')
    .orderBy('e.name')
    .execute();
  const protection = await protectionOfProjects(db, [project]);
  return rows.map((row) => {
    const { changeRequestsEnabled, requiredApprovals } = protection.get(project, row.name);
    return { environment: row.name, type: row.type, changeRequestEnabled: changeRequestsEnabled, requiredApprovals };
  });
}
