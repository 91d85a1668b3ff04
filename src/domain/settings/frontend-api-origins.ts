import type { Db } from '../../db/database.js';
import type { UnitOfWork } from '../../db/unit-of-work.js';
import { BadDataError, type ErrorDetail } from '../../shared/errors.js';
import { parseOrigin } from '../../shared/origin.js';
import { recordEvent } from '../events/record-event.js';

/** Unleash's name for the setting, and the `id` its `setting-updated` events carry. */
const FRONTEND_SETTINGS = 'frontendSettings';

/** The origins the setting holds; `['*']` allows every origin. */
export async function readFrontendApiOrigins(db: Db): Promise<string[] | undefined> {
  const row = await db.selectFrom('settings').select('content').where('name', '=', FRONTEND_SETTINGS).executeTakeFirst();
  return (row?.content as { frontendApiOrigins?: string[] } | undefined)?.frontendApiOrigins;
}

/**
 * Replaces the allowed origins. Each is `*` or an origin; an empty list allows none (browsers then cannot call
 * the frontend API at all, while mobile and server-side frontend SDKs still can).
 */
export async function setFrontendApiOrigins(uow: UnitOfWork, origins: string[], fallback: string[]): Promise<string[]> {
  const details: ErrorDetail[] = [];
  const normalized = origins.map((origin, index) => {
    if (origin === '*') return origin;
    const parsed = parseOrigin(origin);
    if (!parsed) {
      details.push({
        path: `/body/frontendApiOrigins/${index}`,
        message: `Each origin is * or a scheme, host and optional port such as https://app.example.com (got ${JSON.stringify(origin)})`,
      });
    }
    return parsed ?? origin;
  });
  if (details.length > 0) throw new BadDataError('The frontend API origins are invalid', details);
  const next = [...new Set(normalized)];
  const current = (await readFrontendApiOrigins(uow.tx)) ?? fallback;
  await uow.tx
    .insertInto('settings')
    .values({ name: FRONTEND_SETTINGS, content: JSON.stringify({ frontendApiOrigins: next }) })
    .onConflict((oc) => oc.column('name').doUpdateSet({ content: JSON.stringify({ frontendApiOrigins: next }) }))
    .execute();
  await recordEvent(uow, {
    type: 'setting-updated',
    data: { id: FRONTEND_SETTINGS, frontendApiOrigins: next },
    preData: { id: FRONTEND_SETTINGS, frontendApiOrigins: current },
  });
  return next;
}

/**
 * The allowed origins as the CORS check needs them on every frontend request: read once and kept until a
 * change is committed (on any instance). Before anyone sets them, `FRONTEND_API_ORIGINS` decides.
 */
export class FrontendApiOrigins {
  private cached: Promise<string[]> | undefined;

  constructor(
    private readonly db: Db,
    private readonly fallback: string[],
  ) {}

  allowed(): Promise<string[]> {
    this.cached ??= readFrontendApiOrigins(this.db)
      .then((origins) => origins ?? this.fallback)
      .catch((error: unknown) => {
        this.cached = undefined;
        throw error;
      });
    return this.cached;
  }

  invalidate(): void {
    this.cached = undefined;
  }
}
