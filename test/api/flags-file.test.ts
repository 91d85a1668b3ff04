import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { enableChangeRequests } from '../helpers/change-requests.js';
import { eventFields, eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';

const ctx = useTestApp();

interface Report {
  dryRun: boolean;
  changes: Array<{ path: string; change: string; target: string; detail?: string }>;
  changeRequests: Array<{ project: string; environment: string; id: number | null; created: boolean }>;
}

interface FileFlag {
  name: string;
  type?: string;
  description?: string;
  tags?: Array<{ type: string; value: string }>;
  environments?: Record<string, { enabled?: boolean; strategies?: Array<Record<string, unknown>>; variants?: unknown[] }>;
  [key: string]: unknown;
}

interface FlagsFile {
  version: 1;
  segments?: Array<{ name: string; constraints: unknown[]; description?: string }>;
  contextFields?: Array<{ name: string; legalValues?: Array<{ value: string }> }>;
  tagTypes?: Array<{ name: string }>;
  projects?: Array<{ id: string; name?: string; environments?: string[]; defaultStrategies?: Record<string, unknown>; flags?: FileFlag[] }>;
  [key: string]: unknown;
}

async function apply(file: unknown, dryRun = false): Promise<Report> {
  const response = await ctx.admin.post(`/api/admin/flags-file/apply${dryRun ? '?dryRun=true' : ''}`, file as Record<string, unknown>);
  expectStatus(response, 200);
  return response.json() as Report;
}

/** A file with a project of its own: a flag on in development for a segment, with variants; off in production. */
function sampleFile() {
  const project = uniqueName('fc');
  const segment = uniqueName('beta');
  const field = uniqueName('region');
  const tagType = uniqueName('team');
  const flag = uniqueName('checkout');
  const file: FlagsFile = {
    version: 1,
    contextFields: [{ name: field, legalValues: [{ value: 'eu' }, { value: 'us' }] }],
    tagTypes: [{ name: tagType }],
    segments: [
      { name: segment, description: 'Beta testers', constraints: [{ contextName: 'userId', operator: 'IN', values: ['u1', 'u2'] }] },
    ],
    projects: [
      {
        id: project,
        name: 'Checkout team',
        environments: ['development', 'production'],
        flags: [
          {
            name: flag,
            type: 'experiment',
            description: 'The new checkout',
            tags: [{ type: tagType, value: 'payments' }],
            environments: {
              development: {
                enabled: true,
                strategies: [
                  {
                    name: 'flexibleRollout',
                    title: 'Half of beta',
                    parameters: { rollout: '50', stickiness: 'default', groupId: flag },
                    constraints: [{ contextName: field, operator: 'IN', values: ['eu'] }],
                    segments: [segment],
                    variants: [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }],
                  },
                  { name: 'userWithId', parameters: { userIds: 'alice,bob' } },
                ],
                variants: [
                  { name: 'a', weight: 500, weightType: 'variable' },
                  { name: 'b', weight: 500, weightType: 'variable' },
                ],
              },
              production: { enabled: false, strategies: [] },
            },
          },
        ],
      },
    ],
  };
  return { file, project, segment, field, tagType, flag };
}

interface Feature {
  type: string;
  description: string;
  tags: Array<{ type: string; value: string }>;
  environments: Array<{
    name: string;
    enabled: boolean;
    variants: Array<{ name: string; weight: number }>;
    strategies: Array<{ name: string; title: string | null; sortOrder: number; segments: number[]; parameters: Record<string, string> }>;
  }>;
}

