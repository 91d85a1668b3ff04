import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventFields, eventsSince, lastEventId } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { STRONG_PASSWORD, useTestApp, type Client } from '../helpers/test-app.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const ctx = useTestApp();

interface Attribute {
  name: string;
  type: string;
  multiValued: boolean;
  required: boolean;
  subAttributes?: Attribute[];
}
type Resource = Record<string, unknown> & { id: string; schemas: string[]; meta: { resourceType: string; location: string } };
interface ListResponse {
  schemas: string[];
  totalResults: number;
  startIndex: number;
  itemsPerPage: number;
  Resources: Resource[];
}

/** A client of `/scim/v2` with a fresh SCIM token, sending SCIM's own content type as identity providers do. */
async function provisioner(): Promise<Client & { token: string }> {
  const made = await ctx.admin.post('/api/admin/scim/token');
  expectStatus(made, 201);
  const { token } = made.json() as { token: string };
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
  const send = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    ctx.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  return {
    token,
    get: (url) => send('GET', url),
    post: (url, body) => send('POST', url, body),
    put: (url, body) => send('PUT', url, body),
    patch: (url, body) => send('PATCH', url, body),
    delete: (url) => send('DELETE', url),
    inject: (options) => ctx.app.inject({ ...options, headers: { ...headers, ...(options.headers ?? {}) } }),
  };
}

/** The body of a SCIM answer, which must come as application/scim+json. */
function scimBody<T>(response: LightMyRequestResponse, status: number): T {
  expectStatus(response, status);
  assert.match(String(response.headers['content-type']), /^application\/scim\+json/);
  return response.json() as T;
}

/** A SCIM error (RFC 7644 §3.12) that is also Unleash's error body. */
function expectScimError(response: LightMyRequestResponse, status: number, scimType?: string) {
  const body = expectError(response, status, response.json().name);
  const scim = response.json() as { schemas: string[]; status: string; detail: string; scimType?: string };
  assert.deepEqual(scim.schemas, [ERROR]);
  assert.equal(scim.status, String(status));
  assert.equal(scim.detail, body.message);
  assert.equal(scim.scimType, scimType);
  return scim;
}

/** Checks a resource against the attribute definitions `/Schemas` serves (RFC 7643 §7): presence, type, arity. */
function assertConforms(resource: Record<string, unknown>, attributes: Attribute[], where: string): void {
  for (const attribute of attributes) {
    const value = resource[attribute.name];
    if (value === undefined) {
      assert.ok(!attribute.required, `${where}.${attribute.name} is required`);
      continue;
    }
    const values = attribute.multiValued ? value : [value];
    assert.ok(Array.isArray(values), `${where}.${attribute.name} is multi-valued`);
    for (const item of values as unknown[]) {
      const expected = { string: 'string', boolean: 'boolean', reference: 'string', complex: 'object' }[attribute.type];
      assert.equal(typeof item, expected, `${where}.${attribute.name} is a ${attribute.type}`);
      if (attribute.type === 'complex')
        assertConforms(item as Record<string, unknown>, attribute.subAttributes ?? [], `${where}.${attribute.name}`);
    }
  }
}

async function schemaOf(scim: Client, urn: string): Promise<Attribute[]> {
  return scimBody<{ attributes: Attribute[] }>(await scim.get(`/scim/v2/Schemas/${urn}`), 200).attributes;
}

function assertResource(resource: Resource, schema: string, attributes: Attribute[]): void {
  assert.ok(resource.schemas.includes(schema));
  assert.match(resource.id, /^[0-9]+$/);
  assert.ok(resource.meta.location.endsWith(`/${resource.id}`));
  assertConforms(resource, attributes, resource.meta.resourceType);
}

/** Signs a person in with a password an Admin set, as they would in the browser; answers their session cookie. */
async function signIn(userName: string, userId: number): Promise<string> {
  expectStatus(await ctx.admin.post(`/api/admin/user-admin/${userId}/change-password`, { password: STRONG_PASSWORD }), 200);
  const login = await ctx.as().post('/auth/simple/login', { username: userName, password: STRONG_PASSWORD });
  expectStatus(login, 200);
  return `vexil-session=${login.cookies.find((cookie) => cookie.name === 'vexil-session')!.value}`;
}

