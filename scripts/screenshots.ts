// Takes the screenshots in docs/screenshots (`npm run screenshots`): starts Vexil on a throw-away embedded
// database, fills it through the API as a team would, and photographs the main pages in Debian's Chromium.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { InMemStorageProvider, Unleash } from 'unleash-client';

const root = join(import.meta.dirname, '..');
const OUT = join(root, 'docs/screenshots');
const TOKEN = '*:*.screenshots-admin-token-0123456789';
const PASSWORD = 'Screenshots-4-Docs!';

async function startVexil(dataDir: string): Promise<{ baseUrl: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/main.ts')], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      INIT_ADMIN_API_TOKENS: TOKEN,
      INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true',
      INTEGRATIONS_MAX_ATTEMPTS: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /Server listening at (http:\/\/\S+)"/.exec(output);
      if (listening) resolve(listening[1]!);
    });
    child.on('exit', (code) => reject(new Error(`Vexil exited with ${code}`)));
  });
  return { baseUrl, stop: () => child.kill('SIGTERM') };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'vexil-screenshots-'));
  // A webhook receiver that is down for the first deliveries, so the delivery log shows a failure.
  let receiverUp = false;
  const receiver = createServer((_request, response) => response.writeHead(receiverUp ? 200 : 503).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const vexil = await startVexil(dataDir);
  const call = async (method: string, path: string, body?: unknown, auth: string = TOKEN) => {
    const response = await fetch(`${vexil.baseUrl}${path}`, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 || response.headers.get('content-length') === '0' ? undefined : response.json().catch(() => undefined);
  };
  try {
    for (const [username, rootRole] of [
      ['maria', 'Admin'],
      ['sam', 'Editor'],
    ]) {
      await call('POST', '/api/admin/user-admin', {
        username,
        name: username === 'maria' ? 'Maria Jones' : 'Sam Lee',
        rootRole,
        password: PASSWORD,
      });
    }
    await call('POST', '/api/admin/addons', {
      provider: 'webhook',
      description: 'Deploy bot',
      enabled: true,
      parameters: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/vexil` },
      events: [],
    });
    await call('POST', '/api/admin/tag-types', { name: 'team', description: 'The team that owns the flag' });
    await call('POST', '/api/admin/segments', {
      name: 'beta-testers',
      description: 'Users in the beta programme',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice', 'bob'] }],
    });
    await call('POST', '/api/admin/projects', { id: 'checkout', name: 'Checkout', description: 'Cart, payment and order confirmation' });
    await call('POST', '/api/admin/projects', { id: 'search', name: 'Search' });
    const flags: Array<[string, string, string, string]> = [
      ['checkout', 'one-page-checkout', 'release', 'The checkout on a single page'],
      ['checkout', 'apple-pay', 'release', 'Apple Pay at the payment step'],
      ['checkout', 'free-shipping-banner', 'experiment', 'Which banner sells more'],
      ['checkout', 'payment-kill-switch', 'kill-switch', 'Turns the new payment provider off'],
      ['search', 'semantic-search', 'experiment', 'Vector search for product queries'],
      ['search', 'search-autocomplete', 'release', 'Suggestions while typing'],
    ];
    for (const [project, name, type, description] of flags) {
      await call('POST', `/api/admin/projects/${project}/features`, { name, type, description });
      await call('POST', `/api/admin/features/${name}/tags`, { type: 'team', value: project === 'checkout' ? 'payments' : 'discovery' });
    }
    const strategies = (project: string, flag: string, environment: string) =>
      `/api/admin/projects/${project}/features/${flag}/environments/${environment}/strategies`;
    await call('POST', strategies('checkout', 'one-page-checkout', 'development'), { name: 'default' });
    await call('POST', strategies('checkout', 'one-page-checkout', 'production'), {
      name: 'flexibleRollout',
      parameters: { rollout: '25', stickiness: 'default', groupId: 'one-page-checkout' },
      constraints: [{ contextName: 'appName', operator: 'IN', values: ['web-shop'] }],
      segments: [1],
    });
    await call('PUT', '/api/admin/projects/checkout/features/one-page-checkout/environments/production/variants', [
      { name: 'compact', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'compact' } },
      { name: 'spacious', weight: 500, weightType: 'variable', stickiness: 'default' },
    ]);
    for (const [project, flag, environment] of [
      ['checkout', 'one-page-checkout', 'development'],
      ['checkout', 'one-page-checkout', 'production'],
      ['checkout', 'apple-pay', 'development'],
      ['search', 'search-autocomplete', 'production'],
    ] as const) {
      await call('POST', `/api/admin/projects/${project}/features/${flag}/environments/${environment}/on`);
    }
    receiverUp = true;
    await call('PUT', '/api/admin/projects/checkout/environments/production/change-requests/config', {
      changeRequestsEnabled: true,
      requiredApprovals: 1,
    });

    // Sam proposes a change in protected production through the UI's own API calls, as a session.
    const login = await fetch(`${vexil.baseUrl}/auth/simple/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'sam', password: PASSWORD }),
    });
    const samCookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const asSam = (method: string, path: string, body?: unknown) =>
      fetch(`${vexil.baseUrl}${path}`, {
        method,
        headers: { cookie: samCookie, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (response) => {
        if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
        return JSON.parse((await response.text()) || '{}') as { id: number };
      });
    const changeRequest = await asSam('POST', '/api/admin/projects/checkout/environments/production/change-requests', {
      feature: 'apple-pay',
      action: 'updateEnabled',
      payload: { enabled: true },
    });
    await asSam('POST', '/api/admin/projects/checkout/environments/production/change-requests', {
      feature: 'apple-pay',
      action: 'addStrategy',
      payload: {
        name: 'flexibleRollout',
        parameters: { rollout: '10', stickiness: 'default', groupId: 'apple-pay' },
        constraints: [{ contextName: 'userId', operator: 'STR_ENDS_WITH', values: ['@example.com'] }],
      },
    });
    await asSam('PUT', `/api/admin/projects/checkout/change-requests/${changeRequest.id}/title`, {
      title: 'Launch Apple Pay to 10% of staff',
    });
    await asSam('PUT', `/api/admin/projects/checkout/change-requests/${changeRequest.id}/state`, { state: 'In review' });

    // Teams and automation: a group mapped from the identity provider, working in checkout, and a pipeline's account.
    const users = (await call('GET', '/api/admin/user-admin')) as { users: Array<{ id: number; username: string }> };
    const sam = users.users.find((user) => user.username === 'sam')!;
    const payments = (await call('POST', '/api/admin/groups', {
      name: 'Payments team',
      description: 'Everyone who ships the checkout',
      mappingsSSO: ['payments', 'payments-oncall'],
      users: [{ user: { id: sam.id } }],
    })) as { id: number };
    await call('POST', '/api/admin/groups', { name: 'Platform admins', mappingsSSO: ['platform'], rootRole: 1 });
    await call('POST', '/api/admin/projects/checkout/access', { roles: [5], groups: [payments.id] });
    const pipeline = (await call('POST', '/api/admin/service-account', {
      username: 'ci-pipeline',
      name: 'Deploy pipeline',
      rootRole: 2,
    })) as {
      id: number;
    };
    const pipelineToken = (await call('POST', `/api/admin/service-account/${pipeline.id}/token`, {
      description: 'GitHub Actions',
      expiresAt: new Date(Date.now() + 90 * 86_400_000).toISOString(),
    })) as { secret: string };
    await call('GET', '/api/admin/projects', undefined, pipelineToken.secret);
    await call('POST', '/api/admin/projects/checkout/access', { roles: [4], users: [pipeline.id] });
    // A rollout in steps on search-autocomplete, guarded by an impact metric, and a custom strategy.
    const template = (await call('POST', '/api/admin/release-plan-templates', {
      name: 'Careful rollout',
      description: 'Staff, a tenth, half, everyone',
      milestones: [
        {
          name: 'Staff',
          strategies: [{ name: 'userWithId', parameters: { userIds: 'maria,sam' } }],
          transitionCondition: { intervalMinutes: 60 },
        },
        ...[10, 50, 100].map((rollout, index) => ({
          name: rollout === 100 ? 'Everyone' : `${rollout}%`,
          strategies: [
            { name: 'flexibleRollout', parameters: { rollout: String(rollout), stickiness: 'default', groupId: 'search-autocomplete' } },
          ],
          transitionCondition: index < 2 ? { intervalMinutes: 240 } : null,
        })),
      ],
    })) as { id: string };
    const plansPath = '/api/admin/projects/search/features/search-autocomplete/environments/development/release-plans';
    const plan = (await call('POST', plansPath, { templateId: template.id })) as { id: string; milestones: Array<{ id: string }> };
    await call('PUT', `${plansPath}/${plan.id}/safeguards`, {
      impactMetric: { metricName: 'search_errors', aggregationMode: 'count', windowMinutes: 5 },
      triggerCondition: { operator: '>', threshold: 50 },
      action: { type: 'pauseAndRollback' },
    });
    await call('POST', `${plansPath}/${plan.id}/milestones/${plan.milestones[0]!.id}/start`);
    await call('POST', `${plansPath}/${plan.id}/milestones/${plan.milestones[1]!.id}/start`);
    await call('POST', '/api/admin/projects/search/features/search-autocomplete/environments/development/on');
    await call('POST', '/api/admin/strategies', {
      name: 'tenant',
      description: 'Tenants on the new billing',
      parameters: [
        { name: 'tenants', type: 'list', description: 'Tenant ids', required: true },
        { name: 'share', type: 'percentage', description: 'Of their users', required: false },
      ],
    });
    // A real SDK registers and reports usage, variants and an impact metric, as an application would.
    const sdkToken = (
      (await call('POST', '/api/admin/api-tokens', {
        tokenName: 'web-shop',
        type: 'client',
        environment: 'development',
        projects: ['*'],
      })) as {
        secret: string;
      }
    ).secret;
    const sdk = new Unleash({
      url: `${vexil.baseUrl}/api/`,
      appName: 'web-shop',
      instanceId: 'web-shop-1',
      customHeaders: { Authorization: sdkToken },
      metricsInterval: 3_600_000,
      storageProvider: new InMemStorageProvider(),
    });
    await new Promise((resolve) => sdk.once('synchronized', resolve));
    for (let i = 0; i < 400; i++) {
      sdk.isEnabled('search-autocomplete', { userId: `user-${i}` });
      sdk.getVariant('one-page-checkout', { userId: `user-${i}` });
      if (i % 3 === 0) sdk.isEnabled('apple-pay', { userId: `user-${i}` });
    }
    sdk.isEnabled('search-autocomplet');
    sdk.impactMetrics.defineCounter('search_errors', 'Failed searches');
    sdk.impactMetrics.incrementCounter('search_errors', 12);
    await sdk.flushMetrics();
    sdk.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
    await page.goto(`${vexil.baseUrl}/login`);
    await page.screenshot({ path: join(OUT, 'sign-in.png') });
    await page.getByLabel('Username or email').fill('maria');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/flags/);
    const shoot = async (path: string, name: string, prepare?: (page: Page) => Promise<void>, fullPage = true) => {
      await page.goto(`${vexil.baseUrl}${path}`);
      await page.waitForLoadState('networkidle');
      await prepare?.(page);
      await page.screenshot({ path: join(OUT, `${name}.png`), fullPage });
      process.stdout.write(`docs/screenshots/${name}.png\n`);
    };
    await shoot('/flags?project=IS:checkout,search&sortBy=name', 'flags');
    await shoot('/projects/checkout/flags/one-page-checkout', 'flag');
    await shoot(
      '/events',
      'event-log',
      async (events) => {
        await events.getByTestId('event').filter({ hasText: 'Strategy added' }).first().getByText('What changed').click();
      },
      false,
    );
    await shoot(`/projects/checkout/change-requests/${changeRequest.id}`, 'change-request');
    await shoot(
      '/integrations/1',
      'integration',
      async (integration) => {
        await integration.getByTestId('delivery').first().waitFor();
      },
      false,
    );
    await shoot('/admin/tokens', 'api-tokens');
    await shoot('/projects/checkout', 'project');
    await shoot('/change-requests', 'change-requests');
    await shoot('/integrations', 'integrations', async (integrations) => {
      // A new webhook's form, with its event types found by a word.
      await integrations.getByLabel('Provider').selectOption('webhook');
      const form = integrations.getByRole('form', { name: 'Webhook configuration' });
      await form.getByText('Events delivered: all').click();
      await form.getByLabel('Find event types').fill('strategy');
    });
    await shoot('/admin/users', 'users', async (users) => {
      await users
        .getByRole('table', { name: 'Users' })
        .locator('tr', { hasText: 'sam' })
        .getByRole('button', { name: 'Set password' })
        .click();
      const form = users.getByRole('form', { name: 'Password of sam' });
      await form.getByLabel('New password for sam').fill('password123');
      await form.getByRole('button', { name: 'Set password' }).click();
      await form.locator('.field-error').waitFor();
    });
    // The development configuration of a project, previewed for import into its protected production.
    const exportFile = join(dataDir, 'checkout-development.json');
    await writeFile(
      exportFile,
      JSON.stringify(await call('POST', '/api/admin/features-batch/export', { environment: 'development', project: 'checkout' })),
    );
    await shoot('/flags?project=IS:checkout&sortBy=name', 'flags-import', async (flags) => {
      await flags.getByRole('button', { name: 'Export / import' }).click();
      const panel = flags.getByRole('region', { name: 'Import' });
      await panel.getByLabel('Project to import into').selectOption('checkout');
      await panel.getByLabel('Environment to import into').selectOption('production');
      await panel.getByLabel('Export file').setInputFiles(exportFile);
      await panel.getByTestId('import-preview').waitFor();
    });
    await shoot('/applications', 'applications');
    await shoot('/applications/web-shop', 'application');
    await shoot('/projects/search/flags/search-autocomplete', 'flag-rollout', async (flag) => {
      await flag.getByRole('region', { name: 'Rollout in development' }).scrollIntoViewIfNeeded();
    });
    await shoot('/admin/release-templates', 'release-templates');
    await shoot('/admin/strategies', 'strategies');
    await shoot('/playground', 'playground', async (playground) => {
      const form = playground.getByRole('form', { name: 'Playground' });
      await form.getByLabel('userId').fill('user-7');
      await form.getByLabel('appName').fill('web-shop');
      await form.getByRole('button', { name: 'Evaluate' }).click();
      await playground.getByTestId('result-one-page-checkout').getByRole('button', { name: 'Why' }).click();
    });
    await shoot('/connect?project=checkout&flag=apple-pay', 'connect', async (connect) => {
      await connect.getByRole('button', { name: /Create a client token/ }).click();
      await connect.getByTestId('secret').waitFor();
    });
    await shoot('/admin/sdk-settings', 'sdk-settings');
    await shoot('/admin/groups', 'groups');
    await shoot('/projects/checkout/access', 'project-access');
    await shoot('/admin/service-accounts', 'service-accounts', async (accounts) => {
      await accounts.getByRole('button', { name: 'Tokens' }).click();
      await accounts.getByRole('table', { name: 'Tokens of ci-pipeline' }).waitFor();
    });
    await shoot('/admin/segments', 'segments');
    await shoot('/admin/environments', 'environments');
    await shoot('/admin/context-fields', 'context-fields');
    await shoot('/admin/tag-types', 'tag-types');
    await shoot('/admin/projects', 'projects');
    await shoot('/profile', 'profile');
    await page.setViewportSize({ width: 800, height: 900 });
    await shoot('/flags?sortBy=name', 'flags-narrow', undefined, false);
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await shoot('/projects/checkout/flags/one-page-checkout', 'flag-dark', undefined, false);
    await browser.close();
  } finally {
    vexil.stop();
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
