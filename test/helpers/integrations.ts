import { after, before } from 'node:test';
import { expectStatus } from './assertions.js';
import { type HttpReceiver, startHttpReceiver } from './http-receiver.js';
import { startTestApp, type TestApp } from './test-app.js';

/** A webhook integration through the admin API, for the projects and events given (`feature-created` in one project by default); returns its id. */
export async function createWebhook(
  ctx: Pick<TestApp, 'admin'>,
  url: string,
  filters: { projects?: string[]; events?: string[] } = {},
): Promise<number> {
  const response = await ctx.admin.post('/api/admin/addons', {
    provider: 'webhook',
    enabled: true,
    events: filters.events ?? ['feature-created'],
    ...(filters.projects ? { projects: filters.projects } : {}),
    parameters: { url },
  });
  expectStatus(response, 201);
  return (response.json() as { id: number }).id;
}

/**
 * The app a test file shares, with integrations allowed to reach this machine, and a local HTTP receiver for
 * them; both are filled in when the file's tests start and closed after them.
 */
export function useAppWithReceiver(env: Record<string, string> = {}): { ctx: TestApp; receiver: HttpReceiver } {
  const shared = { ctx: {} as TestApp, receiver: {} as HttpReceiver };
  before(async () => {
    Object.assign(shared.ctx, await startTestApp({ env: { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true', ...env } }));
    Object.assign(shared.receiver, await startHttpReceiver());
  });
  after(async () => {
    await shared.receiver.close();
    await shared.ctx.close();
  });
  return shared;
}
