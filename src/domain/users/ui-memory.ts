import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError } from '../../shared/errors.js';

/**
 * What Unleash's admin UI remembers of one person: feedback questionnaires answered or declined, splash screens seen.
 * Ids are the UI's own names; a person may hold at most MAX_PER_PERSON of each, so no session can grow them without
 * end.
 */
export const MAX_PER_PERSON = 100;

export interface FeedbackView {
  userId: number;
  feedbackId: string;
  neverShow: boolean;
  given: string | null;
}

export interface SplashView {
  userId: number;
  splashId: string;
  seen: boolean;
}

async function assertRoom(uow: UnitOfWork, table: 'user_feedback' | 'user_splash', userId: number, what: string): Promise<void> {
  const { n } = await uow.tx
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  if (Number(n) >= MAX_PER_PERSON) {
    throw new BadDataError(`A person keeps at most ${MAX_PER_PERSON} ${what}`, [
      { path: '/params/id', message: `No room for another of ${what}` },
    ]);
  }
}

const feedbackView = (row: { user_id: number; feedback_id: string; never_show: boolean; given: Date | null }): FeedbackView => ({
  userId: row.user_id,
  feedbackId: row.feedback_id,
  neverShow: row.never_show,
  given: row.given?.toISOString() ?? null,
});

/** Records a questionnaire answered now (or declined for good with `neverShow`), replacing what was held of it. */
export async function giveFeedback(
  uow: UnitOfWork,
  userId: number,
  feedbackId: string,
  change: { neverShow?: boolean; given?: Date | null },
): Promise<FeedbackView> {
  const held = await uow.tx
    .selectFrom('user_feedback')
    .selectAll()
    .where('user_id', '=', userId)
    .where('feedback_id', '=', feedbackId)
    .forUpdate()
    .executeTakeFirst();
  if (!held) await assertRoom(uow, 'user_feedback', userId, 'feedback answers');
  const given = change.given !== undefined ? change.given : (held?.given ?? uow.now);
  const neverShow = change.neverShow ?? held?.never_show ?? false;
  const row = await uow.tx
    .insertInto('user_feedback')
    .values({ user_id: userId, feedback_id: feedbackId, given, never_show: neverShow })
    .onConflict((oc) => oc.columns(['user_id', 'feedback_id']).doUpdateSet({ given, never_show: neverShow }))
    .returningAll()
    .executeTakeFirstOrThrow();
  return feedbackView(row);
}

/** Records that the person has seen a splash screen. */
export async function markSplashSeen(uow: UnitOfWork, userId: number, splashId: string): Promise<SplashView> {
  const held = await uow.tx
    .selectFrom('user_splash')
    .select('seen')
    .where('user_id', '=', userId)
    .where('splash_id', '=', splashId)
    .executeTakeFirst();
  if (!held) {
    await assertRoom(uow, 'user_splash', userId, 'splash screens');
    await uow.tx
      .insertInto('user_splash')
      .values({ user_id: userId, splash_id: splashId, seen: true })
      .onConflict((oc) => oc.columns(['user_id', 'splash_id']).doUpdateSet({ seen: true }))
      .execute();
  }
  return { userId, splashId, seen: true };
}

/** What `GET /api/admin/user` tells the UI: the feedback held, and the splash screens seen by id. */
export async function uiMemoryOf(db: Db, userId: number): Promise<{ feedback: FeedbackView[]; splash: Record<string, boolean> }> {
  const [feedback, splash] = await Promise.all([
    db.selectFrom('user_feedback').selectAll().where('user_id', '=', userId).orderBy('feedback_id').execute(),
    db.selectFrom('user_splash').select(['splash_id', 'seen']).where('user_id', '=', userId).orderBy('splash_id').execute(),
  ]);
  const seen: Record<string, boolean> = Object.create(null);
  for (const row of splash) seen[row.splash_id] = row.seen;
  return { feedback: feedback.map(feedbackView), splash: seen };
}
