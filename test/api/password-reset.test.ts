import assert from 'node:assert/strict';
import { pruneResetLinks } from '../../src/domain/users/password-reset.js';
import { after, before, describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk } from '../helpers/assertions.js';
import { eventually } from '../helpers/eventually.js';
import { uniqueName } from '../helpers/fixtures.js';
import { type ReceivedMail, startSmtpReceiver } from '../helpers/smtp-receiver.js';
import { STRONG_PASSWORD, startTestApp, type TestApp } from '../helpers/test-app.js';

// Choosing a new password through a reset link: made by an Admin to hand over, or emailed through a real SMTP server
// (smtp-server from npm) to whoever asks on the sign-in page, a day and once, without telling who has an account.

const NEW_PASSWORD = 'Another-Strong-Pass-42!';

describe('password reset links', () => {
  let ctx: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
  before(async () => {
    smtp = await startSmtpReceiver();
    ctx = await startTestApp({
      env: {
        BASE_URL: 'https://flags.example.com',
        EMAIL_HOST: '127.0.0.1',
        EMAIL_PORT: String(smtp.port),
        EMAIL_SENDER: 'flags@example.com',
      },
    });
  });
  after(async () => {
    await ctx?.close();
    await smtp?.close();
  });

  async function person(): Promise<{ id: number; email: string }> {
    const email = `${uniqueName('p')}@example.com`;
    const created = await ctx.admin.post('/api/admin/user-admin', { email, name: 'Pat', rootRole: 'Editor', password: STRONG_PASSWORD });
    expectStatus(created, 201);
    return { id: (created.json() as { id: number }).id, email };
  }
  const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
  const signsIn = async (email: string, password: string) =>
    (await ctx.as().post('/auth/simple/login', { username: email, password })).statusCode;

  test("an Admin's link shows whom it is for, sets the password once, and ends the person's sessions and tokens", async () => {
    const { id, email } = await person();
    const session = await ctx.as().post('/auth/simple/login', { username: email, password: STRONG_PASSWORD });
    const cookie = `vexil-session=${session.cookies.find((c) => c.name === 'vexil-session')!.value}`;
    // What someone who once held the session could have minted from it.
    const pat = await ctx.withCookie(cookie).post('/api/admin/user/tokens', {
      description: 'script',
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expectStatus(pat, 201);
    const patSecret = (pat.json() as { secret: string }).secret;
    expectStatus(await ctx.as(patSecret).get('/api/admin/user'), 200);
    const response = await ctx.admin.post('/api/admin/user-admin/reset-password', { id: email });
    expectStatus(response, 200);
    const made = response.json() as { resetPasswordUrl: string };
    assert.match(made.resetPasswordUrl, /^https:\/\/flags\.example\.com\/reset-password\?token=/);
    const token = tokenOf(made.resetPasswordUrl);
    const user = await getOk<{ id: number; email: string; role: { name: string } }>(
      ctx.as(),
      `/auth/reset/validate?token=${encodeURIComponent(token)}`,
    );
    assert.deepEqual([user.id, user.email, user.role.name], [id, email, 'Editor']);

    expectError(await ctx.as().post('/auth/reset/password', { token, password: 'weak' }), 400, 'BadDataError');
    expectStatus(await ctx.as().post('/auth/reset/password', { token, password: NEW_PASSWORD }), 200);
    assert.equal(await signsIn(email, NEW_PASSWORD), 200);
    assert.equal(await signsIn(email, STRONG_PASSWORD), 401);
    expectError(await ctx.withCookie(cookie).get('/api/admin/user'), 401, 'AuthenticationRequired');
    expectError(await ctx.as(patSecret).get('/api/admin/user'), 401, 'UnauthorizedError');
    // Once only.
    expectError(await ctx.as().post('/auth/reset/password', { token, password: `${NEW_PASSWORD}x` }), 401, 'InvalidTokenError');
    expectError(await ctx.as().get(`/auth/reset/validate?token=${encodeURIComponent(token)}`), 401, 'InvalidTokenError');
  });

  test('a link expires after a day, and a newer link replaces an older one', async () => {
    const { email } = await person();
    const first = tokenOf((await ctx.admin.post('/api/admin/user-admin/reset-password', { id: email })).json().resetPasswordUrl);
    const second = tokenOf((await ctx.admin.post('/api/admin/user-admin/reset-password', { id: email })).json().resetPasswordUrl);
    expectError(await ctx.as().get(`/auth/reset/validate?token=${encodeURIComponent(first)}`), 401, 'InvalidTokenError');
    const start = ctx.clock.now();
    try {
      ctx.clock.advance(24 * 3_600_000 + 1000);
      expectError(await ctx.as().post('/auth/reset/password', { token: second, password: NEW_PASSWORD }), 401, 'InvalidTokenError');
    } finally {
      ctx.clock.set(start);
    }
    assert.equal(await signsIn(email, STRONG_PASSWORD), 200);
    await expectRefused(ctx, () => ctx.admin.post('/api/admin/user-admin/reset-password', { id: 'nobody@example.com' }), {
      status: 404,
      name: 'NotFoundError',
    });
    expectError(await ctx.as().post('/auth/reset/password', { token: 'made-up', password: NEW_PASSWORD }), 401, 'InvalidTokenError');
  });

  test('used and expired links are deleted by the hourly clean-up; a link still usable stays and works', async () => {
    const [used, replaced, kept] = [await person(), await person(), await person()];
    const link = async (email: string) =>
      tokenOf(
        ((await ctx.admin.post('/api/admin/user-admin/reset-password', { id: email })).json() as { resetPasswordUrl: string })
          .resetPasswordUrl,
      );
    expectStatus(await ctx.as().post('/auth/reset/password', { token: await link(used.email), password: NEW_PASSWORD }), 200);
    await link(replaced.email);
    await link(replaced.email);
    const usable = await link(kept.email);
    const rowsOf = async () =>
      (await ctx.db.selectFrom('password_reset_tokens').select('user_id').where('user_id', 'in', [used.id, replaced.id, kept.id]).execute())
        .map((row) => row.user_id)
        .sort((a, b) => a - b);
    assert.equal((await rowsOf()).length, 4);
    assert.ok((await pruneResetLinks(ctx.db, ctx.clock.now())) >= 2);
    assert.deepEqual(
      await rowsOf(),
      [replaced.id, kept.id].sort((a, b) => a - b),
    );
    expectStatus(await ctx.as().get(`/auth/reset/validate?token=${encodeURIComponent(usable)}`), 200);
    // A day later the rest have expired, and go too.
    assert.ok((await pruneResetLinks(ctx.db, new Date(ctx.clock.now().getTime() + 24 * 3_600_000 + 1000))) >= 2);
    assert.deepEqual(await rowsOf(), []);
  });

  test('asked for on the sign-in page, the link is emailed; an unknown address is answered the same and sent nothing; three an hour', async () => {
    const { email } = await person();
    const sentBefore = smtp.received.length;
    expectStatus(await ctx.as().post('/auth/reset/password-email', { email: email.toUpperCase() }), 200);
    await eventually(() => smtp.received.length === sentBefore + 1, 5_000);
    const mail = smtp.received.at(-1) as ReceivedMail;
    assert.deepEqual(mail.to, [email]);
    assert.match(mail.raw, /^From: flags@example\.com/m);
    assert.match(mail.raw, /Subject: Reset your Vexil password/);
    const link = /https:\/\/flags\.example\.com\/reset-password\?token=[^\s"<]+/.exec(mail.raw.replace(/=\r?\n/g, ''))?.[0];
    assert.ok(link, mail.raw);
    expectStatus(
      await ctx
        .as()
        .post('/auth/reset/password', { token: decodeURIComponent(tokenOf(link.replace(/=3D/g, '='))), password: NEW_PASSWORD }),
      200,
    );
    assert.equal(await signsIn(email, NEW_PASSWORD), 200);

    expectStatus(await ctx.as().post('/auth/reset/password-email', { email: 'nobody-here@example.com' }), 200);
    for (let attempt = 0; attempt < 5; attempt++) expectStatus(await ctx.as().post('/auth/reset/password-email', { email }), 200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(smtp.received.length, sentBefore + 3, 'three emails an hour to one address, the first included');
    expectError(await ctx.as().post('/auth/reset/password-email', { email: 'not an address' }), 400, 'BadDataError');
  });

  test('the answer comes before the address is looked up or mailed, so a slow relay does not tell who has an account', async () => {
    const { email } = await person();
    const sentBefore = smtp.received.length;
    let release = () => {};
    smtp.hold.until = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      // The relay accepts nothing until released: an answer that waited for it would not come before the bound.
      const answer = await Promise.race([
        ctx.as().post('/auth/reset/password-email', { email }),
        new Promise<'waited for the relay'>((resolve) => setTimeout(() => resolve('waited for the relay'), 5_000)),
      ]);
      assert.notEqual(answer, 'waited for the relay');
      expectStatus(answer as Exclude<typeof answer, string>, 200);
      assert.equal(smtp.received.length, sentBefore, 'answered while the email was still on its way');
    } finally {
      release();
      smtp.hold.until = undefined;
    }
    await eventually(() => smtp.received.length === sentBefore + 1, 5_000);
    assert.deepEqual(smtp.received.at(-1)?.to, [email]);
  });
});