describe('SCIM provisioning as Okta does it', () => {
  test('look up, create, read, replace and deactivate a user; push a group, rename it, add and remove members, delete it', async () => {
    const scim = await provisioner();
    const userAttributes = await schemaOf(scim, USER);
    const groupAttributes = await schemaOf(scim, GROUP);
    const email = `${uniqueName('okta')}@example.com`;
    const since = await lastEventId(ctx);

    const lookup = scimBody<ListResponse>(
      await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`),
      200,
    );
    assert.deepEqual(lookup, { schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });

    const createdResponse = await scim.post('/scim/v2/Users', {
      schemas: [USER],
      userName: email,
      name: { givenName: 'Test', familyName: 'User' },
      emails: [{ primary: true, value: email, type: 'work' }],
      displayName: 'Test User',
      locale: 'en-US',
      externalId: '00ujl29u0le5T6Aj10h7',
      groups: [],
      password: '1mz050nq',
      active: true,
    });
    const created = scimBody<Resource>(createdResponse, 201);
    assertResource(created, USER, userAttributes);
    assert.equal(createdResponse.headers.location, created.meta.location);
    assert.deepEqual(
      { userName: created.userName, name: created.name, emails: created.emails, active: created.active, externalId: created.externalId },
      {
        userName: email,
        name: { givenName: 'Test', familyName: 'User', formatted: 'Test User' },
        emails: [{ primary: true, value: email, type: 'work' }],
        active: true,
        externalId: '00ujl29u0le5T6Aj10h7',
      },
    );
    assert.equal(created.password, undefined, 'a password sent over SCIM is never kept nor returned');
    assert.equal(created.locale, 'en-US');

    const found = scimBody<ListResponse>(
      await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${email.toUpperCase()}"`)}`),
      200,
    );
    assert.deepEqual(
      found.Resources.map((resource) => resource.id),
      [created.id],
    );
    assert.deepEqual(scimBody<Resource>(await scim.get(`/scim/v2/Users/${created.id}`), 200), created);

    // Vexil's own view of the person: provisioned, with the sign-in policy's default role, not yet seen.
    const asVexilSees = await getOk<{ scimId: string; email: string; name: string; rootRole: number; deactivatedAt: null }>(
      ctx.admin,
      `/api/admin/user-admin/${created.id}`,
    );
    assert.deepEqual(
      {
        scimId: asVexilSees.scimId,
        email: asVexilSees.email,
        name: asVexilSees.name,
        rootRole: asVexilSees.rootRole,
        deactivatedAt: asVexilSees.deactivatedAt,
      },
      { scimId: created.id, email, name: 'Test User', rootRole: 3, deactivatedAt: null },
    );

    const replaced = scimBody<Resource>(
      await scim.put(`/scim/v2/Users/${created.id}`, {
        schemas: [USER],
        id: created.id,
        userName: email,
        name: { givenName: 'Another', familyName: 'User' },
        emails: [{ primary: true, value: email, type: 'work' }],
        active: true,
        externalId: '00ujl29u0le5T6Aj10h7',
      }),
      200,
    );
    assert.deepEqual(replaced.name, { givenName: 'Another', familyName: 'User', formatted: 'Another User' });
    assert.equal(replaced.locale, undefined, 'a replacement replaces: what it leaves out is gone');

    // Okta pushes a group with the person in it.
    const groupName = uniqueName('Okta group');
    const group = scimBody<Resource>(
      await scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: groupName, members: [{ value: created.id, display: email }] }),
      201,
    );
    assertResource(group, GROUP, groupAttributes);
    assert.deepEqual(group.members, [
      { value: created.id, display: email, type: 'User', $ref: `${ctx.config.baseUrl}/scim/v2/Users/${created.id}` },
    ]);

    const renamed = scimBody<Resource>(
      await scim.patch(`/scim/v2/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', value: { id: group.id, displayName: `${groupName} renamed` } }],
      }),
      200,
    );
    assert.equal(renamed.displayName, `${groupName} renamed`);

    const other = scimBody<Resource>(
      await scim.post('/scim/v2/Users', { schemas: [USER], userName: `${uniqueName('okta2')}@example.com` }),
      201,
    );
    const added = scimBody<Resource>(
      await scim.patch(`/scim/v2/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'add', path: 'members', value: [{ value: other.id, display: other.userName }] }],
      }),
      200,
    );
    assert.deepEqual(
      (added.members as Array<{ value: string }>).map((member) => member.value),
      [created.id, other.id],
    );
    const removed = scimBody<Resource>(
      await scim.patch(`/scim/v2/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'remove', path: `members[value eq "${created.id}"]` }],
      }),
      200,
    );
    assert.deepEqual(
      (removed.members as Array<{ value: string }>).map((member) => member.value),
      [other.id],
    );
    const otherNow = scimBody<Resource>(await scim.get(`/scim/v2/Users/${other.id}`), 200);
    assert.deepEqual(otherNow.groups, [
      { value: group.id, display: `${groupName} renamed`, $ref: `${ctx.config.baseUrl}/scim/v2/Groups/${group.id}` },
    ]);

    const deactivated = scimBody<Resource>(
      await scim.patch(`/scim/v2/Users/${created.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] }),
      200,
    );
    assert.equal(deactivated.active, false);

    expectStatus(await scim.delete(`/scim/v2/Groups/${group.id}`), 204);
    expectScimError(await scim.get(`/scim/v2/Groups/${group.id}`), 404);

    // Every change is in the event log, as the identity provider, and no event carries a password.
    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      eventFields(events, 'type', 'createdBy').filter((event) => event.type !== 'scim-token-created'),
      [
        'user-created',
        'user-updated',
        'group-created',
        'group-user-added',
        'group-updated',
        'user-created',
        'group-user-added',
        'group-user-removed',
        'user-deactivated',
        'group-deleted',
      ].map((type) => ({ type, createdBy: 'scim' })),
    );
    assert.ok(!JSON.stringify(events).includes('1mz050nq'));
  });
});

describe('SCIM provisioning as Microsoft Entra ID does it', () => {
  test('create with the enterprise extension, find by externalId, PATCH with capitalised ops and "False", group membership checks', async () => {
    const scim = await provisioner();
    const userName = uniqueName('Test_User');
    const externalId = uniqueName('entra');
    const created = scimBody<Resource>(
      await scim.post('/scim/v2/Users', {
        schemas: [USER, ENTERPRISE],
        externalId,
        userName,
        active: true,
        emails: [{ primary: true, type: 'work', value: `${userName}@testuser.com` }],
        meta: { resourceType: 'User' },
        name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
        roles: [],
        [ENTERPRISE]: { department: 'Engineering', employeeNumber: '1234' },
      }),
      201,
    );
    assert.deepEqual(created.schemas, [USER, ENTERPRISE]);
    assert.deepEqual(created[ENTERPRISE], { department: 'Engineering', employeeNumber: '1234' });
    assertResource(created, USER, await schemaOf(scim, USER));

    const byExternalId = scimBody<ListResponse>(
      await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`externalId eq "${externalId}"`)}`),
      200,
    );
    assert.deepEqual(
      byExternalId.Resources.map((resource) => resource.userName),
      [userName],
    );

    const patched = scimBody<Resource>(
      await scim.patch(`/scim/v2/Users/${created.id}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'Replace', path: 'emails[type eq "work"].value', value: `${userName}-updated@testuser.com` },
          { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
        ],
      }),
      200,
    );
    assert.deepEqual(patched.emails, [{ primary: true, type: 'work', value: `${userName}-updated@testuser.com` }]);
    const vexilUser = await getOk<{ email: string }>(ctx.admin, `/api/admin/user-admin/${created.id}`);
    assert.equal(vexilUser.email, `${userName}-updated@testuser.com`);

    const groupName = uniqueName('Entra group');
    const group = scimBody<Resource>(
      await scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        externalId: uniqueName('entra-group'),
        displayName: groupName,
        meta: { resourceType: 'Group' },
        members: [],
      }),
      201,
    );
    const byName = scimBody<ListResponse>(
      await scim.get(`/scim/v2/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${groupName}"`)}`),
      200,
    );
    assert.deepEqual(byName.Resources, [
      { schemas: [GROUP], id: group.id, externalId: group.externalId, displayName: groupName, meta: group.meta },
    ]);
    const withoutMembers = scimBody<Resource>(await scim.get(`/scim/v2/Groups/${group.id}?excludedAttributes=members`), 200);
    assert.equal(withoutMembers.members, undefined);

    const membership = `/scim/v2/Groups?excludedAttributes=members&filter=${encodeURIComponent(`id eq "${group.id}" and members eq "${created.id}"`)}`;
    assert.equal(scimBody<ListResponse>(await scim.get(membership), 200).totalResults, 0);
    expectStatus(
      await scim.patch(`/scim/v2/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: created.id }] }],
      }),
      200,
    );
    assert.equal(scimBody<ListResponse>(await scim.get(membership), 200).totalResults, 1);
    expectStatus(
      await scim.patch(`/scim/v2/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: 'Remove', path: 'members', value: [{ $ref: null, value: created.id }] },
          { op: 'Replace', path: 'displayName', value: `${groupName} updatedDisplayName` },
        ],
      }),
      200,
    );
    assert.equal(scimBody<ListResponse>(await scim.get(membership), 200).totalResults, 0);
    assert.equal(scimBody<Resource>(await scim.get(`/scim/v2/Groups/${group.id}`), 200).displayName, `${groupName} updatedDisplayName`);

    const off = scimBody<Resource>(
      await scim.patch(`/scim/v2/Users/${created.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      }),
      200,
    );
    assert.equal(off.active, false);
    expectStatus(await scim.delete(`/scim/v2/Users/${created.id}`), 204);
    expectScimError(await scim.get(`/scim/v2/Users/${created.id}`), 404);
    expectStatus(await scim.delete(`/scim/v2/Groups/${group.id}`), 204);
  });
});

describe('what SCIM changes applies at once', () => {
  test('joining a group gives its access at the next request, leaving takes it away, deactivation ends the session and refuses sign-in', async () => {
    const scim = await provisioner();
    const userName = `${uniqueName('access')}@example.com`;
    const person = scimBody<Resource>(await scim.post('/scim/v2/Users', { schemas: [USER], userName }), 201);
    // The provider pushes the group; an Admin gives it its role in Vexil.
    const groupName = uniqueName('SCIM editors');
    const groupId = scimBody<Resource>(await scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: groupName }), 201).id;
    expectStatus(await ctx.admin.put(`/api/admin/groups/${groupId}`, { name: groupName, rootRole: 2 }), 200);
    const browser = ctx.withCookie(await signIn(userName, Number(person.id)));
    const createProject = () => browser.post('/api/admin/projects', { id: uniqueName('scim-project'), name: 'SCIM project' });

    expectError(await createProject(), 403, 'PermissionError');
    expectStatus(
      await scim.patch(`/scim/v2/Groups/${groupId}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'add', path: 'members', value: [{ value: person.id }] }],
      }),
      200,
    );
    expectStatus(await createProject(), 201);
    expectStatus(
      await scim.patch(`/scim/v2/Groups/${groupId}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'remove', path: `members[value eq "${person.id}"]` }],
      }),
      200,
    );
    expectError(await createProject(), 403, 'PermissionError');

    const pat = await browser.post('/api/admin/user/tokens', {
      description: 'laptop',
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expectStatus(pat, 201);
    const patClient = ctx.as((pat.json() as { secret: string }).secret);
    expectStatus(await patClient.get('/api/admin/user'), 200);

    expectStatus(
      await scim.patch(`/scim/v2/Users/${person.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'replace', path: 'active', value: false }],
      }),
      200,
    );
    expectError(await browser.get('/api/admin/user'), 401, 'AuthenticationRequired');
    expectError(await patClient.get('/api/admin/user'), 401, 'UnauthorizedError');
    const refused = expectError(
      await ctx.as().post('/auth/simple/login', { username: userName, password: STRONG_PASSWORD }),
      401,
      'UnauthorizedError',
    );
    assert.match(refused.message, /deactivated/);
    const audit = await getOk<{ signons: Array<{ username: string; successful: boolean; failureReason: string | null }> }>(
      ctx.admin,
      `/api/admin/signons?userId=${person.id}`,
    );
    assert.deepEqual(
      audit.signons.map(({ successful, failureReason }) => ({ successful, failureReason })),
      [
        { successful: false, failureReason: refused.message },
        { successful: true, failureReason: null },
      ],
    );

    // Reactivated, the person signs in again; what deactivation ended stays ended.
    expectStatus(await scim.put(`/scim/v2/Users/${person.id}`, { schemas: [USER], userName, active: true }), 200);
    expectStatus(await ctx.as().post('/auth/simple/login', { username: userName, password: STRONG_PASSWORD }), 200);
    expectError(await patClient.get('/api/admin/user'), 401, 'UnauthorizedError');
  });
});