describe('flags file: apply', () => {
  test('creates what the file lists, records the usual events, and a second apply changes nothing', async () => {
    const { file, project, segment, field, tagType, flag } = sampleFile();
    const before = await lastEventId(ctx);
    const report = await apply(file);
    assert.equal(report.dryRun, false);
    assert.deepEqual(
      report.changes.map((c) => [c.change, c.target]),
      [
        ['created', `context field "${field}"`],
        ['created', `tag type "${tagType}"`],
        ['created', `segment "${segment}"`],
        ['created', `project "${project}"`],
        ['created', `flag "${flag}"`],
        ['updated', `flag "${flag}"`],
        ['updated', `flag "${flag}" in "development"`],
      ],
    );
    assert.equal(report.changes.at(-1)?.path, `/projects/0/flags/0/environments/development`);
    assert.equal(report.changes.at(-1)?.detail, '2 × strategy added, variants, enabled → true');

    const feature = await getOk<Feature>(ctx.admin, `/api/admin/projects/${project}/features/${flag}`);
    assert.equal(feature.type, 'experiment');
    assert.equal(feature.description, 'The new checkout');
    assert.deepEqual(feature.tags, [{ type: tagType, value: 'payments' }]);
    const development = feature.environments.find((e) => e.name === 'development')!;
    assert.equal(development.enabled, true);
    assert.deepEqual(
      development.strategies.map((s) => [s.name, s.title, s.sortOrder, s.segments.length, s.parameters]),
      [
        ['flexibleRollout', 'Half of beta', 0, 1, { rollout: '50', stickiness: 'default', groupId: flag }],
        ['userWithId', null, 1, 0, { userIds: 'alice,bob' }],
      ],
    );
    assert.deepEqual(
      development.variants.map((v) => [v.name, v.weight]),
      [
        ['a', 500],
        ['b', 500],
      ],
    );
    const production = feature.environments.find((e) => e.name === 'production')!;
    assert.deepEqual([production.enabled, production.strategies], [false, []]);

    const events = eventFields(await eventsSince(ctx, before), 'type', 'createdBy');
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'context-field-created',
        'tag-type-created',
        'segment-created',
        'project-created',
        'feature-created',
        'feature-tagged',
        'feature-strategy-add',
        'feature-strategy-add',
        'feature-environment-variants-updated',
        'feature-environment-enabled',
      ],
    );
    assert.ok(events.every((e) => e.createdBy === 'admin-token'));

    const again = await lastEventId(ctx);
    const second = await apply(file);
    assert.deepEqual(second.changes, []);
    assert.equal(await lastEventId(ctx), again, 'a second apply of the same file records no event');
  });

  test('export of a project applies back unchanged, and its changes apply in place', async () => {
    const { file, project, flag } = sampleFile();
    await apply(file);
    const exported = await getOk<FlagsFile>(ctx.admin, `/api/admin/flags-file?project=${project}`);
    assert.deepEqual(
      exported.projects?.map((p) => [p.id, p.flags?.map((f) => f.name)]),
      [[project, [flag]]],
    );
    assert.deepEqual((await apply(exported)).changes, [], 'an export applied to its own instance changes nothing');

    const edited = structuredClone(exported);
    const development = edited.projects![0]!.flags![0]!.environments!.development!;
    development.strategies = [development.strategies![1]!, { ...development.strategies![0]!, title: 'Renamed' }];
    development.enabled = false;
    const before = await lastEventId(ctx);
    const report = await apply(edited);
    assert.deepEqual(
      report.changes.map((c) => [c.target, c.detail]),
      [
        [
          `flag "${flag}" in "development"`,
          'strategy updated (flexibleRollout → userWithId), strategy updated (userWithId → flexibleRollout), enabled → false',
        ],
      ],
    );
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((e) => e.type),
      ['feature-strategy-update', 'feature-strategy-update', 'feature-environment-disabled'],
    );
    const feature = await getOk<Feature>(ctx.admin, `/api/admin/projects/${project}/features/${flag}`);
    assert.deepEqual(
      feature.environments.find((e) => e.name === 'development')!.strategies.map((s) => [s.name, s.title]),
      [
        ['userWithId', null],
        ['flexibleRollout', 'Renamed'],
      ],
    );
  });

  test('a segment of a project the file brings is made after its project, on the first apply as on a dry run', async () => {
    const { file, project, segment, flag } = sampleFile();
    file.segments = [{ ...file.segments![0]!, project } as NonNullable<FlagsFile['segments']>[number]];
    const planned = await apply(file, true);
    assert.deepEqual(
      planned.changes.slice(0, 4).map((change) => [change.path, change.change, change.target]),
      [
        ['/contextFields/0', 'created', `context field "${file.contextFields![0]!.name}"`],
        ['/tagTypes/0', 'created', `tag type "${file.tagTypes![0]!.name}"`],
        ['/projects/0', 'created', `project "${project}"`],
        ['/segments/0', 'created', `segment "${segment}"`],
      ],
    );
    const report = await apply(file);
    assert.deepEqual(
      report.changes.map((change) => change.change),
      planned.changes.map((change) => change.change),
    );
    const segments = await getOk<{ segments: Array<{ name: string; project: string | null }> }>(ctx.admin, '/api/admin/segments');
    assert.deepEqual(
      segments.segments.filter((s) => s.name === segment).map((s) => s.project),
      [project],
    );
    const feature = await getOk<Feature>(ctx.admin, `/api/admin/projects/${project}/features/${flag}`);
    assert.equal(feature.environments.find((env) => env.name === 'development')!.strategies[0]!.segments.length, 1);
    assert.deepEqual((await apply(file)).changes, [], 'a second apply changes nothing');
  });

  test("a project's own context fields, default strategies and flags' links are applied, exported and applied back unchanged", async () => {
    const { file, project, flag, segment } = sampleFile();
    const ownField = uniqueName('tenant');
    file.contextFields!.push({ name: ownField, legalValues: [{ value: 'acme' }], project } as NonNullable<
      FlagsFile['contextFields']
    >[number]);
    file.projects![0]!.defaultStrategies = {
      production: { name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'userId' }, segments: [segment] },
    };
    file.projects![0]!.flags![0]!.links = [
      { url: 'https://wiki.example.com/checkout', title: 'Runbook' },
      { url: 'git.example.com/checkout' },
    ];
    const before = await lastEventId(ctx);
    const report = await apply(file);
    assert.ok(report.changes.some((change) => change.path === `/projects/0/defaultStrategies/production` && change.change === 'created'));
    const types = (await eventsSince(ctx, before)).map((event) => event.type);
    assert.equal(types.filter((type) => type === 'feature-link-added').length, 2);
    assert.equal(types.filter((type) => type === 'default-strategy-updated').length, 1);

    assert.deepEqual(
      (await getOk<Array<{ name: string }>>(ctx.admin, `/api/admin/projects/${project}/context`)).map((field) => field.name),
      [ownField],
    );
    const feature = await getOk<{ links: Array<{ url: string; title: string | null }> }>(
      ctx.admin,
      `/api/admin/projects/${project}/features/${flag}`,
    );
    assert.deepEqual(
      feature.links.map(({ url, title }) => [url, title]),
      [
        ['https://wiki.example.com/checkout', 'Runbook'],
        ['https://git.example.com/checkout', null],
      ],
    );
    const overview = await getOk<{
      environments: Array<{ environment: string; defaultStrategy?: { parameters: Record<string, string>; segments: number[] } }>;
    }>(ctx.admin, `/api/admin/projects/${project}/overview`);
    const production = overview.environments.find((environment) => environment.environment === 'production')!;
    assert.deepEqual([production.defaultStrategy?.parameters.rollout, production.defaultStrategy?.segments.length], ['25', 1]);
    assert.deepEqual((await apply(file)).changes, [], 'a second apply changes nothing');

    const exported = await getOk<FlagsFile>(ctx.admin, `/api/admin/flags-file?project=${project}`);
    assert.deepEqual(exported.projects![0]!.defaultStrategies, {
      production: { name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'userId' }, constraints: [], segments: [segment] },
    });
    assert.deepEqual(exported.projects![0]!.flags![0]!.links, [
      { url: 'https://wiki.example.com/checkout', title: 'Runbook' },
      { url: 'https://git.example.com/checkout' },
    ]);
    assert.ok(exported.contextFields!.some((field) => field.name === ownField && (field as { project?: string }).project === project));
    assert.deepEqual((await apply(exported)).changes, [], 'the export applies back unchanged');

    // Links the file no longer lists go; a field cannot move to another project.
    file.projects![0]!.flags![0]!.links = [{ url: 'https://wiki.example.com/checkout', title: 'Runbook' }];
    assert.deepEqual(
      (await apply(file)).changes.map((change) => change.detail),
      ['links: -https://git.example.com/checkout'],
    );
    const moved = structuredClone(file);
    (moved.contextFields![1] as { project?: string | null }).project = null;
    const refused = await ctx.admin.post('/api/admin/flags-file/apply', moved);
    expectStatus(refused, 400);
    assert.match((refused.json() as { message: string }).message, /cannot move/);
  });

  test('a dry run reports the same changes and writes nothing', async () => {
    const { file, project } = sampleFile();
    const before = await lastEventId(ctx);
    const dry = await apply(file, true);
    assert.equal(dry.dryRun, true);
    assert.equal(dry.changes.length, 7);
    assert.equal(await lastEventId(ctx), before);
    expectStatus(await ctx.admin.get(`/api/admin/projects/${project}`), 404);
    assert.deepEqual(
      (await apply(file)).changes.map((c) => c.target),
      dry.changes.map((c) => c.target),
    );
  });

  test('an enabled environment whose file lists no strategies is left with none', async () => {
    const { file, project, flag } = sampleFile();
    file.projects![0]!.flags![0]!.environments!.production = { enabled: true, strategies: [] };
    await apply(file);
    const feature = await getOk<Feature>(ctx.admin, `/api/admin/projects/${project}/features/${flag}`);
    const production = feature.environments.find((e) => e.name === 'production')!;
    assert.deepEqual([production.enabled, production.strategies], [true, []]);
    assert.deepEqual((await apply(file)).changes, []);
  });

  test('archiving through the file, and reviving by leaving archived out', async () => {
    const { file, project, flag } = sampleFile();
    await apply(file);
    file.projects![0]!.flags![0]!.archived = true;
    assert.deepEqual(
      (await apply(file)).changes.map((c) => c.change),
      ['archived'],
    );
    assert.deepEqual((await apply(file)).changes, [], 'an archived flag the file archives is left alone');
    delete file.projects![0]!.flags![0]!.archived;
    // A revived flag comes back off everywhere; the file then turns it on where it says so, as a change of its own.
    assert.deepEqual(
      (await apply(file)).changes.map((c) => [c.change, c.target]),
      [
        ['revived', `flag "${flag}"`],
        ['updated', `flag "${flag}" in "development"`],
      ],
    );
    assert.deepEqual((await apply(file)).changes, [], 'the flag is as the file says');
    expectStatus(await ctx.admin.get(`/api/admin/projects/${project}/features/${flag}`), 200);
  });

  test("a protected environment's changes become the caller's change request, once", async () => {
    const { file, project, flag } = sampleFile();
    await apply(file);
    await enableChangeRequests(ctx, project, 1, 'production');
    file.projects![0]!.flags![0]!.environments!.production = { enabled: true, strategies: [{ name: 'default' }] };
    const report = await apply(file);
    assert.equal(report.changeRequests.length, 1);
    const [request] = report.changeRequests;
    assert.deepEqual([request!.project, request!.environment, request!.created], [project, 'production', true]);
    assert.deepEqual(
      report.changes.map((c) => [c.change, c.target]),
      [['proposed', `flag "${flag}" in "production"`]],
    );
    const feature = await getOk<Feature>(ctx.admin, `/api/admin/projects/${project}/features/${flag}`);
    assert.equal(feature.environments.find((e) => e.name === 'production')!.enabled, false, 'not changed before review');
    const changeRequest = await getOk<{ state: string; features: Array<{ name: string; changes: Array<{ action: string }> }> }>(
      ctx.admin,
      `/api/admin/projects/${project}/change-requests/${request!.id}`,
    );
    assert.deepEqual(
      changeRequest.features.map((f) => [f.name, f.changes.map((c) => c.action)]),
      [[flag, ['addStrategy', 'updateEnabled']]],
    );

    const before = await lastEventId(ctx);
    const again = await apply(file);
    assert.deepEqual(again.changes, []);
    assert.deepEqual(again.changeRequests, [{ ...request, created: false }]);
    assert.equal(await lastEventId(ctx), before, 'proposing the same changes again records nothing');
  });
});

