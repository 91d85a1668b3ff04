import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertDetailAt, expectError, expectStatus, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName, useTestAppWithEditor, createUserSession, sendMalformedJson } from '../helpers/fixtures.js';
import { createProject } from '../helpers/projects.js';

const { ctx, editor: signedInEditor } = useTestAppWithEditor();

interface Dependency {
  feature: string;
  enabled: boolean;
  variants: string[];
}

/** Creates flags named `<prefix>-<name>` in the project and returns their full names by short name. */
async function createFlags<const N extends string>(project: string, ...names: N[]): Promise<Record<N, string>> {
  const flags = {} as Record<N, string>;
  for (const name of names) {
    flags[name] = uniqueName(name);
    expectStatus(await ctx.admin.post(`/api/admin/projects/${project}/features`, { name: flags[name] }), 201);
  }
  return flags;
}

const flagUrl = (project: string, flag: string) => `/api/admin/projects/${project}/features/${flag}`;

async function relations(project: string, flag: string): Promise<{ dependencies: Dependency[]; children: string[] }> {
  const response = await ctx.admin.get(flagUrl(project, flag));
  expectStatus(response, 200);
  const { dependencies, children } = response.json() as { dependencies: Dependency[]; children: string[] };
  return { dependencies, children };
}

async function addDependency(project: string, child: string, body: unknown, client = signedInEditor.client) {
  return client.post(`${flagUrl(project, child)}/dependencies`, body);
}

/** The event without the fields every event has, for comparing whole events. */
function withoutIds({ id: _id, createdAt: _createdAt, ...event }: Awaited<ReturnType<typeof eventsSince>>[number]) {
  return event;
}