describe('the SCIM token', () => {
  test('is made by an Admin, shown once, replaced by the next one, and deleting it turns provisioning off', async () => {
    // Other tests of this file made tokens before; this one starts with provisioning off.
    await ctx.admin.delete('/api/admin/scim/token');
    const since = await lastEventId(ctx);
    const first = await provisioner();
    const status = await getOk<Record<string, unknown>>(ctx.admin, '/api/admin/scim/token');
    assert.deepEqual(Object.keys(status).sort(), ['createdAt', 'createdBy', 'enabled', 'seenAt']);
    assert.equal(status.enabled, true);
    assert.equal(status.createdBy, 'admin-token');
    assert.ok(!JSON.stringify(status).includes(first.token));

    expectStatus(await first.get('/scim/v2/ServiceProviderConfig'), 200);
    const second = await provisioner();
    expectScimError(await first.get('/scim/v2/Users'), 401);
    expectStatus(await second.get('/scim/v2/Users'), 200);
    expectStatus(await ctx.admin.delete('/api/admin/scim/token'), 204);
    expectScimError(await second.get('/scim/v2/Users'), 401);
    assert.equal((await getOk<{ enabled: boolean }>(ctx.admin, '/api/admin/scim/token')).enabled, false);
    expectError(await ctx.admin.delete('/api/admin/scim/token'), 404, 'NotFoundError');

    const events = await eventsSince(ctx, since);
    assert.deepEqual(
      events.map((event) => [event.type, event.data ?? event.preData]),
      [
        ['scim-token-created', { replaced: false }],
        ['scim-token-created', { replaced: true }],
        ['scim-token-deleted', { enabled: true }],
      ],
    );
    assert.ok(!JSON.stringify(events).includes(first.token) && !JSON.stringify(events).includes(second.token));
  });

  test('no token, an API token or a Viewer is refused', async () => {
    const scim = await provisioner();
    expectScimError(await ctx.as().get('/scim/v2/Users'), 401);
    expectScimError(await ctx.admin.get('/scim/v2/Users'), 401);
    expectScimError(await ctx.as(`Bearer ${scim.token}x`).get('/scim/v2/Users'), 401);
    const viewer = await ctx.admin.post('/api/admin/user-admin', {
      username: uniqueName('viewer'),
      rootRole: 'Viewer',
      password: STRONG_PASSWORD,
    });
    const cookie = await signIn((viewer.json() as { username: string }).username, (viewer.json() as { id: number }).id);
    expectError(await ctx.withCookie(cookie).post('/api/admin/scim/token'), 403, 'PermissionError');
    expectError(await ctx.withCookie(cookie).get('/api/admin/scim/token'), 403, 'PermissionError');
    // The SCIM token opens SCIM only, not the admin API.
    expectError(await ctx.as(scim.token).get('/api/admin/user'), 401, 'UnauthorizedError');
  });
});

