import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { EVENT_COUNT_BACKFILL } from '../../src/domain/events/event-counts.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import type { StoredEvent } from '../helpers/events.js';
import { useTestApp } from '../helpers/test-app.js';
import { createFlag, createProject } from '../helpers/projects.js';

/** An event as the API answers it: the stored fields, the time as text, and its label and summary. */
interface Event extends Omit<StoredEvent, 'createdAt' | 'data' | 'preData' | 'tags'> {
  createdAt: string;
  data: Record<string, unknown> | null;
  preData: Record<string, unknown> | null;
  tags: unknown[];
  label: string;
  summary: string;
}

const ctx = useTestApp();

/** Adds `count` events to a project straight into the log, as a large installation would have them. */
async function fillProject(project: string, count: number): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => ({
    created_at: new Date(Date.UTC(2025, 0, 1) + i * 1000),
    type: 'feature-metadata-updated',
    created_by: 'filler',
    created_by_user_id: 7,
    project,
    environment: null,
    feature_name: `filled-${i}`,
    data: JSON.stringify({ n: i }),
    pre_data: null,
    tags: '[]',
  }));
  for (let i = 0; i < rows.length; i += 500)
    await ctx.db
      .insertInto('events')
      .values(rows.slice(i, i + 500))
      .execute();
  // A bulk load bypasses recordEvent, so the exact counters are rebuilt as the benchmark seeder does.
  for (const statement of EVENT_COUNT_BACKFILL) await sql.raw(statement).execute(ctx.db);
}

describe('GET /api/admin/events', () => {
  test('without project: the 100 newest events of the instance, newest first, with the total', async () => {
    const project = await createProject(ctx, { prefix: 'p' });
    await fillProject(project, 120);
    await createFlag(ctx, project, { name: 'newest-flag' });
    const response = await ctx.admin.get('/api/admin/events');
    expectStatus(response, 200);
    const body = response.json() as { version: number; events: Event[]; totalEvents: number };
    assert.equal(body.version, 1);
    assert.equal(body.events.length, 100);
    const ids = body.events.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    assert.equal(body.events[0]!.type, 'feature-created');
    assert.equal(body.events[0]!.featureName, 'newest-flag');
    const [{ n }] = (await ctx.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .execute()) as [{ n: number }];
    assert.equal(body.totalEvents, Number(n));
  });

  test('with project: every event of that project, streamed past one batch, newest first', async () => {
    const project = await createProject(ctx, { prefix: 'p' });
    await fillProject(project, 2_345);
    const flag = await createFlag(ctx, project);
    const response = await ctx.admin.get(`/api/admin/events?project=${project}`);
    expectStatus(response, 200);
    assert.match(response.headers['content-type'] as string, /application\/json/);
    const body = response.json() as { version: number; events: Event[]; totalEvents: number };
    assert.equal(body.version, 1);
    assert.equal(body.totalEvents, 2_347); // project-created, 2,345 filled, feature-created
    assert.equal(body.events.length, 2_347);
    assert.ok(body.events.every((e) => e.project === project));
    assert.equal(new Set(body.events.map((e) => e.id)).size, 2_347, 'no event twice across batches');
    const ids = body.events.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    assert.equal(body.events[0]!.featureName, flag);
    assert.equal(body.events.at(-1)!.type, 'project-created');
    assert.equal(body.events[1]!.featureName, 'filled-2344');
  });

  test('of an unknown project is an empty list', async () => {
    const response = await ctx.admin.get(`/api/admin/events?project=${uniqueName('ghost')}`);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { version: 1, totalEvents: 0, events: [] });
  });

  test('is for admins only', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const error = expectError(await ctx.withCookie(editor.cookie).get('/api/admin/events'), 403, 'PermissionError');
    assert.deepEqual(error.permissions, ['ADMIN']);
  });
});

describe('GET /api/admin/events/:featureName', () => {
  test('lists all events of the flag, newest first, with label and summary', async () => {
    const project = await createProject(ctx, { prefix: 'p' });
    const flag = await createFlag(ctx, project);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${flag}/environments/production/on`), 200);
    expectStatus(await ctx.admin.put(`/api/admin/projects/${project}/features/${flag}`, { description: 'Checkout v2' }), 200);
    const response = await ctx.admin.get(`/api/admin/events/${flag}`);
    expectStatus(response, 200);
    const body = response.json() as { version: number; toggleName: string; events: Event[]; totalEvents: number };
    assert.equal(body.version, 1);
    assert.equal(body.toggleName, flag);
    assert.equal(body.totalEvents, 4);
    assert.deepEqual(
      body.events.map((e) => [e.type, e.environment, e.label, e.summary]),
      [
        ['feature-metadata-updated', null, 'Flag updated', `**admin-token** updated **${flag}** (description)`],
        ['feature-environment-enabled', 'production', 'Flag enabled', `**admin-token** enabled **${flag}** in **production**`],
        [
          'feature-strategy-add',
          'production',
          'Strategy added',
          `**admin-token** added strategy **flexibleRollout** (100% rollout) to **${flag}** in **production**`,
        ],
        ['feature-created', null, 'Flag created', `**admin-token** created **${flag}** (release) in project **${project}**`],
      ],
    );
  });

  test('of an unknown flag is an empty list', async () => {
    const response = await ctx.admin.get('/api/admin/events/never-existed');
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { version: 1, toggleName: 'never-existed', totalEvents: 0, events: [] });
  });

  test('is readable by every role', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    expectStatus(await ctx.withCookie(viewer.cookie).get('/api/admin/events/never-existed'), 200);
  });
});

describe('GET /api/admin/event-creators', () => {
  test('lists each creator once with the name they recorded under', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    expectStatus(await ctx.withCookie(editor.cookie).post('/api/admin/projects', { id: uniqueName('c'), name: 'C' }), 201);
    const response = await ctx.admin.get('/api/admin/event-creators');
    expectStatus(response, 200);
    const creators = response.json() as Array<{ id: number; name: string }>;
    assert.deepEqual(
      creators.find((c) => c.id === editor.id),
      { id: editor.id, name: editor.username },
    );
    assert.deepEqual(
      creators.find((c) => c.id === -42),
      { id: -42, name: 'admin-token' },
    );
    assert.equal(new Set(creators.map((c) => c.id)).size, creators.length, 'each creator once');
    const names = creators.map((c) => c.name);
    assert.deepEqual(
      names,
      [...names].sort((a, b) => a.localeCompare(b)),
    );
  });
});