describe('flags file: bad files', () => {
  test('an invalid entry names its place in the file, and nothing of the file is applied', async () => {
    const { file, project } = sampleFile();
    file.projects![0]!.flags!.push({
      name: uniqueName('broken'),
      environments: { development: { strategies: [{ name: 'flexibleRollout', segments: ['no-such-segment'] }] } },
    });
    const before = await lastEventId(ctx);
    const body = expectError(await ctx.admin.post('/api/admin/flags-file/apply', file), 400, 'BadDataError');
    assert.match(body.message, /No segment is named "no-such-segment"/);
    assert.equal(body.details[0]!.path, '/projects/0/flags/1/environments/development/strategies/0/segments/0');
    assert.equal(await lastEventId(ctx), before);
    expectStatus(await ctx.admin.get(`/api/admin/projects/${project}`), 404);
  });

  test('unknown strategies, environments and bad constraints are 400s at their entry', async () => {
    const cases: Array<[FileFlag['environments'], RegExp, string]> = [
      [
        { development: { strategies: [{ name: 'noSuchStrategy' }] } },
        /noSuchStrategy/,
        '/projects/0/flags/0/environments/development/strategies/0',
      ],
      [{ staging: { enabled: true } }, /staging/, '/projects/0/flags/0/environments/staging'],
      [
        { development: { strategies: [{ name: 'default', constraints: [{ contextName: 'x', operator: 'NUM_GT', value: 'abc' }] }] } },
        /A constraint is invalid/,
        '/projects/0/flags/0/environments/development/strategies/0/constraints/0',
      ],
    ];
    for (const [environments, message, path] of cases) {
      const file = { version: 1, projects: [{ id: uniqueName('bad'), flags: [{ name: uniqueName('f'), environments }] }] };
      const body = expectError(await ctx.admin.post('/api/admin/flags-file/apply', file), 400, 'BadDataError');
      assert.match(body.message, message);
      assert.ok(body.details[0]!.path!.startsWith(path), `${body.details[0]!.path} starts with ${path}`);
    }
  });

  test('schema violations are 400s: unknown fields, wrong version, too many flags', async () => {
    const unknownField = expectError(
      await ctx.admin.post('/api/admin/flags-file/apply', { version: 1, projects: [{ id: 'p', flagz: [] }] }),
      400,
      'BadDataError',
    );
    assert.match(JSON.stringify(unknownField.details), /flagz/);
    expectError(await ctx.admin.post('/api/admin/flags-file/apply', { version: 2 }), 400, 'BadDataError');
    const flags = Array.from({ length: 2600 }, (_, i) => ({ name: `f${i}` }));
    const tooMany = expectError(
      await ctx.admin.post('/api/admin/flags-file/apply', {
        version: 1,
        projects: [
          { id: 'a', flags },
          { id: 'b', flags },
        ],
      }),
      400,
      'BadDataError',
    );
    assert.match(tooMany.message, /at most 5000 flags/);
  });

  test('a flag of another project is refused, not moved', async () => {
    const { file, flag } = sampleFile();
    await apply(file);
    const other = { version: 1, projects: [{ id: uniqueName('other'), flags: [{ name: flag }] }] };
    const body = expectError(await ctx.admin.post('/api/admin/flags-file/apply', other), 400, 'BadDataError');
    assert.match(body.message, /exists in project/);
  });

  test('only an Admin applies; a Viewer may export', async () => {
    const viewer = await createUserSession(ctx, 'Viewer');
    const client = ctx.withCookie(viewer.cookie);
    expectError(await client.post('/api/admin/flags-file/apply', { version: 1 }), 403, 'PermissionError');
    expectStatus(await client.get('/api/admin/flags-file'), 200);
  });

  test('the JSON Schema of the file is published without authentication', async () => {
    const response = await ctx.as().get('/docs/flags-file.schema.json');
    expectStatus(response, 200);
    const schema = response.json() as { title: string; properties: Record<string, unknown>; $id?: string };
    assert.equal(schema.title, 'Vexil flags file');
    assert.deepEqual(Object.keys(schema.properties).sort(), [
      'contextFields',
      'environments',
      'projects',
      'segments',
      'strategies',
      'tagTypes',
      'version',
    ]);
    assert.doesNotMatch(response.body, /"\$ref"/, 'the published schema stands alone');
  });
});
