import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession, uniqueName } from '../helpers/fixtures.js';
import { STRONG_PASSWORD, useTestApp } from '../helpers/test-app.js';

// Invite links (Unleash's public sign-up tokens): an Admin makes one, whoever follows it makes a Viewer account
// until it expires or is turned off. The secret is shown once and never stored.

const ctx = useTestApp();
const DAY = 86_400_000;
const TOKENS = '/api/admin/invite-link/tokens';

interface Link {
  id: number;
  name: string;
  enabled: boolean;
  expiresAt: string;
  createdBy: string;
  role: { id: number; name: string; type: string };
  users: Array<{ id: number; email: string }>;
  secret?: string;
  url?: string;
}

async function makeLink(name = uniqueName('invite'), days = 7): Promise<Link & { secret: string; url: string }> {
  const created = await ctx.admin.post(TOKENS, { name, expiresAt: new Date(ctx.clock.now().getTime() + days * DAY).toISOString() });
  expectStatus(created, 201);
  return created.json() as Link & { secret: string; url: string };
}

const signUp = (secret: string, body: Record<string, unknown>) => ctx.as().post(`/invite/${secret}/signup`, body);

describe('invite links', () => {
  test('made once with its secret; listed and read without it; the event holds no secret', async () => {
    const before = await lastEventId(ctx);
    const link = await makeLink('Join the flag team');
    assert.match(link.secret, /^[A-Za-z0-9_-]{20,}$/);
    assert.equal(link.url, `${ctx.config.baseUrl}/invite/${link.secret}`);
    assert.deepEqual(
      [link.name, link.enabled, link.createdBy, link.role, link.users],
      ['Join the flag team', true, 'admin-token', { id: 3, name: 'Viewer', type: 'root' }, []],
    );
    const event = onlyEvent(await eventsSince(ctx, before), 'public-signup-token-created');
    assert.ok(!JSON.stringify(event).includes(link.secret), 'no secret in the event');

    const listed = (await getOk<{ tokens: Link[] }>(ctx.admin, TOKENS)).tokens.find((token) => token.id === link.id);
    const { secret: _, url: __, ...shown } = link;
    assert.deepEqual(listed, shown);
    assert.deepEqual(await getOk(ctx.admin, `${TOKENS}/${link.id}`), shown);
    assert.deepEqual(await getOk(ctx.admin, `${TOKENS}/${link.secret}`), shown);
    expectError(await ctx.admin.get(`${TOKENS}/no-such-secret`), 404, 'NotFoundError');
  });

  test('whoever follows it makes a Viewer account, signs in, and is listed on the link', async () => {
    const link = await makeLink();
    expectStatus(await ctx.as().get(`/invite/${link.secret}/validate`), 200);
    const email = `${uniqueName('new')}@example.com`;
    const before = await lastEventId(ctx);
    const created = await signUp(link.secret, { email, name: 'New Person', password: STRONG_PASSWORD });
    expectStatus(created, 200);
    const user = created.json() as { id: number; email: string; rootRole: number; name: string };
    assert.deepEqual([user.email, user.name, user.rootRole], [email, 'New Person', 3]);
    assert.deepEqual(
      (await eventsSince(ctx, before)).map((event) => event.type),
      ['user-created', 'public-signup-token-user-added'],
    );
    expectStatus(await ctx.as().post('/auth/simple/login', { username: email, password: STRONG_PASSWORD }), 200);
    const read = await getOk<Link>(ctx.admin, `${TOKENS}/${link.id}`);
    assert.deepEqual(
      read.users.map((person) => [person.id, person.email]),
      [[user.id, email]],
    );
    // The same email again is a conflict, and makes nothing.
    await expectRefused(ctx, () => signUp(link.secret, { email, name: 'Again', password: STRONG_PASSWORD }), {
      status: 409,
      name: 'NameExistsError',
    });
  });

  test('a link turned off or expired makes no account', async () => {
    const off = await makeLink();
    const before = await lastEventId(ctx);
    const updated = await ctx.admin.put(`${TOKENS}/${off.secret}`, { enabled: false });
    expectStatus(updated, 200);
    assert.equal((updated.json() as Link).enabled, false);
    onlyEvent(await eventsSince(ctx, before), 'public-signup-token-updated');
    expectError(await ctx.as().get(`/invite/${off.secret}/validate`), 400, 'BadDataError');
    await expectRefused(ctx, () => signUp(off.secret, { email: 'off@example.com', name: 'Off', password: STRONG_PASSWORD }), {
      status: 400,
      name: 'BadDataError',
    });

    const expiring = await makeLink(uniqueName('short'), 1);
    ctx.clock.advance(DAY + 1000);
    try {
      expectError(await ctx.as().get(`/invite/${expiring.secret}/validate`), 400, 'BadDataError');
      assert.equal((await getOk<Link>(ctx.admin, `${TOKENS}/${expiring.id}`)).enabled, false, 'an expired link shows as off');
      // Given a new expiry, it works again.
      const later = new Date(ctx.clock.now().getTime() + DAY).toISOString();
      expectStatus(await ctx.admin.put(`${TOKENS}/${expiring.id}`, { expiresAt: later }), 200);
      expectStatus(await ctx.as().get(`/invite/${expiring.secret}/validate`), 200);
    } finally {
      ctx.clock.set(new Date());
    }
    expectError(await ctx.as().get('/invite/never-made/validate'), 400, 'BadDataError');
  });

  test('bad input is a 400 at its field; only an Admin manages links', async () => {
    const past = new Date(Date.now() - DAY).toISOString();
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', expiresAt: past }, '/body/expiresAt'],
      [{ name: '', expiresAt: new Date(Date.now() + DAY).toISOString() }, '/body/name'],
      [{ name: 'x', expiresAt: 'tomorrow' }, '/body/expiresAt'],
      [{ name: 'x' }, '/body/expiresAt'],
      [{ name: 'x', expiresAt: new Date(Date.now() + DAY).toISOString(), role: 1 }, '/body/role'],
    ];
    for (const [body, path] of cases)
      await expectRefused(ctx, () => ctx.admin.post(TOKENS, body), { status: 400, name: 'BadDataError', path });
    const link = await makeLink();
    for (const [body, path] of [
      [{ email: 'not-an-email', name: 'A', password: STRONG_PASSWORD }, '/body/email'],
      [{ email: 'weak@example.com', name: 'A', password: 'short' }, '/body/password'],
      [{ email: 'extra@example.com', name: 'A', password: STRONG_PASSWORD, rootRole: 1 }, '/body/rootRole'],
    ] as const) {
      await expectRefused(ctx, () => signUp(link.secret, body), { status: 400, name: 'BadDataError', path });
    }
    const editor = ctx.withCookie((await createUserSession(ctx, 'Editor')).cookie);
    await expectRefused(ctx, () => editor.get(TOKENS), { status: 403, name: 'PermissionError' });
    await expectRefused(ctx, () => editor.post(TOKENS, { name: 'mine', expiresAt: new Date(Date.now() + DAY).toISOString() }), {
      status: 403,
      name: 'PermissionError',
    });
    await expectRefused(ctx, () => editor.put(`${TOKENS}/${link.id}`, { enabled: false }), { status: 403, name: 'PermissionError' });
  });

  test('at most 20 links can be used at once; turning one off makes room', async () => {
    const usable = async () => (await getOk<{ tokens: Link[] }>(ctx.admin, TOKENS)).tokens.filter((token) => token.enabled);
    const made: Link[] = [];
    for (let count = (await usable()).length; count < 20; count += 1) made.push(await makeLink());
    const body = { name: 'one too many', expiresAt: new Date(Date.now() + DAY).toISOString() };
    const refused = await expectRefused(ctx, () => ctx.admin.post(TOKENS, body), { status: 409, name: 'ConflictError' }, usable);
    assert.match(refused.message, /20 invite links can already be used/);
    const off = (await usable())[0]!;
    expectStatus(await ctx.admin.put(`${TOKENS}/${off.id}`, { enabled: false }), 200);
    expectStatus(await ctx.admin.post(TOKENS, body), 201);
    assert.equal((await usable()).length, 20);
  });
});
