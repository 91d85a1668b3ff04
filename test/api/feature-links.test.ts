import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectError, expectRefused, expectStatus, getOk, onlyEvent } from '../helpers/assertions.js';
import { eventsSince, lastEventId } from '../helpers/events.js';
import { createUserSession } from '../helpers/fixtures.js';
import { createFlag, createProject, featurePath, projectPath } from '../helpers/projects.js';
import { useTestApp } from '../helpers/test-app.js';

// Links from a flag to what concerns it (Unleash's feature links): listed with the flag, at most ten, http and https
// only, and a link is changed only through the flag it belongs to.

interface Link {
  id: string;
  url: string;
  title: string | null;
  feature: string;
}

describe('feature links', () => {
  const ctx = useTestApp();
  const linksOf = async (project: string, flag: string) => (await getOk<{ links: Link[] }>(ctx.admin, featurePath(project, flag))).links;

  test('added, changed and removed, each recorded; listed with the flag, oldest first', async () => {
    const flag = await createFlag(ctx);
    const before = await lastEventId(ctx);
    expectStatus(
      await ctx.admin.post(`${featurePath('default', flag)}/link`, { url: 'github.com/acme/shop/issues/42', title: ' Ticket ' }),
      204,
    );
    onlyEvent(await eventsSince(ctx, before), 'feature-link-added', {
      data: { url: 'https://github.com/acme/shop/issues/42', title: 'Ticket' },
    });
    expectStatus(await ctx.admin.post(`${featurePath('default', flag)}/link`, { url: 'https://grafana.example.com/d/checkout' }), 204);
    const [ticket, dashboard] = await linksOf('default', flag);
    assert.deepEqual(
      [ticket, dashboard].map((link) => link && { url: link.url, title: link.title, feature: link.feature }),
      [
        { url: 'https://github.com/acme/shop/issues/42', title: 'Ticket', feature: flag },
        { url: 'https://grafana.example.com/d/checkout', title: null, feature: flag },
      ],
    );

    const changedAt = await lastEventId(ctx);
    expectStatus(
      await ctx.admin.put(`${featurePath('default', flag)}/link/${ticket!.id}`, {
        url: 'https://github.com/acme/shop/issues/43',
        title: 'Ticket',
      }),
      204,
    );
    onlyEvent(await eventsSince(ctx, changedAt), 'feature-link-updated', {
      data: { url: 'https://github.com/acme/shop/issues/43', title: 'Ticket' },
      preData: { url: 'https://github.com/acme/shop/issues/42', title: 'Ticket' },
    });
    const removedAt = await lastEventId(ctx);
    expectStatus(await ctx.admin.delete(`${featurePath('default', flag)}/link/${dashboard!.id}`), 204);
    onlyEvent(await eventsSince(ctx, removedAt), 'feature-link-removed', {
      preData: { url: 'https://grafana.example.com/d/checkout', title: null },
    });
    assert.deepEqual(
      (await linksOf('default', flag)).map((link) => link.url),
      ['https://github.com/acme/shop/issues/43'],
    );
  });

  test('bad input is a 400 and nothing is stored: no script or data addresses, ten links at most', async () => {
    const flag = await createFlag(ctx);
    const read = () => linksOf('default', flag);
    for (const [body, path] of [
      [{ url: 'javascript:alert(1)' }, '/body/url'],
      [{ url: 'data:text/html,<script>alert(1)</script>' }, '/body/url'],
      [{ url: 'https://' }, '/body/url'],
      [{ title: 'no address' }, '/body/url'],
      [{ url: 'https://example.com', title: 'x'.repeat(256) }, '/body/title'],
      [{ url: 'https://example.com', extra: 1 }, '/body/extra'],
    ] as const) {
      await expectRefused(
        ctx,
        () => ctx.admin.post(`${featurePath('default', flag)}/link`, body),
        { status: 400, name: 'BadDataError', path },
        read,
      );
    }
    for (let index = 0; index < 10; index++)
      expectStatus(await ctx.admin.post(`${featurePath('default', flag)}/link`, { url: `https://example.com/${index}` }), 204);
    await expectRefused(
      ctx,
      () => ctx.admin.post(`${featurePath('default', flag)}/link`, { url: 'https://example.com/11' }),
      { status: 409, name: 'ConflictError' },
      read,
    );
    await expectRefused(ctx, () => ctx.admin.post(`${featurePath('default', 'no-such-flag')}/link`, { url: 'https://example.com' }), {
      status: 404,
      name: 'NotFoundError',
    });
  });

  test("a link is reached only through its own flag, and only by who may change the flag's project", async () => {
    const theirs = await createProject(ctx);
    const theirFlag = await createFlag(ctx, theirs);
    expectStatus(await ctx.admin.post(`${featurePath(theirs, theirFlag)}/link`, { url: 'https://example.com/secret-plan' }), 204);
    const [link] = await linksOf(theirs, theirFlag);
    const mine = await createFlag(ctx);
    // Unleash finds a link by its id alone; here another flag's path does not reach it.
    await expectRefused(ctx, () => ctx.admin.put(`${featurePath('default', mine)}/link/${link!.id}`, { url: 'https://evil.example.com' }), {
      status: 404,
      name: 'NotFoundError',
    });
    await expectRefused(ctx, () => ctx.admin.delete(`${featurePath('default', mine)}/link/${link!.id}`), {
      status: 404,
      name: 'NotFoundError',
    });
    const viewer = await createUserSession(ctx, 'Viewer');
    await expectRefused(
      ctx,
      () => ctx.withCookie(viewer.cookie).post(`${featurePath(theirs, theirFlag)}/link`, { url: 'https://example.com' }),
      {
        status: 403,
        name: 'PermissionError',
      },
    );
    expectError(await ctx.admin.get(`${projectPath(theirs)}/features/${theirFlag}/link`), 404, 'NotFoundError');
    assert.deepEqual(
      (await linksOf(theirs, theirFlag)).map((entry) => entry.url),
      ['https://example.com/secret-plan'],
    );
  });
});
