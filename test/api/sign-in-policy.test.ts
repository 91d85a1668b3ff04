import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectError, expectStatus, getOk } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { loadConfig } from '../../src/config.js';

const SETTINGS = '/api/admin/auth/oidc/settings';

let ctx: TestApp;
before(async () => {
  ctx = await startTestApp();
});
after(() => ctx.close());

describe('the sign-in policy (who the identity provider lets in)', () => {
  test('starts as the environment says, and an Admin changes it, recorded as setting-updated', async () => {
    assert.deepEqual(await getOk(ctx.admin, SETTINGS), {
      enabled: false,
      autoCreate: true,
      defaultRootRole: 'Viewer',
      emailDomains: '',
    });
    const since = await lastEventId(ctx);
    const changed = await ctx.admin.post(SETTINGS, {
      autoCreate: false,
      defaultRootRole: 'Editor',
      emailDomains: ' Acme.example,corp.acme.example ',
    });
    expectStatus(changed, 200);
    const expected = { enabled: false, autoCreate: false, defaultRootRole: 'Editor', emailDomains: 'acme.example,corp.acme.example' };
    assert.deepEqual(changed.json(), expected);
    assert.deepEqual(await getOk(ctx.admin, SETTINGS), expected);
    const [event] = await eventsSince(ctx, since);
    assert.deepEqual(
      [event!.type, event!.data, event!.preData],
      [
        'setting-updated',
        { id: 'oidcSettings', autoCreate: false, defaultRootRole: 'Editor', emailDomains: ['acme.example', 'corp.acme.example'] },
        { id: 'oidcSettings', autoCreate: true, defaultRootRole: 'Viewer', emailDomains: [] },
      ],
    );

    // What is not given stays; an empty list of domains lets any in again.
    const partly = await ctx.admin.post(SETTINGS, { emailDomains: '' });
    assert.deepEqual(partly.json(), { ...expected, emailDomains: '' });
  });

  test('bad settings are refused with a 400 naming the field, and nothing changes; only Admins read or change them', async () => {
    const before = await getOk(ctx.admin, SETTINGS);
    const since = await lastEventId(ctx);
    const refusals: Array<[unknown, RegExp]> = [
      [{ defaultRootRole: 'Owner' }, /Admin, Editor or Viewer/],
      [{ emailDomains: 'acme.example, not a domain' }, /"not a domain" is not an email domain/],
      [{ emailDomains: '@acme.example' }, /"@acme.example" is not an email domain/],
      [{ emailDomains: Array.from({ length: 101 }, (_, index) => `d${index}.example`).join(',') }, /At most 100 email domains/],
      [{ autoCreate: 'yes' }, /autoCreate/],
      [{ enabled: true }, /enabled/],
    ];
    for (const [body, message] of refusals) {
      const refused = await ctx.admin.post(SETTINGS, body);
      expectError(refused, 400, 'BadDataError');
      const { message: said, details = [] } = refused.json() as { message: string; details?: Array<{ message: string; path?: string }> };
      assert.match([said, ...details.flatMap((detail) => [detail.message, detail.path ?? ''])].join(' '), message);
    }
    assert.deepEqual(await getOk(ctx.admin, SETTINGS), before);
    assert.deepEqual(await eventsSince(ctx, since), []);

    const editor = await createUserSession(ctx, 'Editor');
    expectError(await ctx.withCookie(editor.cookie).get(SETTINGS), 403, 'PermissionError');
    expectError(await ctx.withCookie(editor.cookie).post(SETTINGS, { autoCreate: true }), 403, 'PermissionError');
  });

  test('each provider has a policy of its own: SAML starts as SAML_* says and changes without touching OpenID Connect', async () => {
    // Without SAML_METADATA_URL the SAML_* starting policy is refused at start, naming what is missing.
    assert.throws(() => loadConfig({ SAML_DEFAULT_ROLE: 'Editor' }), /SAML_DEFAULT_ROLE is set but SAML_METADATA_URL is not/);
    const samlStarting = loadConfig({
      SAML_METADATA_URL: 'http://127.0.0.1:1/metadata',
      SAML_DEFAULT_ROLE: 'editor',
      SAML_EMAIL_DOMAINS: 'Corp.example',
      SAML_AUTO_CREATE: 'false',
    }).saml!;
    assert.deepEqual([samlStarting.defaultRole, samlStarting.emailDomains, samlStarting.autoCreate], ['Editor', ['corp.example'], false]);

    const SAML = '/api/admin/auth/saml/settings';
    const oidcBefore = await getOk(ctx.admin, SETTINGS);
    assert.deepEqual(await getOk(ctx.admin, SAML), { enabled: false, autoCreate: true, defaultRootRole: 'Viewer', emailDomains: '' });
    const since = await lastEventId(ctx);
    const changed = await ctx.admin.post(SAML, { emailDomains: 'corp.example', defaultRootRole: 'Editor' });
    assert.deepEqual(changed.json(), { enabled: false, autoCreate: true, defaultRootRole: 'Editor', emailDomains: 'corp.example' });
    assert.deepEqual(await getOk(ctx.admin, SETTINGS), oidcBefore);
    const [event] = await eventsSince(ctx, since);
    assert.equal((event!.data as { id: string }).id, 'samlSettings');
    expectError(await ctx.admin.post(SAML, { defaultRootRole: 'Owner' }), 400, 'BadDataError');
  });
});
