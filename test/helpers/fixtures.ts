import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { STRONG_PASSWORD, type TestApp } from './test-app.js';

/** A name no other test uses, so each test owns its data. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export function expectStatus(response: LightMyRequestResponse, status: number): void {
  assert.equal(response.statusCode, status, `expected ${status}, got ${response.statusCode}: ${response.body}`);
}

/** Asserts Unleash's error body and returns it for further checks. */
export function expectError(response: LightMyRequestResponse, status: number, name: string) {
  expectStatus(response, status);
  const body = response.json() as {
    id: string;
    name: string;
    message: string;
    details: Array<{ message: string; path?: string }>;
    permissions?: string[];
  };
  assert.equal(body.name, name);
  assert.match(body.id, /^[0-9a-f-]{36}$/);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.ok(Array.isArray(body.details) && body.details.length > 0, 'details must list at least one problem');
  return body;
}

export interface StoredEvent {
  id: number;
  type: string;
  createdBy: string;
  createdByUserId: number | null;
  project: string | null;
  environment: string | null;
  featureName: string | null;
  data: unknown;
  preData: unknown;
  tags: unknown;
  createdAt: Date;
}

/** The events written after `afterId`, oldest first: what a change under test recorded. */
export async function eventsSince(ctx: Pick<TestApp, 'db'>, afterId: number): Promise<StoredEvent[]> {
  const rows = await ctx.db.selectFrom('events').selectAll().where('id', '>', afterId).orderBy('id').execute();
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    createdBy: row.created_by,
    createdByUserId: row.created_by_user_id,
    project: row.project,
    environment: row.environment,
    featureName: row.feature_name,
    data: row.data,
    preData: row.pre_data,
    tags: row.tags,
    createdAt: row.created_at,
  }));
}

export async function lastEventId(ctx: Pick<TestApp, 'db'>): Promise<number> {
  const row = await ctx.db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** Creates a user with a password through the API and logs them in; returns their id and session cookie. */
export async function createUserSession(
  ctx: TestApp,
  rootRole: 'Admin' | 'Editor' | 'Viewer',
): Promise<{ id: number; username: string; cookie: string }> {
  const username = uniqueName(rootRole.toLowerCase());
  const created = await ctx.admin.post('/api/admin/user-admin', { username, rootRole, password: STRONG_PASSWORD });
  expectStatus(created, 201);
  const login = await ctx.as().post('/auth/simple/login', { username, password: STRONG_PASSWORD });
  expectStatus(login, 200);
  const setCookie = login.cookies.find((cookie) => cookie.name === 'vexil-session');
  assert.ok(setCookie, 'login must set the session cookie');
  return { id: (created.json() as { id: number }).id, username, cookie: `vexil-session=${setCookie.value}` };
}