describe('bad SCIM requests are refused with SCIM errors, and change nothing', () => {
  test('each kind of bad input names its scimType', async () => {
    const scim = await provisioner();
    const userName = uniqueName('bad');
    const person = scimBody<Resource>(await scim.post('/scim/v2/Users', { schemas: [USER], userName, externalId: `${userName}-ext` }), 201);
    const before = scimBody<Resource>(await scim.get(`/scim/v2/Users/${person.id}`), 200);

    expectScimError(await scim.post('/scim/v2/Users', { schemas: [USER] }), 400, 'invalidValue');
    expectScimError(await scim.post('/scim/v2/Users', { schemas: [USER], userName: 'has spaces' }), 400, 'invalidValue');
    expectScimError(await scim.post('/scim/v2/Users', { schemas: [USER], userName: userName.toUpperCase() }), 409, 'uniqueness');
    expectScimError(
      await scim.post('/scim/v2/Users', { schemas: [USER], userName: uniqueName('x'), externalId: `${userName}-ext` }),
      409,
      'uniqueness',
    );
    expectScimError(
      await scim.post('/scim/v2/Users', { schemas: [USER], userName: uniqueName('x'), emails: [{ value: 'not-an-email' }] }),
      400,
      'invalidValue',
    );
    expectScimError(
      await scim.post('/scim/v2/Users', { schemas: [USER], userName: uniqueName('x'), active: 'maybe' }),
      400,
      'invalidValue',
    );
    expectScimError(
      await scim.post('/scim/v2/Users', { schemas: [USER], userName: uniqueName('x'), name: 'a string' }),
      400,
      'invalidValue',
    );
    expectScimError(await scim.get(`/scim/v2/Users?filter=${encodeURIComponent('userName co "x"')}`), 400, 'invalidFilter');
    expectScimError(await scim.get(`/scim/v2/Users?filter=${encodeURIComponent('userName eq')}`), 400, 'invalidFilter');
    expectScimError(await scim.get(`/scim/v2/Users?filter=${encodeURIComponent('title eq "x"')}`), 400, 'invalidFilter');
    expectScimError(
      await scim.get(`/scim/v2/Users?filter=${encodeURIComponent('userName eq "a" or userName eq "b"')}`),
      400,
      'invalidFilter',
    );
    expectScimError(
      await scim.patch(`/scim/v2/Users/${person.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'move', path: 'userName' }] }),
      400,
      'invalidPath',
    );
    expectScimError(await scim.patch(`/scim/v2/Users/${person.id}`, { schemas: [PATCH_OP], Operations: [] }), 400);
    expectScimError(
      await scim.patch(`/scim/v2/Users/${person.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'userName' }] }),
      400,
      'invalidValue',
    );
    expectScimError(
      await scim.patch(`/scim/v2/Users/${person.id}`, { Operations: Array.from({ length: 101 }, () => ({ op: 'replace', value: {} })) }),
      400,
    );
    expectScimError(
      await scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: uniqueName('g'), members: [{ value: '999999' }] }),
      400,
      'invalidValue',
    );
    expectScimError(
      await scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: uniqueName('g'), members: [{ value: 'abc' }] }),
      400,
      'invalidValue',
    );
    expectScimError(await scim.post('/scim/v2/Groups', { schemas: [GROUP] }), 400, 'invalidValue');
    expectScimError(await scim.get('/scim/v2/Users/not-an-id'), 404);
    expectScimError(await scim.put('/scim/v2/Users/2147483647', { schemas: [USER], userName: uniqueName('x') }), 404);
    expectScimError(
      await scim.inject({
        method: 'POST',
        url: '/scim/v2/Users',
        payload: '{"userName":',
        headers: { 'content-type': 'application/scim+json' },
      }),
      400,
    );

    assert.deepEqual(scimBody<Resource>(await scim.get(`/scim/v2/Users/${person.id}`), 200), before);
  });

  test('paging is 1-based and bounded; count=0 answers only the total', async () => {
    const scim = await provisioner();
    const prefix = uniqueName('page');
    for (let index = 0; index < 3; index++) {
      expectStatus(await scim.post('/scim/v2/Users', { schemas: [USER], userName: `${prefix}-${index}` }), 201);
    }
    const all = scimBody<ListResponse>(await scim.get('/scim/v2/Users?count=100000'), 200);
    assert.ok(all.itemsPerPage <= 200 && all.itemsPerPage === all.Resources.length);
    const ours = all.Resources.filter((resource) => String(resource.userName).startsWith(prefix));
    assert.deepEqual(
      ours.map((resource) => resource.userName),
      [0, 1, 2].map((index) => `${prefix}-${index}`),
    );
    const second = scimBody<ListResponse>(
      await scim.get(`/scim/v2/Users?startIndex=${all.totalResults - 1}&count=1&attributes=userName`),
      200,
    );
    assert.deepEqual(
      second.Resources.map((resource) => Object.keys(resource).sort()),
      [['id', 'meta', 'schemas', 'userName']],
    );
    assert.equal(second.Resources[0]!.userName, `${prefix}-1`);
    const countOnly = scimBody<ListResponse>(await scim.get('/scim/v2/Users?count=0'), 200);
    assert.deepEqual(
      { ...countOnly, totalResults: 0 },
      { schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] },
    );
    assert.equal(countOnly.totalResults, all.totalResults);
  });

  test('the service describes itself', async () => {
    const scim = await provisioner();
    const config = scimBody<{
      patch: { supported: boolean };
      filter: { supported: boolean; maxResults: number };
      bulk: { supported: boolean };
    }>(await scim.get('/scim/v2/ServiceProviderConfig'), 200);
    assert.deepEqual([config.patch.supported, config.filter, config.bulk.supported], [true, { supported: true, maxResults: 200 }, false]);
    const types = scimBody<ListResponse>(await scim.get('/scim/v2/ResourceTypes'), 200);
    assert.deepEqual(
      types.Resources.map((type) => [type.id, type.endpoint, type.schema]),
      [
        ['User', '/Users', USER],
        ['Group', '/Groups', GROUP],
      ],
    );
    const schemas = scimBody<ListResponse>(await scim.get('/scim/v2/Schemas'), 200);
    assert.deepEqual(
      schemas.Resources.map((schema) => schema.id),
      [USER, GROUP],
    );
    expectScimError(await scim.get('/scim/v2/Schemas/urn:nothing'), 404);
  });
});

