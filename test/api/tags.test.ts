import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  assertDetailAt,
  expectError,
  expectStatus,
  assertEvents,
  expectRefused,
  getVersionedList,
  onlyEvent,
} from '../helpers/assertions.js';
import { eventsSince, lastEventId, eventFields } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { createFlag } from '../helpers/projects.js';

const ctx = useTestApp();

interface TagType {
  name: string;
  description: string | null;
  icon: string | null;
}
interface Tag {
  type: string;
  value: string;
}

async function createTagType(body: Record<string, unknown> = {}): Promise<TagType> {
  const response = await ctx.admin.post('/api/admin/tag-types', { name: uniqueName('tt'), ...body });
  expectStatus(response, 201);
  return response.json() as TagType;
}

async function listTagTypes(): Promise<TagType[]> {
  return getVersionedList<TagType>(ctx.admin, '/api/admin/tag-types', 'tagTypes');
}

/** GET /tag-types/:name answers `{version, tagType}`, as Unleash does. */
async function getTagType(name: string): Promise<TagType> {
  const response = await ctx.admin.get(`/api/admin/tag-types/${name}`);
  expectStatus(response, 200);
  const body = response.json() as { version: number; tagType: TagType };
  assert.equal(body.version, 1);
  return body.tagType;
}

async function flagTags(flag: string): Promise<Tag[]> {
  return getVersionedList<Tag>(ctx.admin, `/api/admin/features/${flag}/tags`, 'tags');
}

async function tag(flag: string, body: Tag): Promise<void> {
  expectStatus(await ctx.admin.post(`/api/admin/features/${flag}/tags`, body), 201);
}

const malformed = (method: 'POST' | 'PUT', url: string) =>
  ctx.admin.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: '{"name": "broken",' });