describe('adding a dependency', () => {
  test('shows it on both flags and records feature-dependency-added', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { parent, child } = await createFlags(project, 'parent', 'child');
    const before = await lastEventId(ctx);

    const response = await addDependency(project, child, { feature: parent });
    expectStatus(response, 200);
    assert.equal(response.body, '');

    assert.deepEqual(await relations(project, child), {
      dependencies: [{ feature: parent, enabled: true, variants: [] }],
      children: [],
    });
    assert.deepEqual(await relations(project, parent), { dependencies: [], children: [child] });
    assert.deepEqual((await eventsSince(ctx, before)).map(withoutIds), [
      {
        type: 'feature-dependency-added',
        createdBy: signedInEditor.username,
        createdByUserId: signedInEditor.id,
        project,
        environment: null,
        featureName: child,
        data: { feature: parent, enabled: true, variants: [] },
        preData: null,
        tags: [],
      },
    ]);
  });

  test('takes enabled: false, or variants the parent must resolve to', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { off, variant, child } = await createFlags(project, 'off', 'variant', 'child');
    expectStatus(await addDependency(project, child, { feature: off, enabled: false }), 200);
    expectStatus(await addDependency(project, child, { feature: variant, enabled: true, variants: ['blue', 'green'] }), 200);
    const { dependencies } = await relations(project, child);
    assert.deepEqual(
      dependencies.sort((a, b) => a.feature.localeCompare(b.feature)),
      [
        { feature: off, enabled: false, variants: [] },
        { feature: variant, enabled: true, variants: ['blue', 'green'] },
      ].sort((a, b) => a.feature.localeCompare(b.feature)),
    );
    assert.deepEqual((await relations(project, off)).children, [child]);
    assert.deepEqual((await relations(project, variant)).children, [child]);
  });

  test('again updates enabled and variants, recording before and after; the same values record nothing', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { parent, child } = await createFlags(project, 'parent', 'child');
    expectStatus(await addDependency(project, child, { feature: parent, variants: ['a'] }), 200);
    let before = await lastEventId(ctx);

    expectStatus(await addDependency(project, child, { feature: parent, enabled: false }), 200);
    assert.deepEqual((await relations(project, child)).dependencies, [{ feature: parent, enabled: false, variants: [] }]);
    const event = onlyEvent(await eventsSince(ctx, before), 'feature-dependency-added');
    assert.equal(event!.featureName, child);
    assert.deepEqual(event!.data, { feature: parent, enabled: false, variants: [] });
    assert.deepEqual(event!.preData, { feature: parent, enabled: true, variants: ['a'] });

    before = await lastEventId(ctx);
    expectStatus(await addDependency(project, child, { feature: parent, enabled: false, variants: [] }), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('sent at the same time as a request that would make a chain with it: one succeeds, the other is a 409', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { top, middle, bottom } = await createFlags(project, 'top', 'middle', 'bottom');
    const before = await lastEventId(ctx);
    const responses = await Promise.all([
      addDependency(project, middle, { feature: top }),
      addDependency(project, bottom, { feature: middle }),
    ]);
    assert.deepEqual(responses.map((r) => r.statusCode).sort(), [200, 409]);
    const events = await eventsSince(ctx, before);
    assert.deepEqual(
      events.map((e) => e.type),
      ['feature-dependency-added'],
    );
    const winner = events[0]!.featureName!;
    assert.equal((await relations(project, winner)).dependencies.length, 1);
    assert.deepEqual((await relations(project, winner === middle ? bottom : middle)).dependencies, []);
  });

  test("copies the child's tags into the events", async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { parent, child } = await createFlags(project, 'parent', 'child');
    expectStatus(await ctx.admin.post(`/api/admin/features/${child}/tags`, { type: 'simple', value: 'child-tag' }), 201);
    expectStatus(await ctx.admin.post(`/api/admin/features/${parent}/tags`, { type: 'simple', value: 'parent-tag' }), 201);
    const before = await lastEventId(ctx);
    expectStatus(await addDependency(project, child, { feature: parent }), 200);
    expectStatus(await signedInEditor.client.delete(`${flagUrl(project, child)}/dependencies/${parent}`), 200);
    expectStatus(await addDependency(project, child, { feature: parent }), 200);
    expectStatus(await signedInEditor.client.delete(`${flagUrl(project, child)}/dependencies`), 200);
    const childTags = [{ type: 'simple', value: 'child-tag' }];
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => [event.type, event.featureName, event.tags]),
      [
        ['feature-dependency-added', child, childTags],
        ['feature-dependency-removed', child, childTags],
        ['feature-dependency-added', child, childTags],
        ['feature-dependencies-removed', child, childTags],
      ],
    );
  });

  test('may be done by an admin token, recorded as admin-token', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { parent, child } = await createFlags(project, 'parent', 'child');
    const before = await lastEventId(ctx);
    expectStatus(await addDependency(project, child, { feature: parent }, ctx.admin), 200);
    const [event] = await eventsSince(ctx, before);
    assert.equal(event!.createdBy, 'admin-token');
    assert.equal(event!.createdByUserId, -42);
  });
});

