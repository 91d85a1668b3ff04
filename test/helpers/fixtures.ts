import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { expectStatus } from './assertions.js';
import { type Client, STRONG_PASSWORD, type TestApp, useTestApp } from './test-app.js';

/** A name no other test uses, so each test owns its data. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
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

/** The app a test file shares and an Editor signed in to it, as a client and an identity; filled in when the file's tests start. */
export function useTestAppWithEditor(): { ctx: TestApp; editor: { client: Client; id: number; username: string } } {
  const editor = {} as { client: Client; id: number; username: string };
  const ctx = useTestApp({}, async (app) => {
    const user = await createUserSession(app, 'Editor');
    Object.assign(editor, { client: app.withCookie(user.cookie), id: user.id, username: user.username });
  });
  return { ctx, editor };
}

/** A request whose body is cut-off JSON, as a client with a bug sends it. */
export function sendMalformedJson(client: Client, method: 'POST' | 'PUT' | 'PATCH', url: string, payload: string) {
  return client.inject({ method, url, headers: { 'content-type': 'application/json' }, payload });
}
