import assert from 'node:assert/strict';
import { createProject, createFlag, featurePath } from '../helpers/projects.js';
import { describe, test } from 'node:test';
import { expectError, expectStatus, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { type Client, useTestApp } from '../helpers/test-app.js';

const ctx = useTestApp();

/** A project of the test's own with one flag in it. */
async function projectWithFlag(): Promise<{ project: string; flag: string; url: string }> {
  const project = await createProject(ctx, { prefix: 'fav' });
  const flag = await createFlag(ctx, project);
  return { project, flag, url: featurePath(project, flag) };
}

async function isFavorite(client: Client, url: string): Promise<boolean> {
  const response = await client.get(url);
  expectStatus(response, 200);
  return (response.json() as { favorite: boolean }).favorite;
}

/** The events since `before`, without their ids and times. */
async function favoriteEventsSince(before: number) {
  return (await eventsSince(ctx, before)).map(({ id: _id, createdAt: _createdAt, ...event }) => event);
}

/** A user's (un)favouriting of a flag, as the event log records it. */
function favoriteEvent(
  type: 'feature-favorited' | 'feature-unfavorited',
  user: { username: string; id: number },
  project: string,
  flag: string,
) {
  return {
    type,
    createdBy: user.username,
    createdByUserId: user.id,
    project,
    environment: null,
    featureName: flag,
    data: { feature: flag },
    preData: null,
    tags: [],
  };
}

describe('favoriting a flag', () => {
  test('marks it for the calling user only and records feature-favorited once', async () => {
    const { project, flag, url } = await projectWithFlag();
    const alice = await createUserSession(ctx, 'Editor');
    const bob = await createUserSession(ctx, 'Editor');
    const asAlice = ctx.withCookie(alice.cookie);
    const asBob = ctx.withCookie(bob.cookie);
    const before = await lastEventId(ctx);

    const response = await asAlice.post(`${url}/favorites`);
    expectStatus(response, 200);
    assert.equal(response.body, '');
    expectStatus(await asAlice.post(`${url}/favorites`), 200);

    assert.equal(await isFavorite(asAlice, url), true);
    assert.equal(await isFavorite(asBob, url), false);
    assert.equal(await isFavorite(ctx.admin, url), false);
    const listed = (await asAlice.get(`/api/admin/projects/${project}/features`)).json() as {
      features: Array<{ name: string; favorite: boolean }>;
    };
    assert.deepEqual(
      listed.features.map((f) => [f.name, f.favorite]),
      [[flag, true]],
    );

    assert.deepEqual(await favoriteEventsSince(before), [favoriteEvent('feature-favorited', alice, project, flag)]);
  });

  test('is open to a Viewer, who may only read', async () => {
    const { project, flag, url } = await projectWithFlag();
    const viewer = await createUserSession(ctx, 'Viewer');
    const before = await lastEventId(ctx);
    expectStatus(await ctx.withCookie(viewer.cookie).post(`${url}/favorites`), 200);
    assert.equal(await isFavorite(ctx.withCookie(viewer.cookie), url), true);
    const event = onlyEvent(await eventsSince(ctx, before), 'feature-favorited');
    assert.equal(event!.createdBy, viewer.username);
    assert.equal(event!.createdByUserId, viewer.id);
    assert.equal(event!.featureName, flag);
    assert.equal(event!.project, project);
  });

  test("copies the flag's tags into the event", async () => {
    const { flag, url } = await projectWithFlag();
    expectStatus(await ctx.admin.post(`/api/admin/features/${flag}/tags`, { type: 'simple', value: 'checkout' }), 201);
    const user = await createUserSession(ctx, 'Viewer');
    const before = await lastEventId(ctx);
    expectStatus(await ctx.withCookie(user.cookie).post(`${url}/favorites`), 200);
    expectStatus(await ctx.withCookie(user.cookie).delete(`${url}/favorites`), 200);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((event) => [event.type, event.tags]),
      [
        ['feature-favorited', [{ type: 'simple', value: 'checkout' }]],
        ['feature-unfavorited', [{ type: 'simple', value: 'checkout' }]],
      ],
    );
  });

  test('through a personal access token counts for its user', async () => {
    const { url } = await projectWithFlag();
    const user = await createUserSession(ctx, 'Editor');
    const created = await ctx
      .withCookie(user.cookie)
      .post('/api/admin/user/tokens', { description: 'favorites', expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
    expectStatus(created, 201);
    const pat = ctx.as((created.json() as { secret: string }).secret);
    expectStatus(await pat.post(`${url}/favorites`), 200);
    assert.equal(await isFavorite(ctx.withCookie(user.cookie), url), true);
  });
});

describe('unfavoriting a flag', () => {
  test('removes it for that user only and records feature-unfavorited once', async () => {
    const { project, flag, url } = await projectWithFlag();
    const alice = await createUserSession(ctx, 'Viewer');
    const bob = await createUserSession(ctx, 'Viewer');
    const asAlice = ctx.withCookie(alice.cookie);
    const asBob = ctx.withCookie(bob.cookie);
    expectStatus(await asAlice.post(`${url}/favorites`), 200);
    expectStatus(await asBob.post(`${url}/favorites`), 200);
    const before = await lastEventId(ctx);

    expectStatus(await asAlice.delete(`${url}/favorites`), 200);
    expectStatus(await asAlice.delete(`${url}/favorites`), 200);

    assert.equal(await isFavorite(asAlice, url), false);
    assert.equal(await isFavorite(asBob, url), true);
    assert.deepEqual(await favoriteEventsSince(before), [favoriteEvent('feature-unfavorited', alice, project, flag)]);
  });

  test('of a flag that was no favorite answers 200 and records nothing', async () => {
    const { url } = await projectWithFlag();
    const user = await createUserSession(ctx, 'Viewer');
    const before = await lastEventId(ctx);
    expectStatus(await ctx.withCookie(user.cookie).delete(`${url}/favorites`), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('bad favorite requests', () => {
  test('an admin token has no user to keep favorites for: 403 PermissionError', async () => {
    const { flag, url } = await projectWithFlag();
    const before = await lastEventId(ctx);
    for (const response of [await ctx.admin.post(`${url}/favorites`), await ctx.admin.delete(`${url}/favorites`)]) {
      const error = expectError(response, 403, 'PermissionError');
      assert.match(error.message, /Favorites belong to users/);
    }
    const favorites = await ctx.db.selectFrom('favorite_features').select('user_id').where('feature_name', '=', flag).execute();
    assert.deepEqual(favorites, []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an unknown flag, or a flag named under another project, is a 404', async () => {
    const { flag, url } = await projectWithFlag();
    const other = uniqueName('other');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: other, name: other }), 201);
    const user = await createUserSession(ctx, 'Editor');
    const asUser = ctx.withCookie(user.cookie);
    const before = await lastEventId(ctx);

    const unknown = expectError(await asUser.post(`${url}-missing/favorites`), 404, 'NotFoundError');
    assert.match(unknown.message, /Could not find flag/);
    const elsewhere = expectError(await asUser.post(`/api/admin/projects/${other}/features/${flag}/favorites`), 404, 'NotFoundError');
    assert.match(elsewhere.message, new RegExp(`"${flag}" in project "${other}"`));
    expectError(await asUser.delete(`${url}-missing/favorites`), 404, 'NotFoundError');

    assert.equal(await isFavorite(asUser, url), false);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('without credentials is a 401', async () => {
    const { url } = await projectWithFlag();
    const before = await lastEventId(ctx);
    expectError(await ctx.as().post(`${url}/favorites`), 401, 'AuthenticationRequired');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an invalid flag name in the path is a 400 naming the parameter', async () => {
    const { project } = await projectWithFlag();
    const user = await createUserSession(ctx, 'Editor');
    const error = expectError(
      await ctx.withCookie(user.cookie).post(`/api/admin/projects/${project}/features/bad%20name/favorites`),
      400,
      'BadDataError',
    );
    assert.ok(
      error.details.some((detail) => detail.path === '/params/featureName'),
      JSON.stringify(error.details),
    );
  });
});

describe('favoriting a project', () => {
  async function createProject(): Promise<string> {
    const project = uniqueName('favproj');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: project }), 201);
    return project;
  }

  async function favoriteProjectsOf(userId: number): Promise<string[]> {
    const rows = await ctx.db.selectFrom('favorite_projects').select('project').where('user_id', '=', userId).orderBy('project').execute();
    return rows.map((row) => row.project);
  }

  test('keeps it for the calling user, recording project-favorited and project-unfavorited once each', async () => {
    const project = await createProject();
    const user = await createUserSession(ctx, 'Viewer');
    const other = await createUserSession(ctx, 'Viewer');
    const asUser = ctx.withCookie(user.cookie);
    const before = await lastEventId(ctx);

    expectStatus(await asUser.post(`/api/admin/projects/${project}/favorites`), 200);
    expectStatus(await asUser.post(`/api/admin/projects/${project}/favorites`), 200);
    assert.deepEqual(await favoriteProjectsOf(user.id), [project]);
    assert.deepEqual(await favoriteProjectsOf(other.id), []);

    expectStatus(await asUser.delete(`/api/admin/projects/${project}/favorites`), 200);
    expectStatus(await asUser.delete(`/api/admin/projects/${project}/favorites`), 200);
    assert.deepEqual(await favoriteProjectsOf(user.id), []);

    const expected = (type: string) => ({
      type,
      createdBy: user.username,
      createdByUserId: user.id,
      project,
      environment: null,
      featureName: null,
      data: { project },
      preData: null,
      tags: [],
    });
    assert.deepEqual(
      (await eventsSince(ctx, before)).map(({ id: _id, createdAt: _createdAt, ...event }) => event),
      [expected('project-favorited'), expected('project-unfavorited')],
    );
  });

  test('does not keep the project from being deleted', async () => {
    const project = await createProject();
    const user = await createUserSession(ctx, 'Editor');
    expectStatus(await ctx.withCookie(user.cookie).post(`/api/admin/projects/${project}/favorites`), 200);
    expectStatus(await ctx.admin.delete(`/api/admin/projects/${project}`), 200);
    assert.deepEqual(await favoriteProjectsOf(user.id), []);
  });

  test('bad requests: an unknown project is a 404, an admin token a 403; nothing is recorded', async () => {
    const project = await createProject();
    const user = await createUserSession(ctx, 'Viewer');
    const before = await lastEventId(ctx);
    const missing = expectError(
      await ctx.withCookie(user.cookie).post(`/api/admin/projects/${project}-missing/favorites`),
      404,
      'NotFoundError',
    );
    assert.match(missing.message, new RegExp(`"${project}-missing"`));
    expectError(await ctx.withCookie(user.cookie).delete(`/api/admin/projects/${project}-missing/favorites`), 404, 'NotFoundError');
    const token = expectError(await ctx.admin.post(`/api/admin/projects/${project}/favorites`), 403, 'PermissionError');
    assert.match(token.message, /Favorites belong to users/);
    expectError(await ctx.admin.delete(`/api/admin/projects/${project}/favorites`), 403, 'PermissionError');
    assert.deepEqual(await favoriteProjectsOf(user.id), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});