describe('what a SCIM token reaches', () => {
  test('only the people and groups it provisioned: an Admin-made person or group is not found, listed or changed', async () => {
    const scim = await provisioner();
    const username = uniqueName('made-by-admin');
    const made = await ctx.admin.post('/api/admin/user-admin', { username, email: `${username}@corp.example`, rootRole: 'Editor' });
    expectStatus(made, 201);
    const userId = (made.json() as { id: number }).id;
    const group = await ctx.admin.post('/api/admin/groups', { name: uniqueName('made-by-admin'), rootRole: 2 });
    expectStatus(group, 201);
    const groupId = (group.json() as { id: number }).id;
    const since = await lastEventId(ctx);

    const listed = scimBody<ListResponse>(await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${username}"`)}`), 200);
    assert.deepEqual([listed.totalResults, listed.Resources], [0, []]);
    const all = scimBody<ListResponse>(await scim.get('/scim/v2/Users?count=1000'), 200);
    assert.ok(!all.Resources.some((resource) => resource.id === String(userId)));
    expectScimError(await scim.get(`/scim/v2/Users/${userId}`), 404);
    const takeOver = {
      schemas: [PATCH_OP],
      Operations: [{ op: 'replace', path: 'emails[primary eq true].value', value: 'attacker@evil.example' }],
    };
    expectScimError(await scim.patch(`/scim/v2/Users/${userId}`, takeOver), 404);
    expectScimError(await scim.put(`/scim/v2/Users/${userId}`, { schemas: [USER], userName: username, active: false }), 404);
    expectScimError(await scim.delete(`/scim/v2/Users/${userId}`), 404);

    const groups = scimBody<ListResponse>(await scim.get('/scim/v2/Groups?count=1000'), 200);
    assert.ok(!groups.Resources.some((resource) => resource.id === String(groupId)));
    const attacker = scimBody<Resource>(await scim.post('/scim/v2/Users', { schemas: [USER], userName: uniqueName('attacker') }), 201);
    const join = { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: attacker.id }] }] };
    expectScimError(await scim.patch(`/scim/v2/Groups/${groupId}`, join), 404);
    expectScimError(await scim.delete(`/scim/v2/Groups/${groupId}`), 404);
    // Nor can it pull an Admin-made person into a group of its own.
    const own = scimBody<Resource>(await scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: uniqueName('own') }), 201);
    expectScimError(
      await scim.patch(`/scim/v2/Groups/${own.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'add', path: 'members', value: [{ value: String(userId) }] }],
      }),
      400,
      'invalidValue',
    );

    const person = await getOk<{ email: string; rootRole: number }>(ctx.admin, `/api/admin/user-admin/${userId}`);
    assert.deepEqual([person.email, person.rootRole], [`${username}@corp.example`, 2]);
    assert.deepEqual(
      (await eventsSince(ctx, since)).map((event) => event.type),
      ['user-created', 'group-created'],
      'only what the provider created itself',
    );
  });

  test('a provisioned person or group an Admin gave the Admin root role is changed only in Vexil', async () => {
    const scim = await provisioner();
    const userName = uniqueName('promoted');
    const person = scimBody<Resource>(await scim.post('/scim/v2/Users', { schemas: [USER], userName }), 201);
    expectStatus(await ctx.admin.put(`/api/admin/user-admin/${person.id}`, { rootRole: 'Admin' }), 200);
    const before = scimBody<Resource>(await scim.get(`/scim/v2/Users/${person.id}`), 200);
    const since = await lastEventId(ctx);
    const deactivate = { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] };
    for (const refused of [
      await scim.patch(`/scim/v2/Users/${person.id}`, deactivate),
      await scim.put(`/scim/v2/Users/${person.id}`, {
        schemas: [USER],
        userName,
        emails: [{ value: 'attacker@evil.example', primary: true }],
      }),
      await scim.delete(`/scim/v2/Users/${person.id}`),
    ]) {
      const error = expectScimError(refused, 403);
      assert.match(error.detail, /holds a root role that grants ADMIN: only an Admin changes them, in Vexil/);
    }
    assert.deepEqual(scimBody<Resource>(await scim.get(`/scim/v2/Users/${person.id}`), 200), before);

    const groupName = uniqueName('admins');
    const group = scimBody<Resource>(await scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: groupName }), 201);
    expectStatus(await ctx.admin.put(`/api/admin/groups/${group.id}`, { name: groupName, rootRole: 1 }), 200);
    const newcomer = scimBody<Resource>(await scim.post('/scim/v2/Users', { schemas: [USER], userName: uniqueName('newcomer') }), 201);
    const groupSince = await lastEventId(ctx);
    const join = { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: newcomer.id }] }] };
    assert.match(expectScimError(await scim.patch(`/scim/v2/Groups/${group.id}`, join), 403).detail, /grants ADMIN/);
    expectScimError(await scim.delete(`/scim/v2/Groups/${group.id}`), 403);
    assert.deepEqual(await eventsSince(ctx, groupSince), []);
    assert.deepEqual(
      (await eventsSince(ctx, since)).map((event) => event.type).filter((type) => type.startsWith('user-')),
      ['user-created'],
    );
  });

  test('a custom root role holding ADMIN keeps SCIM out as the built-in Admin does: by what the role allows, not its name', async () => {
    const scim = await provisioner();
    const role = await ctx.admin.post('/api/admin/roles', {
      name: uniqueName('super'),
      description: 'Everything',
      type: 'root-custom',
      permissions: [{ name: 'ADMIN' }],
    });
    expectStatus(role, 201);
    const roleId = (role.json() as { id: number }).id;
    const groupName = uniqueName('custom-admins');
    const group = scimBody<Resource>(await scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: groupName }), 201);
    expectStatus(await ctx.admin.put(`/api/admin/groups/${group.id}`, { name: groupName, rootRole: roleId }), 200);
    const newcomer = scimBody<Resource>(await scim.post('/scim/v2/Users', { schemas: [USER], userName: uniqueName('newcomer') }), 201);
    const since = await lastEventId(ctx);
    const join = { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: newcomer.id }] }] };
    assert.match(expectScimError(await scim.patch(`/scim/v2/Groups/${group.id}`, join), 403).detail, /grants ADMIN/);

    const userName = uniqueName('custom-admin');
    const person = scimBody<Resource>(await scim.post('/scim/v2/Users', { schemas: [USER], userName }), 201);
    expectStatus(await ctx.admin.put(`/api/admin/user-admin/${person.id}`, { rootRole: roleId }), 200);
    const deactivate = { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] };
    assert.match(expectScimError(await scim.patch(`/scim/v2/Users/${person.id}`, deactivate), 403).detail, /grants ADMIN/);
    assert.deepEqual(
      (await eventsSince(ctx, since)).map((event) => event.type).filter((type) => type !== 'user-created' && type !== 'user-updated'),
      [],
    );
  });
});
