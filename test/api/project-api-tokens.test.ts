import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { createFlag, createProject, projectPath } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

// A project's own SDK tokens (Unleash's project "API access"): its members list, make and delete the tokens that name
// it, and nothing else; a token made here reaches that project only.

const MEMBER = 5;

interface Token {
  id: number;
  tokenName: string;
  type: string;
  environment: string;
  projects: string[];
  secret?: string;
}

const tokensPath = (project: string) => `${projectPath(project)}/api-tokens`;

describe("a project's API tokens", () => {
  const ctx = useTestApp();

  test('a Member makes a client token of the project: it reads that project only; listing and deleting see the project tokens only', async () => {
    const project = await createProject(ctx);
    const other = await createProject(ctx);
    await createFlag(ctx, project, { name: `mine-${project}`, enabled: true });
    await createFlag(ctx, other, { name: `theirs-${other}`, enabled: true });
    const member = await createUserSession(ctx, 'Viewer');
    expectStatus(await ctx.admin.post(`${projectPath(project)}/access`, { roles: [MEMBER], users: [member.id] }), 200);
    const asMember = ctx.withCookie(member.cookie);

    const before = await lastEventId(ctx);
    const created = await asMember.post(tokensPath(project), {
      tokenName: 'checkout-service',
      type: 'backend',
      environment: 'development',
    });
    expectStatus(created, 201);
    const token = created.json() as Token;
    assert.deepEqual([token.type, token.environment, token.projects], ['client', 'development', [project]]);
    assert.match(token.secret!, new RegExp(`^${project}:development\\.`));
    const event = onlyEvent(await eventsSince(ctx, before), 'api-token-created');
    assert.equal(event.project, project);
    assert.equal(JSON.stringify(event).includes(token.secret!), false, 'the secret is in no event');

    const served = await ctx.as(token.secret).get('/api/client/features');
    expectStatus(served, 200);
    assert.deepEqual(
      (served.json() as { features: Array<{ name: string }> }).features.map((feature) => feature.name),
      [`mine-${project}`],
    );

    // Tokens of every project and of other projects are not the project's to list.
    expectStatus(
      await ctx.admin.post('/api/admin/api-tokens', { tokenName: 'everywhere', type: 'client', environment: 'development' }),
      201,
    );
    expectStatus(await ctx.admin.post('/api/admin/api-tokens', { tokenName: 'elsewhere', type: 'client', projects: [other] }), 201);
    const listed = await getOk<{ tokens: Token[] }>(asMember, tokensPath(project));
    assert.deepEqual(
      listed.tokens.map(({ tokenName, projects, secret }) => ({ tokenName, projects, secret })),
      [{ tokenName: 'checkout-service', projects: [project], secret: undefined }],
    );
    // The member has no say in other projects.
    await expectRefused(ctx, () => asMember.post(tokensPath(other), { tokenName: 'sneaky', type: 'client' }), {
      status: 403,
      name: 'PermissionError',
    });
    expectError(await asMember.get(tokensPath(other)), 403, 'PermissionError');

    const deletedAt = await lastEventId(ctx);
    expectStatus(await asMember.delete(`${tokensPath(project)}/${encodeURIComponent(token.secret!)}`), 200);
    onlyEvent(await eventsSince(ctx, deletedAt), 'api-token-deleted');
    expectError(await ctx.as(token.secret).get('/api/client/features'), 401, 'UnauthorizedError');
    assert.deepEqual((await getOk<{ tokens: Token[] }>(asMember, tokensPath(project))).tokens, []);
  });

  test('a token that reaches other projects too is not deleted here, and one of another project is not found', async () => {
    const project = await createProject(ctx);
    const other = await createProject(ctx);
    const shared = (
      await ctx.admin.post('/api/admin/api-tokens', { tokenName: 'shared', type: 'client', projects: [project, other] })
    ).json() as Token;
    const theirs = (await ctx.admin.post(tokensPath(other), { tokenName: 'theirs', type: 'frontend' })).json() as Token;
    await expectRefused(ctx, () => ctx.admin.delete(`${tokensPath(project)}/${shared.id}`), {
      status: 400,
      name: 'BadDataError',
      path: '/params/token',
    });
    await expectRefused(ctx, () => ctx.admin.delete(`${tokensPath(project)}/${theirs.id}`), { status: 404, name: 'NotFoundError' });
    await expectRefused(ctx, () => ctx.admin.delete(`${tokensPath(project)}/${encodeURIComponent(theirs.secret!)}`), {
      status: 404,
      name: 'NotFoundError',
    });
  });

  test('bad input is a 400 naming it; an unknown project a 404; nothing is made', async () => {
    const project = await createProject(ctx);
    for (const [body, path] of [
      [{ tokenName: 'admin-here', type: 'admin' }, '/body/type'],
      [{ type: 'client' }, '/body/tokenName'],
      [{ tokenName: 'x', type: 'client', projects: ['*'] }, '/body/projects'],
      [{ tokenName: 'x', type: 'client', environment: '*' }, '/body/environment'],
      [{ tokenName: 'x', type: 'client', expiresAt: 'tomorrow' }, '/body/expiresAt'],
    ] as const) {
      await expectRefused(ctx, () => ctx.admin.post(tokensPath(project), body), { status: 400, name: 'BadDataError', path });
    }
    await expectRefused(ctx, () => ctx.admin.post(tokensPath(project), { tokenName: 'x', type: 'client', environment: 'no-such-env' }), {
      status: 404,
      name: 'NotFoundError',
    });
    await expectRefused(ctx, () => ctx.admin.post(tokensPath('no-such-project'), { tokenName: 'x', type: 'client' }), {
      status: 404,
      name: 'NotFoundError',
    });
    expectError(await ctx.admin.get(tokensPath('no-such-project')), 404, 'NotFoundError');
    assert.deepEqual((await getOk<{ tokens: Token[] }>(ctx.admin, tokensPath(project))).tokens, []);
  });
});
