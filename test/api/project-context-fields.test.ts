import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

// Unleash's project context fields: a field that belongs to one project, listed and managed there, its name still
// unique across the instance; the instance's list leaves it out unless asked to include projects' fields.

const ctx = useTestApp();
const context = (project: string) => `${projectPath(project)}/context`;
type Field = { name: string; project?: string; legalValues: Array<{ value: string }>; description: string | null };

describe('project context fields', () => {
  test("made, read, changed and deleted in their project, each with its event; apart from the instance's list", async () => {
    const project = await createProject(ctx);
    const name = uniqueName('tenant');
    let before = await lastEventId(ctx);
    const created = await ctx.admin.post(context(project), { name, description: 'The tenant', legalValues: [{ value: 'acme' }] });
    expectStatus(created, 201);
    assert.equal((created.json() as Field).project, project);
    onlyEvent(await eventsSince(ctx, before), 'context-field-created');

    assert.deepEqual(
      (await getOk<Field[]>(ctx.admin, context(project))).map((field) => [field.name, field.project]),
      [[name, project]],
    );
    assert.ok(!(await getOk<Field[]>(ctx.admin, '/api/admin/context')).some((field) => field.name === name), 'not in the instance list');
    assert.ok((await getOk<Field[]>(ctx.admin, '/api/admin/context?include=project')).some((field) => field.name === name));
    assert.equal((await getOk<Field>(ctx.admin, `${context(project)}/${name}`)).description, 'The tenant');

    before = await lastEventId(ctx);
    expectStatus(await ctx.admin.put(`${context(project)}/${name}`, { description: 'Who pays' }), 200);
    expectStatus(await ctx.admin.post(`${context(project)}/${name}/legal-values`, { value: 'globex' }), 200);
    expectStatus(await ctx.admin.delete(`${context(project)}/${name}/legal-values/acme`), 200);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => event.type),
      ['context-field-updated', 'context-field-updated', 'context-field-updated'],
    );
    const field = await getOk<Field>(ctx.admin, `${context(project)}/${name}`);
    assert.deepEqual([field.description, field.legalValues.map((value) => value.value)], ['Who pays', ['globex']]);

    // A flag of the project constrains on it: its strategies are listed, and the field cannot go.
    const flag = await createFlag(ctx, project, {
      strategies: [{ name: 'default', constraints: [{ contextName: name, operator: 'IN', values: ['globex'] }] }],
    });
    const { strategies } = await getOk<{ strategies: Array<{ featureName: string; projectId: string }> }>(
      ctx.admin,
      `${context(project)}/${name}/strategies`,
    );
    assert.deepEqual(
      strategies.map((strategy) => [strategy.featureName, strategy.projectId]),
      [[flag, project]],
    );
    expectError(await ctx.admin.delete(`${context(project)}/${name}`), 409, 'ConflictError');
    expectStatus(await ctx.admin.delete(featurePath(project, flag)), 202);
    expectStatus(await ctx.admin.delete(`/api/admin/archive/${flag}`), 200);
    before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`${context(project)}/${name}`), 200);
    onlyEvent(await eventsSince(ctx, before), 'context-field-deleted');
    assert.deepEqual(await getOk(ctx.admin, context(project)), []);
  });

  test("another project's field, or the instance's, is not reached through a project; names stay unique", async () => {
    const [mine, theirs] = [await createProject(ctx), await createProject(ctx)];
    const theirField = uniqueName('theirs');
    expectStatus(await ctx.admin.post(context(theirs), { name: theirField }), 201);
    const read = () => getOk(ctx.admin, `${context(theirs)}/${theirField}`);
    await expectRefused(
      ctx,
      () => ctx.admin.put(`${context(mine)}/${theirField}`, { description: 'mine now' }),
      { status: 404, name: 'NotFoundError' },
      read,
    );
    await expectRefused(ctx, () => ctx.admin.delete(`${context(mine)}/${theirField}`), { status: 404, name: 'NotFoundError' }, read);
    await expectRefused(
      ctx,
      () => ctx.admin.post(`${context(mine)}/${theirField}/legal-values`, { value: 'x' }),
      { status: 404, name: 'NotFoundError' },
      read,
    );
    expectError(await ctx.admin.get(`${context(mine)}/${theirField}`), 404, 'NotFoundError');
    expectError(await ctx.admin.get(`${context(mine)}/userId`), 404, 'NotFoundError');
    // The name is taken instance-wide.
    await expectRefused(ctx, () => ctx.admin.post(context(mine), { name: theirField }), { status: 409, name: 'NameExistsError' });
    expectError(await ctx.admin.post(`${context(mine)}/validate`, { name: theirField }), 409, 'NameExistsError');
    expectStatus(await ctx.admin.post(`${context(mine)}/validate`, { name: uniqueName('free') }), 200);
    expectError(await ctx.admin.get(context('no-such-project')), 404, 'NotFoundError');
    await expectRefused(ctx, () => ctx.admin.post(context('no-such-project'), { name: uniqueName('orphan') }), {
      status: 404,
      name: 'NotFoundError',
    });
  });

  test('bad input is a 400 at its field; only who may change the project manages its fields', async () => {
    const project = await createProject(ctx);
    for (const [body, path] of [
      [{ name: 'has space' }, '/body/name'],
      [{ name: uniqueName('f'), project: 'other' }, '/body/project'],
      [{ name: uniqueName('f'), legalValues: [{ value: '' }] }, '/body/legalValues/0/value'],
    ] as const) {
      await expectRefused(ctx, () => ctx.admin.post(context(project), body), { status: 400, name: 'BadDataError', path });
    }
    const viewer = ctx.withCookie((await createUserSession(ctx, 'Viewer')).cookie);
    const refusal = await expectRefused(ctx, () => viewer.post(context(project), { name: uniqueName('mine') }), {
      status: 403,
      name: 'PermissionError',
    });
    assert.deepEqual(refusal.permissions, ['UPDATE_PROJECT']);
    assert.deepEqual(await getOk(viewer, context(project)), []);
    // A project's Owner manages its fields without any root permission.
    const owner = await createUserSession(ctx, 'Viewer');
    expectStatus(await ctx.admin.put(`${projectPath(project)}/users/${owner.id}/roles`, { roles: [4] }), 200);
    expectStatus(await ctx.withCookie(owner.cookie).post(context(project), { name: uniqueName('owned') }), 201);
  });

  test('deleting a project deletes its fields first, each with its event', async () => {
    const project = await createProject(ctx);
    const name = uniqueName('gone');
    expectStatus(await ctx.admin.post(context(project), { name }), 201);
    const before = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(projectPath(project)), 200);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => event.type),
      ['context-field-deleted', 'project-deleted'],
    );
    assert.ok(!(await getOk<Field[]>(ctx.admin, '/api/admin/context?include=project')).some((field) => field.name === name));
  });
});