describe('removing dependencies', () => {
  test('one at a time records feature-dependency-removed with the dependency as preData', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { first, second, child } = await createFlags(project, 'first', 'second', 'child');
    expectStatus(await addDependency(project, child, { feature: first, variants: ['v1'] }), 200);
    expectStatus(await addDependency(project, child, { feature: second }), 200);
    const before = await lastEventId(ctx);

    const response = await signedInEditor.client.delete(`${flagUrl(project, child)}/dependencies/${first}`);
    expectStatus(response, 200);

    assert.deepEqual((await relations(project, child)).dependencies, [{ feature: second, enabled: true, variants: [] }]);
    assert.deepEqual((await relations(project, first)).children, []);
    assert.deepEqual((await eventsSince(ctx, before)).map(withoutIds), [
      {
        type: 'feature-dependency-removed',
        createdBy: signedInEditor.username,
        createdByUserId: signedInEditor.id,
        project,
        environment: null,
        featureName: child,
        data: { feature: first },
        preData: { feature: first, enabled: true, variants: ['v1'] },
        tags: [],
      },
    ]);
  });

  test('all at once records feature-dependencies-removed with the list; with none left it records nothing', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { first, second, child } = await createFlags(project, 'first', 'second', 'child');
    expectStatus(await addDependency(project, child, { feature: first, enabled: false }), 200);
    expectStatus(await addDependency(project, child, { feature: second, variants: ['x'] }), 200);
    let before = await lastEventId(ctx);

    expectStatus(await signedInEditor.client.delete(`${flagUrl(project, child)}/dependencies`), 200);

    assert.deepEqual(await relations(project, child), { dependencies: [], children: [] });
    assert.deepEqual((await relations(project, first)).children, []);
    assert.deepEqual((await relations(project, second)).children, []);
    const event = onlyEvent(await eventsSince(ctx, before), 'feature-dependencies-removed');
    assert.equal(event!.featureName, child);
    assert.equal(event!.project, project);
    assert.equal(event!.createdBy, signedInEditor.username);
    assert.equal(event!.data, null);
    assert.deepEqual(event!.tags, []);
    const { dependencies } = event!.preData as { dependencies: Dependency[] };
    assert.deepEqual(
      dependencies.sort((a, b) => a.feature.localeCompare(b.feature)),
      [
        { feature: first, enabled: false, variants: [] },
        { feature: second, enabled: true, variants: ['x'] },
      ].sort((a, b) => a.feature.localeCompare(b.feature)),
    );

    before = await lastEventId(ctx);
    expectStatus(await signedInEditor.client.delete(`${flagUrl(project, child)}/dependencies`), 200);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a dependency that does not exist is a 404 and changes nothing', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { parent, other, child } = await createFlags(project, 'parent', 'other', 'child');
    expectStatus(await addDependency(project, child, { feature: parent }), 200);
    const before = await lastEventId(ctx);
    const error = expectError(await signedInEditor.client.delete(`${flagUrl(project, child)}/dependencies/${other}`), 404, 'NotFoundError');
    assert.match(error.message, new RegExp(`"${child}" does not depend on "${other}"`));
    expectError(await signedInEditor.client.delete(`${flagUrl(project, `${child}-missing`)}/dependencies/${parent}`), 404, 'NotFoundError');
    assert.deepEqual((await relations(project, child)).dependencies, [{ feature: parent, enabled: true, variants: [] }]);
    assert.deepEqual(await eventsSince(ctx, before), []);
  });
});

describe('possible parents', () => {
  test('are the active flags of the project that are not children, the flag itself left out, by name', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { a, b, c, child, archived } = await createFlags(project, 'a', 'b', 'c', 'child', 'archived');
    const elsewhere = await createProject(ctx, { prefix: 'deps' });
    await createFlags(elsewhere, 'foreign');
    expectStatus(await addDependency(project, child, { feature: a }), 200);
    expectStatus(await ctx.admin.delete(flagUrl(project, archived)), 202);

    const response = await ctx.admin.get(`${flagUrl(project, b)}/parents`);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), [a, c].sort());

    // A child may keep or change its parents: its current parent is offered too.
    assert.deepEqual((await ctx.admin.get(`${flagUrl(project, child)}/parents`)).json(), [a, b, c].sort());
    // A flag others depend on cannot become a child, so nothing is offered.
    assert.deepEqual((await ctx.admin.get(`${flagUrl(project, a)}/parents`)).json(), []);
  });

  test('of an unknown flag is a 404', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    expectError(await ctx.admin.get(`${flagUrl(project, 'nothing-here')}/parents`), 404, 'NotFoundError');
  });

  test('parent variants list the variant names of its environments and strategies, sorted and distinct', async () => {
    const project = await createProject(ctx, { prefix: 'deps' });
    const { parent } = await createFlags(project, 'parent');
    expectStatus(
      await ctx.admin.put(`${flagUrl(project, parent)}/environments/development/variants`, [
        { name: 'red', weight: 500, weightType: 'variable' },
        { name: 'blue', weight: 500, weightType: 'variable' },
      ]),
      200,
    );
    expectStatus(
      await ctx.admin.post(`${flagUrl(project, parent)}/environments/production/strategies`, {
        name: 'flexibleRollout',
        parameters: { rollout: '50', stickiness: 'default', groupId: parent },
        variants: [
          { name: 'red', weight: 1000, weightType: 'variable', stickiness: 'default' },
          { name: 'amber', weight: 0, weightType: 'fix', stickiness: 'default' },
        ],
      }),
      200,
    );
    const response = await ctx.admin.get(`${flagUrl(project, parent)}/parent-variants`);
    expectStatus(response, 200);
    assert.deepEqual(response.json(), ['amber', 'blue', 'red']);
  });
});

