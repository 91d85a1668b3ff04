import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

/** GET /api/admin/events/export: the whole matching log, oldest first, as NDJSON or CSV, for SIEM import. */
let project: string;
let flags: string[];
const ctx = useTestApp({}, async () => {
  project = uniqueName('export');
  // A description a spreadsheet would run as a formula.
  expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: project, description: '=HYPERLINK("http://evil")' }), 201);
  flags = [uniqueName('first'), uniqueName('second'), uniqueName('third')];
  for (const flag of flags) {
    expectStatus(
      await ctx.admin.post(`/api/admin/projects/${project}/features`, {
        name: flag,
        description: `about ${flag}, "quoted"\nand a new line`,
      }),
      201,
    );
  }
  expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features/${flags[0]}/environments/development/on`), 200);
});

interface ExportedEvent {
  id: number;
  type: string;
  project: string | null;
  featureName: string | null;
  createdBy: string;
  label: string;
  summary: string;
  data: { description?: string } | null;
}

/** The project's events as the search API lists them, oldest first. */
async function searched(filters: string): Promise<ExportedEvent[]> {
  const response = await ctx.admin.get(`/api/admin/search/events?${filters}&limit=1000`);
  expectStatus(response, 200);
  return (response.json() as { events: ExportedEvent[] }).events.reverse();
}

describe('GET /api/admin/events/export', () => {
  test('NDJSON: one event per line, oldest first, the same events the search finds, as a download', async () => {
    const response = await ctx.admin.get(`/api/admin/events/export?project=IS:${project}`);
    expectStatus(response, 200);
    assert.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    assert.match(String(response.headers['content-disposition']), /^attachment; filename="vexil-events-\d{4}-\d{2}-\d{2}\.ndjson"$/);
    assert.ok(response.body.endsWith('\n'));
    const exported = response.body
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as ExportedEvent);
    assert.deepEqual(
      exported.map((event) => [event.type, event.featureName]),
      // Turning a flag on without strategies adds the default rollout first.
      [
        ['project-created', null],
        ...flags.map((flag) => ['feature-created', flag]),
        ['feature-strategy-add', flags[0]],
        ['feature-environment-enabled', flags[0]],
      ],
    );
    assert.deepEqual(exported, await searched(`project=IS:${project}`));
    assert.deepEqual(
      exported.map((event) => event.id),
      [...exported.map((event) => event.id)].sort((a, b) => a - b),
    );
  });

  test('filters as the event search does: type, flag, text and days', async () => {
    const byType = await ctx.admin.get(`/api/admin/events/export?project=IS:${project}&type=IS:feature-created`);
    expectStatus(byType, 200);
    const created = byType.body
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as ExportedEvent);
    assert.deepEqual(
      created.map((event) => event.featureName),
      flags,
    );

    const byFlag = await ctx.admin.get(`/api/admin/events/export?feature=IS_ANY_OF:${flags[1]},${flags[2]}&query=quoted`);
    expectStatus(byFlag, 200);
    assert.deepEqual(
      byFlag.body
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as ExportedEvent).featureName),
      [flags[1], flags[2]],
    );

    const today = ctx.clock.now().toISOString().slice(0, 10);
    const tomorrow = new Date(ctx.clock.now().getTime() + 86_400_000).toISOString().slice(0, 10);
    const none = await ctx.admin.get(`/api/admin/events/export?project=IS:${project}&from=IS:${tomorrow}`);
    expectStatus(none, 200);
    assert.equal(none.body, '', 'nothing matches: an empty export');
    const all = await ctx.admin.get(`/api/admin/events/export?project=IS:${project}&from=IS:${today}&to=IS:${today}`);
    assert.equal(all.body.trimEnd().split('\n').length, (await searched(`project=IS:${project}`)).length);
  });

  test('CSV: a header, one row per event with quotes and new lines kept, formulas escaped', async () => {
    const response = await ctx.admin.get(`/api/admin/events/export?format=csv&project=IS:${project}`);
    expectStatus(response, 200);
    assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(String(response.headers['content-disposition']), /\.csv"$/);
    const rows = parse(response.body, { columns: true }) as Array<Record<string, string>>;
    const events = await searched(`project=IS:${project}`);
    assert.deepEqual(
      rows.map((row) => [Number(row.id), row.type, row.featureName, row.createdBy, row.label, row.summary]),
      events.map((event) => [event.id, event.type, event.featureName ?? '', event.createdBy, event.label, event.summary]),
    );
    const flagRow = rows.find((row) => row.type === 'feature-created')!;
    assert.equal((JSON.parse(flagRow.data!) as { description: string }).description, `about ${flags[0]}, "quoted"\nand a new line`);
    const projectRow = rows.find((row) => row.type === 'project-created')!;
    assert.ok(!projectRow.data!.startsWith('='));
    assert.match(projectRow.data!, /HYPERLINK/);
    assert.deepEqual(Object.keys(rows[0]!), [
      'id',
      'createdAt',
      'type',
      'createdBy',
      'createdByUserId',
      'project',
      'environment',
      'featureName',
      'changeRequestId',
      'label',
      'summary',
      'tags',
      'preData',
      'data',
    ]);
  });

  test('bad input is a 400 naming the parameter, before anything is sent', async () => {
    const cases: Array<[string, string]> = [
      ['format=xml', '/query/format'],
      ['type=IS:no-such-type', '/query/type'],
      ['from=IS:2026-13-45', '/query/from'],
      ['createdBy=IS:someone', '/query/createdBy'],
      ['limit=10', '/query/limit'],
    ];
    for (const [query, path] of cases) {
      const error = expectError(await ctx.admin.get(`/api/admin/events/export?${query}`), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, path, query);
    }
  });

  test('is for Admins: Editors and Viewers get 403, no credentials 401', async () => {
    for (const role of ['Editor', 'Viewer'] as const) {
      const user = await createUserSession(ctx, role);
      expectError(await ctx.withCookie(user.cookie).get('/api/admin/events/export'), 403, 'PermissionError');
    }
    expectError(await ctx.as().get('/api/admin/events/export'), 401, 'AuthenticationRequired');
  });
});