describe('tag types', () => {
  test('a fresh install has Unleash\'s "simple" tag type', async () => {
    const simple = (await listTagTypes()).find((t) => t.name === 'simple');
    assert.deepEqual(simple, { name: 'simple', description: 'Used to simplify filtering of features', icon: '#' });
  });

  test('creating returns the tag type, lists and shows it, and records tag-type-created', async () => {
    const name = uniqueName('team');
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post('/api/admin/tag-types', { name, description: 'Owning team', icon: 'groups' });
    expectStatus(response, 201);
    const created = response.json() as TagType;
    assert.deepEqual(created, { name, description: 'Owning team', icon: 'groups' });
    assert.deepEqual(
      (await listTagTypes()).find((t) => t.name === name),
      created,
    );
    assert.deepEqual(await getTagType(name), created);

    const [event, ...rest] = await eventsSince(ctx, before);
    assert.deepEqual(rest, []);
    assertEvents([event!], [{ type: 'tag-type-created', featureName: null, project: null, data: created, preData: null }]);
  });

  test('without description and icon shows them as null', async () => {
    const created = await createTagType();
    assert.equal(created.description, null);
    assert.equal(created.icon, null);
  });

  test('updating records tag-type-updated; fields left out are kept and null clears one', async () => {
    const created = await createTagType({ description: 'old', icon: 'star' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/tag-types/${created.name}`, { description: 'new' });
    expectStatus(response, 200);
    const updated = response.json() as TagType;
    assert.deepEqual(updated, { name: created.name, description: 'new', icon: 'star' });
    assert.deepEqual(await getTagType(created.name), updated);
    onlyEvent(await eventsSince(ctx, before), 'tag-type-updated', { data: updated, preData: created });

    const cleared = (await ctx.admin.put(`/api/admin/tag-types/${created.name}`, { icon: null })).json() as TagType;
    assert.deepEqual(cleared, { name: created.name, description: 'new', icon: null });
  });

  test('an update that changes nothing records nothing', async () => {
    const created = await createTagType({ description: 'same', icon: 'i' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/tag-types/${created.name}`, { description: 'same', icon: 'i' });
    expectStatus(response, 200);
    assert.deepEqual(response.json(), created);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('validate answers 200 for a free name and 409 for a taken one, recording nothing', async () => {
    const free = uniqueName('free');
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post('/api/admin/tag-types/validate', { name: free });
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { valid: true, tagType: { name: free } });
    const error = expectError(await ctx.admin.post('/api/admin/tag-types/validate', { name: 'simple' }), 409, 'NameExistsError');
    assert.match(error.message, /"simple"/);
    const invalid = expectError(await ctx.admin.post('/api/admin/tag-types/validate', { name: 'a b' }), 400, 'BadDataError');
    assert.equal(invalid.details[0]!.path, '/body/name');
    expectError(await ctx.admin.get(`/api/admin/tag-types/${free}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('deleting records tag-type-deleted and feature-untagged for every flag tag of that type', async () => {
    const doomed = await createTagType({ description: 'doomed' });
    const kept = await createTagType();
    const first = await createFlag(ctx);
    const second = await createFlag(ctx);
    await tag(first, { type: doomed.name, value: 'alpha' });
    await tag(first, { type: doomed.name, value: 'beta' });
    await tag(first, { type: kept.name, value: 'stays' });
    await tag(second, { type: doomed.name, value: 'alpha' });

    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/tag-types/${doomed.name}`), 200);
    expectError(await ctx.admin.get(`/api/admin/tag-types/${doomed.name}`), 404, 'NotFoundError');
    assert.ok(!(await listTagTypes()).some((t) => t.name === doomed.name));
    assert.deepEqual(await flagTags(first), [{ type: kept.name, value: 'stays' }]);
    assert.deepEqual(await flagTags(second), []);

    const events = await eventsSince(ctx, before);
    const tagsOf = (flag: string) => (flag === first ? [{ type: kept.name, value: 'stays' }] : []);
    // One event per removed flag tag, by flag name and value.
    const untagged = [
      { featureName: first, value: 'alpha' },
      { featureName: first, value: 'beta' },
      { featureName: second, value: 'alpha' },
    ].sort((a, b) => a.featureName.localeCompare(b.featureName) || a.value.localeCompare(b.value));
    assert.deepEqual(eventFields(events, 'type', 'featureName', 'project', 'data', 'preData', 'tags'), [
      ...untagged.map(({ featureName, value }) => ({
        type: 'feature-untagged',
        featureName,
        project: 'default',
        data: null,
        preData: { type: doomed.name, value },
        tags: tagsOf(featureName),
      })),
      { type: 'tag-type-deleted', featureName: null, project: null, data: null, preData: doomed, tags: [] },
    ]);
  });

  test('unknown tag types are 404 for GET, PUT and DELETE, and nothing is recorded', async () => {
    const name = uniqueName('ghost');
    const before = await lastEventId(ctx);
    expectError(await ctx.admin.get(`/api/admin/tag-types/${name}`), 404, 'NotFoundError');
    expectError(await ctx.admin.put(`/api/admin/tag-types/${name}`, { description: 'x' }), 404, 'NotFoundError');
    expectError(await ctx.admin.delete(`/api/admin/tag-types/${name}`), 404, 'NotFoundError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('bad input for tag types', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a name with a space', { name: 'has space' }, '/body/name'],
    ['a name of 1 character', { name: 'a' }, '/body/name'],
    ['a name of 51 characters', { name: 'a'.repeat(51) }, '/body/name'],
    ['a missing name', { description: 'x' }, '/body/name'],
    ['an unknown property', { name: 'extra-prop', colour: 'red' }, '/body/colour'],
    ['a description of the wrong type', { name: 'typed', description: 7 }, '/body/description'],
  ];
  for (const [label, body, path] of cases) {
    test(`creating with ${label} is a 400 that stores nothing`, async () => {
      await expectRefused(
        ctx,
        () => ctx.admin.post('/api/admin/tag-types', body),
        { status: 400, name: 'BadDataError', path },
        listTagTypes,
      );
    });
  }

  test('malformed JSON is a 400 at /body', async () => {
    const before = await lastEventId(ctx);
    const error = expectError(await malformed('POST', '/api/admin/tag-types'), 400, 'BadDataError');
    assert.equal(error.details[0]!.path, '/body');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a duplicate name is a 409 NameExistsError that keeps the first', async () => {
    const created = await createTagType({ description: 'first' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.post('/api/admin/tag-types', { name: created.name, description: 'second' }),
      409,
      'NameExistsError',
    );
    assert.match(error.message, new RegExp(created.name));
    assert.deepEqual(await getTagType(created.name), created);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an update with an unknown property is a 400 that changes nothing', async () => {
    const created = await createTagType({ description: 'kept' });
    const before = await lastEventId(ctx);
    const error = expectError(
      await ctx.admin.put(`/api/admin/tag-types/${created.name}`, { description: 'x', name: 'renamed' }),
      400,
      'BadDataError',
    );
    assert.equal(error.details[0]!.path, '/body/name');
    assert.deepEqual(await getTagType(created.name), created);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer may read but not create, update or delete tag types', async () => {
    const created = await createTagType({ description: 'kept' });
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    const before = await lastEventId(ctx);
    expectStatus(await viewer.get('/api/admin/tag-types'), 200);
    const cases = [
      [await viewer.post('/api/admin/tag-types', { name: uniqueName('v') }), 'CREATE_TAG_TYPE'],
      [await viewer.put(`/api/admin/tag-types/${created.name}`, { description: 'changed' }), 'UPDATE_TAG_TYPE'],
      [await viewer.delete(`/api/admin/tag-types/${created.name}`), 'DELETE_TAG_TYPE'],
    ] as const;
    for (const [response, permission] of cases) {
      assert.deepEqual(expectError(response, 403, 'PermissionError').permissions, [permission]);
    }
    assert.deepEqual(await getTagType(created.name), created);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('an Editor may manage tag types, recorded under their name', async () => {
    const editor = await createUserSession(ctx, 'Editor');
    const before = await lastEventId(ctx);
    expectStatus(await ctx.withCookie(editor.cookie).post('/api/admin/tag-types', { name: uniqueName('ed') }), 201);
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.createdBy, editor.username);
    assert.equal(event!.createdByUserId, editor.id);
  });
});

describe('tagging flags', () => {
  test("POST adds a trimmed tag, lists it, and records feature-tagged with the flag's tags", async () => {
    const type = await createTagType();
    const flag = await createFlag(ctx);
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post(`/api/admin/features/${flag}/tags`, { type: type.name, value: '  checkout  ' });
    expectStatus(response, 201);
    const added = { type: type.name, value: 'checkout' };
    assert.deepEqual(response.json(), added);
    assert.deepEqual(await flagTags(flag), [added]);
    const feature = (await ctx.admin.get(`/api/admin/projects/default/features/${flag}`)).json() as { tags: Tag[] };
    assert.deepEqual(feature.tags, [added]);

    const event = onlyEvent(await eventsSince(ctx, before), 'feature-tagged');
    assert.equal(event!.featureName, flag);
    assert.equal(event!.project, 'default');
    assert.equal(event!.environment, null);
    assert.equal(event!.createdBy, 'admin-token');
    assert.deepEqual(event!.data, added);
    assert.equal(event!.preData, null);
    assert.deepEqual(event!.tags, [added]);
  });

  test('POST of a tag the flag already has answers 200 without duplicating it or recording anything', async () => {
    const flag = await createFlag(ctx);
    await tag(flag, { type: 'simple', value: 'once' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.post(`/api/admin/features/${flag}/tags`, { type: 'simple', value: 'once' });
    expectStatus(response, 200);
    assert.deepEqual(response.json(), { type: 'simple', value: 'once' });
    assert.deepEqual(await flagTags(flag), [{ type: 'simple', value: 'once' }]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test("later flag events carry the flag's tags", async () => {
    const flag = await createFlag(ctx);
    await tag(flag, { type: 'simple', value: 'carried' });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`/api/admin/projects/default/features/${flag}`, { description: 'now described' }), 200);
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.type, 'feature-metadata-updated');
    assert.deepEqual(event!.tags, [{ type: 'simple', value: 'carried' }]);
  });

  test('PUT adds and removes in one change, each recorded with the tags at that moment', async () => {
    const type = await createTagType();
    const flag = await createFlag(ctx);
    await tag(flag, { type: type.name, value: 'old' });
    await tag(flag, { type: type.name, value: 'kept' });
    const before = await lastEventId(ctx);
    const response = await ctx.admin.put(`/api/admin/features/${flag}/tags`, {
      addedTags: [
        { type: type.name, value: 'new' },
        { type: type.name, value: 'kept' },
        { type: type.name, value: 'both' },
      ],
      removedTags: [
        { type: type.name, value: 'old' },
        { type: type.name, value: 'both' },
        { type: type.name, value: 'never-had' },
      ],
    });
    expectStatus(response, 200);
    const expected = [
      { type: type.name, value: 'kept' },
      { type: type.name, value: 'new' },
    ];
    assert.deepEqual(response.json(), { version: 1, tags: expected });
    assert.deepEqual(await flagTags(flag), expected);

    const events = await eventsSince(ctx, before);
    assert.deepEqual(eventFields(events, 'type', 'featureName', 'project', 'data', 'preData', 'tags'), [
      {
        type: 'feature-tagged',
        featureName: flag,
        project: 'default',
        data: { type: type.name, value: 'new' },
        preData: null,
        tags: [
          { type: type.name, value: 'kept' },
          { type: type.name, value: 'new' },
          { type: type.name, value: 'old' },
        ],
      },
      {
        type: 'feature-untagged',
        featureName: flag,
        project: 'default',
        data: null,
        preData: { type: type.name, value: 'old' },
        tags: expected,
      },
    ]);
  });

  test('DELETE removes a tag and records feature-untagged; a tag the flag lacks changes nothing', async () => {
    const type = await createTagType();
    const flag = await createFlag(ctx);
    await tag(flag, { type: type.name, value: 'gone' });
    await tag(flag, { type: type.name, value: 'stays' });
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/features/${flag}/tags/${type.name}/gone`), 200);
    assert.deepEqual(await flagTags(flag), [{ type: type.name, value: 'stays' }]);
    const event = onlyEvent(await eventsSince(ctx, before), 'feature-untagged');
    assert.equal(event!.featureName, flag);
    assert.equal(event!.project, 'default');
    assert.equal(event!.data, null);
    assert.deepEqual(event!.preData, { type: type.name, value: 'gone' });
    assert.deepEqual(event!.tags, [{ type: type.name, value: 'stays' }]);

    const again = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/features/${flag}/tags/${type.name}/gone`), 200);
    assert.deepEqual(await eventsSince(ctx, again), []);
  });

  test('a value with spaces and slashes round-trips through the DELETE path', async () => {
    const flag = await createFlag(ctx);
    await tag(flag, { type: 'simple', value: 'team a/b' });
    expectStatus(await ctx.admin.delete(`/api/admin/features/${flag}/tags/simple/${encodeURIComponent('team a/b')}`), 200);
    assert.deepEqual(await flagTags(flag), []);
  });

  test('an archived flag keeps its tags and may still be tagged, as in Unleash', async () => {
    const flag = await createFlag(ctx);
    await tag(flag, { type: 'simple', value: 'before' });
    expectStatus(await ctx.admin.delete(`/api/admin/projects/default/features/${flag}`), 202);
    await tag(flag, { type: 'simple', value: 'after' });
    assert.deepEqual(await flagTags(flag), [
      { type: 'simple', value: 'after' },
      { type: 'simple', value: 'before' },
    ]);
  });

  test('tags of a flag in another project are reached by the flag name alone', async () => {
    const project = uniqueName('proj');
    expectStatus(await ctx.admin.post('/api/admin/projects', { id: project, name: 'P' }), 201);
    const flag = await createFlag(ctx, project);
    const before = await lastEventId(ctx);
    await tag(flag, { type: 'simple', value: 'elsewhere' });
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.project, project);
  });
});

describe('listing tags', () => {
  test('GET /tags lists each tag in use once; /tags/:type only that type; /tags/:type/:value one tag', async () => {
    const type = await createTagType();
    const other = await createTagType();
    const [first, second] = [await createFlag(ctx), await createFlag(ctx)];
    await tag(first, { type: type.name, value: 'shared' });
    await tag(second, { type: type.name, value: 'shared' });
    await tag(second, { type: type.name, value: 'only-second' });
    await tag(first, { type: other.name, value: 'other' });

    const all = (await ctx.admin.get('/api/admin/tags')).json() as { version: number; tags: Tag[] };
    assert.equal(all.version, 1);
    const ours = all.tags.filter((t) => t.type === type.name || t.type === other.name);
    assert.deepEqual(
      ours,
      [
        { type: type.name, value: 'only-second' },
        { type: type.name, value: 'shared' },
        { type: other.name, value: 'other' },
      ].sort((a, b) => a.type.localeCompare(b.type) || a.value.localeCompare(b.value)),
    );

    const byType = await ctx.admin.get(`/api/admin/tags/${type.name}`);
    expectStatus(byType, 200);
    assert.deepEqual(byType.json(), {
      version: 1,
      tags: [
        { type: type.name, value: 'only-second' },
        { type: type.name, value: 'shared' },
      ],
    });

    const one = await ctx.admin.get(`/api/admin/tags/${type.name}/shared`);
    expectStatus(one, 200);
    assert.deepEqual(one.json(), { version: 1, tag: { type: type.name, value: 'shared' } });
    expectError(await ctx.admin.get(`/api/admin/tags/${type.name}/unused`), 404, 'NotFoundError');
  });

  test('an unknown type is a 404, a known type without tags an empty list', async () => {
    const error = expectError(await ctx.admin.get(`/api/admin/tags/${uniqueName('ghost')}`), 404, 'NotFoundError');
    assert.match(error.message, /tag type/);
    const unused = await createTagType();
    assert.deepEqual((await ctx.admin.get(`/api/admin/tags/${unused.name}`)).json(), { version: 1, tags: [] });
  });

  test('an unknown flag is a 404', async () => {
    const error = expectError(await ctx.admin.get(`/api/admin/features/${uniqueName('ghost')}/tags`), 404, 'NotFoundError');
    assert.match(error.message, /flag/);
  });
});

describe('bad input when tagging', () => {
  const postCases: Array<[string, unknown, number, string, string | undefined]> = [
    ['a value of 1 character', { type: 'simple', value: 'x' }, 400, 'BadDataError', '/body/value'],
    ['a value of 51 characters', { type: 'simple', value: 'v'.repeat(51) }, 400, 'BadDataError', '/body/value'],
    ['a value that is 1 character once trimmed', { type: 'simple', value: '  x  ' }, 400, 'BadDataError', '/body/value'],
    ['a type of 1 character', { type: 's', value: 'fine' }, 400, 'BadDataError', '/body/type'],
    ['a missing value', { type: 'simple' }, 400, 'BadDataError', '/body/value'],
    ['an unknown property', { type: 'simple', value: 'fine', color: 'red' }, 400, 'BadDataError', '/body/color'],
    ['an unknown tag type', { type: 'no-such-type', value: 'fine' }, 404, 'NotFoundError', undefined],
  ];

  test('POST, PUT and DELETE on an unknown flag are 404s', async () => {
    const ghost = uniqueName('ghost');
    const before = await lastEventId(ctx);
    for (const response of [
      await ctx.admin.post(`/api/admin/features/${ghost}/tags`, { type: 'simple', value: 'fine' }),
      await ctx.admin.put(`/api/admin/features/${ghost}/tags`, { addedTags: [], removedTags: [] }),
      await ctx.admin.delete(`/api/admin/features/${ghost}/tags/simple/fine`),
    ]) {
      assert.match(expectError(response, 404, 'NotFoundError').message, new RegExp(ghost));
    }
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('DELETE with an unknown tag type is a 404', async () => {
    const flag = await createFlag(ctx);
    const error = expectError(await ctx.admin.delete(`/api/admin/features/${flag}/tags/no-such-type/value`), 404, 'NotFoundError');
    assert.match(error.message, /"no-such-type"/);
  });

  const fine = { type: 'simple', value: 'fine' };
  const putCases: Array<[string, unknown, number, string, string | undefined]> = [
    [
      'a value of 1 character among valid ones',
      { addedTags: [fine, { type: 'simple', value: 'x' }], removedTags: [] },
      400,
      'BadDataError',
      '/body/addedTags/1/value',
    ],
    [
      'a removed value of 51 characters',
      { addedTags: [], removedTags: [{ type: 'simple', value: 'v'.repeat(51) }] },
      400,
      'BadDataError',
      '/body/removedTags/0/value',
    ],
    ['a missing removedTags', { addedTags: [] }, 400, 'BadDataError', '/body/removedTags'],
    ['an unknown property', { addedTags: [], removedTags: [], tags: [] }, 400, 'BadDataError', '/body/tags'],
    [
      'an unknown tag type among added tags',
      { addedTags: [fine, { type: 'no-such-type', value: 'fine' }], removedTags: [] },
      404,
      'NotFoundError',
      undefined,
    ],
    [
      'an unknown tag type among removed tags',
      { addedTags: [fine], removedTags: [{ type: 'no-such-type', value: 'fine' }] },
      404,
      'NotFoundError',
      undefined,
    ],
  ];
  for (const [method, cases] of [
    ['post', postCases],
    ['put', putCases],
  ] as const) {
    for (const [label, body, status, name, path] of cases) {
      test(`${method.toUpperCase()} with ${label} is a ${status} that changes nothing`, async () => {
        const flag = await createFlag(ctx);
        await tag(flag, { type: 'simple', value: 'existing' });
        const before = await lastEventId(ctx);
        const error = expectError(await ctx.admin[method](`/api/admin/features/${flag}/tags`, body), status, name);
        if (path) assertDetailAt(error, path);
        assert.deepEqual(await flagTags(flag), [{ type: 'simple', value: 'existing' }]);
        assert.deepEqual(await eventsSince(ctx, before), []);
      });
    }
  }

  test('malformed JSON is a 400 at /body for POST and PUT', async () => {
    const flag = await createFlag(ctx);
    const before = await lastEventId(ctx);
    for (const method of ['POST', 'PUT'] as const) {
      const error = expectError(await malformed(method, `/api/admin/features/${flag}/tags`), 400, 'BadDataError');
      assert.equal(error.details[0]!.path, '/body');
    }
    assert.deepEqual(await flagTags(flag), []);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a Viewer may read tags but not change them (UPDATE_FEATURE)', async () => {
    const flag = await createFlag(ctx);
    await tag(flag, { type: 'simple', value: 'existing' });
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    const before = await lastEventId(ctx);
    expectStatus(await viewer.get(`/api/admin/features/${flag}/tags`), 200);
    for (const response of [
      await viewer.post(`/api/admin/features/${flag}/tags`, { type: 'simple', value: 'more' }),
      await viewer.put(`/api/admin/features/${flag}/tags`, { addedTags: [], removedTags: [{ type: 'simple', value: 'existing' }] }),
      await viewer.delete(`/api/admin/features/${flag}/tags/simple/existing`),
    ]) {
      assert.deepEqual(expectError(response, 403, 'PermissionError').permissions, ['UPDATE_FEATURE']);
    }
    assert.deepEqual(await flagTags(flag), [{ type: 'simple', value: 'existing' }]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('tags made on their own, deleted everywhere, and changed on many flags of a project', () => {
  test('a tag made before any flag carries it is listed, and made twice is a 409', async () => {
    const type = await createTagType();
    const before = await lastEventId(ctx);
    const made = await ctx.admin.post('/api/admin/tags', { type: type.name, value: '  launch-2027 ' });
    expectStatus(made, 201);
    assert.deepEqual(made.json(), { version: 1, tag: { type: type.name, value: 'launch-2027' } });
    assert.equal(made.headers.location, `tags/${type.name}/launch-2027`);
    onlyEvent(await eventsSince(ctx, before), 'tag-created', { data: { type: type.name, value: 'launch-2027' } });
    assert.deepEqual(await getVersionedList<Tag>(ctx.admin, `/api/admin/tags/${type.name}`, 'tags'), [
      { type: type.name, value: 'launch-2027' },
    ]);
    expectStatus(await ctx.admin.get(`/api/admin/tags/${type.name}/launch-2027`), 200);
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/tags', { type: type.name, value: 'launch-2027' }), {
      status: 409,
      name: 'NameExistsError',
    });
    // A tag a flag carries exists too.
    const flag = await createFlag(ctx);
    expectStatus(await ctx.admin.post(`/api/admin/features/${flag}/tags`, { type: type.name, value: 'carried' }), 201);
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/tags', { type: type.name, value: 'carried' }), {
      status: 409,
      name: 'NameExistsError',
    });
  });

  test('bad input is a 400, an unknown type a 404, and a Viewer may not make tags', async () => {
    const type = await createTagType();
    for (const [body, path] of [
      [{ type: type.name, value: 'x' }, '/body/value'],
      [{ type: type.name }, '/body/value'],
      [{ type: type.name, value: 'fine', extra: true }, '/body/extra'],
    ] as const) {
      await expectRefused(ctx, () => ctx.admin.post('/api/admin/tags', body), { status: 400, name: 'BadDataError', path });
    }
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/tags', { type: 'no-such-type', value: 'fine' }), {
      status: 404,
      name: 'NotFoundError',
    });
    const viewer = await createUserSession(ctx, 'Viewer');
    await expectRefused(ctx, () => ctx.withCookie(viewer.cookie).post('/api/admin/tags', { type: type.name, value: 'fine' }), {
      status: 403,
      name: 'PermissionError',
    });
  });

  test('deleting a tag takes it off every flag, each recorded, then the tag; a tag nobody has is a 404', async () => {
    const type = await createTagType();
    const [first, second, untouched] = [await createFlag(ctx), await createFlag(ctx), await createFlag(ctx)];
    for (const flag of [first, second]) {
      expectStatus(await ctx.admin.post(`/api/admin/features/${flag}/tags`, { type: type.name, value: 'doomed' }), 201);
    }
    expectStatus(await ctx.admin.post(`/api/admin/features/${untouched}/tags`, { type: type.name, value: 'kept' }), 201);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`/api/admin/tags/${type.name}/doomed`), 200);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, event.featureName]),
      [...[first, second].sort().map((flag) => ['feature-untagged', flag]), ['tag-deleted', null]],
    );
    assert.deepEqual(await getVersionedList<Tag>(ctx.admin, `/api/admin/tags/${type.name}`, 'tags'), [{ type: type.name, value: 'kept' }]);
    assert.deepEqual(await getVersionedList<Tag>(ctx.admin, `/api/admin/features/${first}/tags`, 'tags'), []);
    await expectRefused(ctx, () => ctx.admin.delete(`/api/admin/tags/${type.name}/doomed`), { status: 404, name: 'NotFoundError' });
  });

  test('tags changed on many flags of a project at once, all or none', async () => {
    const type = await createTagType();
    const [first, second] = [await createFlag(ctx), await createFlag(ctx)];
    expectStatus(await ctx.admin.post(`/api/admin/features/${second}/tags`, { type: type.name, value: 'legacy' }), 201);
    expectStatus(
      await ctx.admin.put('/api/admin/projects/default/tags', {
        features: [first, second],
        tags: { addedTags: [{ type: type.name, value: 'q3' }], removedTags: [{ type: type.name, value: 'legacy' }] },
      }),
      200,
    );
    for (const flag of [first, second]) {
      assert.deepEqual(await getVersionedList<Tag>(ctx.admin, `/api/admin/features/${flag}/tags`, 'tags'), [
        { type: type.name, value: 'q3' },
      ]);
    }
    const elsewhere = await createFlag(
      ctx,
      (await ctx.admin.post('/api/admin/projects', { id: uniqueName('p'), name: 'other' })).json().id,
    );
    await expectRefused(
      ctx,
      () =>
        ctx.admin.put('/api/admin/projects/default/tags', {
          features: [first, elsewhere],
          tags: { addedTags: [{ type: type.name, value: 'q4' }], removedTags: [] },
        }),
      { status: 404, name: 'NotFoundError' },
      () => getVersionedList<Tag>(ctx.admin, `/api/admin/features/${first}/tags`, 'tags'),
    );
    await expectRefused(ctx, () => ctx.admin.put('/api/admin/projects/default/tags', { features: [first] }), {
      status: 400,
      name: 'BadDataError',
      path: '/body/tags',
    });
  });
});