describe('bad dependency requests change nothing and record nothing', () => {
  type Flags = Record<'parent' | 'child' | 'free', string>;

  /**
   * Sets up parent ← child and a free flag in a project of its own (plus what `setup` adds), runs `attempt`, and
   * checks that no flag's dependencies or children changed and that no event was recorded.
   */
  async function expectUnchanged<T>(
    attempt: (flags: Flags, project: string, extra: T) => Promise<void>,
    setup: (project: string) => Promise<T> = async () => undefined as T,
  ) {
    const project = await createProject(ctx, { prefix: 'deps' });
    const flags = await createFlags(project, 'parent', 'child', 'free');
    expectStatus(await addDependency(project, flags.child, { feature: flags.parent }), 200);
    const extra = await setup(project);
    const snapshot = await Promise.all(Object.values(flags).map((flag) => relations(project, flag)));
    const before = await lastEventId(ctx);
    await attempt(flags, project, extra);
    assert.deepEqual(await Promise.all(Object.values(flags).map((flag) => relations(project, flag))), snapshot);
    assert.deepEqual(await eventsSince(ctx, before), []);
  }

  test('an unknown parent is a 404 naming /body/feature', () =>
    expectUnchanged(async ({ free }, project) => {
      const error = expectError(await addDependency(project, free, { feature: 'no-such-flag' }), 404, 'NotFoundError');
      assert.match(error.message, /"no-such-flag"/);
      assertDetailAt(error, '/body/feature');
    }));

  test('an unknown child is a 404', () =>
    expectUnchanged(async ({ parent }, project) => {
      const error = expectError(await addDependency(project, 'no-such-child', { feature: parent }), 404, 'NotFoundError');
      assert.match(error.message, /"no-such-child" in project/);
    }));

  test('a flag depending on itself is a 400', () =>
    expectUnchanged(async ({ free }, project) => {
      const error = expectError(await addDependency(project, free, { feature: free }), 400, 'BadDataError');
      assert.match(error.message, /cannot depend on itself/);
      assertDetailAt(error, '/body/feature');
    }));

  test('a cycle (the parent depending on its child) is a 409', () =>
    expectUnchanged(async ({ parent, child }, project) => {
      const error = expectError(await addDependency(project, parent, { feature: child }), 409, 'ConflictError');
      assert.match(error.message, /cycle/);
      assertDetailAt(error, '/body/feature');
    }));

  test('a grandchild through a parent that is itself a child is a 409', () =>
    expectUnchanged(async ({ parent, child, free }, project) => {
      const error = expectError(await addDependency(project, free, { feature: child }), 409, 'ConflictError');
      assert.match(error.message, new RegExp(`"${child}" cannot be a parent because it depends on other flags itself \\("${parent}"\\)`));
      assertDetailAt(error, '/body/feature');
    }));

  test('a grandchild through a child that has children is a 409', () =>
    expectUnchanged(async ({ parent, child, free }, project) => {
      const error = expectError(await addDependency(project, parent, { feature: free }), 409, 'ConflictError');
      assert.match(
        error.message,
        new RegExp(`"${parent}" cannot depend on another flag because other flags depend on it \\("${child}"\\)`),
      );
      assertDetailAt(error, '/body/feature');
    }));

  /** An archived flag in the test's project. */
  async function archivedFlag(project: string): Promise<string> {
    const { gone } = await createFlags(project, 'gone');
    expectStatus(await ctx.admin.delete(flagUrl(project, gone)), 202);
    return gone;
  }

  test('an archived parent is a 400', () =>
    expectUnchanged(async ({ free }, project, gone) => {
      const error = expectError(await addDependency(project, free, { feature: gone }), 400, 'BadDataError');
      assert.match(error.message, new RegExp(`"${gone}" is archived`));
      assertDetailAt(error, '/body/feature');
      assert.deepEqual((await relations(project, gone)).children, []);
    }, archivedFlag));

  test('an archived child is a 400', () =>
    expectUnchanged(async ({ parent }, project, gone) => {
      const error = expectError(await addDependency(project, gone, { feature: parent }), 400, 'BadDataError');
      assert.match(error.message, /archived; revive it first/);
      assert.deepEqual((await relations(project, gone)).dependencies, []);
    }, archivedFlag));

  test('a parent in another project is a 400', () =>
    expectUnchanged(
      async ({ free }, project, other) => {
        const error = expectError(await addDependency(project, free, { feature: other.flag }), 400, 'BadDataError');
        assert.match(error.message, new RegExp(`"${other.flag}" is in project "${other.project}"`));
        assertDetailAt(error, '/body/feature');
        assert.deepEqual((await relations(other.project, other.flag)).children, []);
      },
      async () => {
        const otherProject = await createProject(ctx, { prefix: 'deps' });
        const { foreign } = await createFlags(otherProject, 'foreign');
        return { project: otherProject, flag: foreign };
      },
    ));

  test('variants with enabled: false is a 400 naming /body/variants', () =>
    expectUnchanged(async ({ parent, free }, project) => {
      const error = expectError(
        await addDependency(project, free, { feature: parent, enabled: false, variants: ['a'] }),
        400,
        'BadDataError',
      );
      assertDetailAt(error, '/body/variants');
    }));

  const badBodies: Array<[string, (parent: string) => unknown, string]> = [
    ['an unknown property', (parent) => ({ feature: parent, extra: true }), '/body/extra'],
    ['a missing feature', () => ({ enabled: true }), '/body/feature'],
    ['a feature that is not a name', () => ({ feature: 'has space' }), '/body/feature'],
    ['enabled that is not a boolean', (parent) => ({ feature: parent, enabled: 'yes' }), '/body/enabled'],
    ['variants that are not strings', (parent) => ({ feature: parent, variants: [1] }), '/body/variants/0'],
    ['a variant name of 101 characters', (parent) => ({ feature: parent, variants: ['v'.repeat(101)] }), '/body/variants/0'],
    ['101 variants', (parent) => ({ feature: parent, variants: Array.from({ length: 101 }, (_, i) => `v${i}`) }), '/body/variants'],
    ['a repeated variant', (parent) => ({ feature: parent, variants: ['a', 'a'] }), '/body/variants'],
  ];
  for (const [label, body, path] of badBodies) {
    test(`${label} is a 400 naming ${path}`, () =>
      expectUnchanged(async ({ parent, free }, project) => {
        const error = expectError(await addDependency(project, free, body(parent)), 400, 'BadDataError');
        assertDetailAt(error, path);
      }));
  }

  test('malformed JSON is a 400', () =>
    expectUnchanged(async ({ free }, project) => {
      const error = expectError(
        await sendMalformedJson(signedInEditor.client, 'POST', `${flagUrl(project, free)}/dependencies`, '{"feature": '),
        400,
        'BadDataError',
      );
      assert.match(error.message, /not valid JSON/);
      assertDetailAt(error, '/body');
    }));

  test('a Viewer may neither add nor remove: 403 naming UPDATE_FEATURE_DEPENDENCY', () =>
    expectUnchanged(
      async ({ parent, child, free }, project, viewer) => {
        for (const response of [
          await addDependency(project, free, { feature: parent }, viewer),
          await viewer.delete(`${flagUrl(project, child)}/dependencies/${parent}`),
          await viewer.delete(`${flagUrl(project, child)}/dependencies`),
        ]) {
          const error = expectError(response, 403, 'PermissionError');
          assert.deepEqual(error.permissions, ['UPDATE_FEATURE_DEPENDENCY']);
        }
        expectStatus(await viewer.get(`${flagUrl(project, free)}/parents`), 200);
      },
      async () => ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie),
    ));
});
