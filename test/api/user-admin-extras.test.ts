import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertDetailAt, expectError, expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { STRONG_PASSWORD, useTestApp } from '../helpers/test-app.js';

// Unleash's user administration beyond creating and changing people: checking a password before it is chosen,
// clearing out people who no longer sign in, and removing everyone an identity provider provisioned.

const DAY = 86_400_000;

describe('user administration', () => {
  const ctx = useTestApp();

  test('a password is checked against the rules before it is chosen, by an Admin or on the public reset page', async () => {
    for (const path of ['/api/admin/user-admin/validate-password', '/auth/reset/validate-password']) {
      const client = path.startsWith('/auth') ? ctx.as() : ctx.admin;
      expectStatus(await client.post(path, { password: STRONG_PASSWORD }), 200);
      const weak = expectError(await client.post(path, { password: 'password' }), 400, 'BadDataError');
      assertDetailAt(weak, '/body/password');
      assert.ok(
        weak.details.some((detail) => /uppercase/.test(detail.message)),
        JSON.stringify(weak.details),
      );
      expectError(await client.post(path, {}), 400, 'BadDataError');
    }
    const editor = await createUserSession(ctx, 'Editor');
    expectError(
      await ctx.withCookie(editor.cookie).post('/api/admin/user-admin/validate-password', { password: STRONG_PASSWORD }),
      403,
      'PermissionError',
    );
  });

  test('people not seen for 180 days are listed as inactive; deleting them spares anyone else', async () => {
    const start = ctx.clock.now();
    try {
      const neverSignedIn = (
        await ctx.admin.post('/api/admin/user-admin', { username: uniqueName('never'), rootRole: 'Viewer' })
      ).json() as { id: number };
      const signedInLongAgo = await createUserSession(ctx, 'Viewer');
      ctx.clock.advance(181 * DAY);
      const recent = await createUserSession(ctx, 'Viewer');
      const { inactiveUsers } = await getOk<{ inactiveUsers: Array<{ id: number; seenAt: string | null }> }>(
        ctx.admin,
        '/api/admin/user-admin/inactive',
      );
      const ids = inactiveUsers.map((user) => user.id);
      assert.ok(ids.includes(neverSignedIn.id) && ids.includes(signedInLongAgo.id), JSON.stringify(inactiveUsers));
      assert.ok(!ids.includes(recent.id));
      assert.equal(inactiveUsers.find((user) => user.id === neverSignedIn.id)?.seenAt, null);

      const before = await lastEventId(ctx);
      expectStatus(await ctx.admin.post('/api/admin/user-admin/inactive/delete', { ids: [neverSignedIn.id, recent.id] }), 200);
      assert.deepEqual(
        (await eventsSince(ctx, before)).map((event) => [event.type, (event.preData as { id: number }).id]),
        [['user-deleted', neverSignedIn.id]],
      );
      expectError(await ctx.admin.get(`/api/admin/user-admin/${neverSignedIn.id}`), 404, 'NotFoundError');
      expectStatus(await ctx.admin.get(`/api/admin/user-admin/${recent.id}`), 200);
      await expectRefused(ctx, () => ctx.admin.post('/api/admin/user-admin/inactive/delete', { ids: ['one'] }), {
        status: 400,
        name: 'BadDataError',
        path: '/body/ids/0',
      });
    } finally {
      ctx.clock.set(start);
    }
  });

  test('everyone provisioned over SCIM is deleted at once; people made in Vexil stay', async () => {
    const made = await ctx.admin.post('/api/admin/scim/token');
    expectStatus(made, 201);
    const { token } = made.json() as { token: string };
    const provisioned = await ctx.app.inject({
      method: 'POST',
      url: '/scim/v2/Users',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      payload: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `${uniqueName('okta')}@example.com` }),
    });
    expectStatus(provisioned, 201);
    const provisionedId = Number((provisioned.json() as { id: string }).id);
    const local = await createUserSession(ctx, 'Viewer');
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete('/api/admin/user-admin/scim-users'), 200);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, (event.preData as { id: number }).id]),
      [['user-deleted', provisionedId]],
    );
    expectError(await ctx.admin.get(`/api/admin/user-admin/${provisionedId}`), 404, 'NotFoundError');
    expectStatus(await ctx.admin.get(`/api/admin/user-admin/${local.id}`), 200);
    const editor = await createUserSession(ctx, 'Editor');
    await expectRefused(ctx, () => ctx.withCookie(editor.cookie).delete('/api/admin/user-admin/scim-users'), {
      status: 403,
      name: 'PermissionError',
    });
  });
});

describe('whom project access can name', () => {
  const ctx = useTestApp();

  test('everyone signed in sees the people and groups; only an Admin sees their emails', async () => {
    const email = `${uniqueName('lee')}@example.com`;
    const lee = (await ctx.admin.post('/api/admin/user-admin', { email, name: 'Lee', rootRole: 'Viewer' })).json() as { id: number };
    const group = (await ctx.admin.post('/api/admin/groups', { name: uniqueName('team'), users: [{ user: { id: lee.id } }] })).json() as {
      id: number;
    };
    const viewer = await createUserSession(ctx, 'Viewer');
    type Candidates = { users: Array<{ id: number; email: string | null }>; groups: Array<{ id: number; userCount: number }> };
    const asViewer = await getOk<Candidates>(ctx.withCookie(viewer.cookie), '/api/admin/user-admin/access');
    assert.deepEqual(
      asViewer.users.find((user) => user.id === lee.id),
      { id: lee.id, name: 'Lee', username: null, email: null, imageUrl: null },
    );
    assert.deepEqual(asViewer.groups.find((entry) => entry.id === group.id)?.userCount, 1);
    const admin = await createUserSession(ctx, 'Admin');
    const asAdmin = await getOk<Candidates>(ctx.withCookie(admin.cookie), '/api/admin/user-admin/access');
    assert.equal(asAdmin.users.find((user) => user.id === lee.id)?.email, email);
    expectError(await ctx.as().get('/api/admin/user-admin/access'), 401, 'AuthenticationRequired');
  });
});
