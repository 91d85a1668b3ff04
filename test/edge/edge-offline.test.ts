import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ClientFeature } from '../../src/domain/client-features/environment-configuration.js';
import { startTestEdge, type TestEdge } from '../helpers/edge.js';
import { eventually } from '../helpers/eventually.js';
import { startNodeSdk } from '../helpers/sdk-fixtures.js';

/**
 * Offline mode: no upstream, the flags of a bootstrap file (what /api/client/features answers), the tokens given
 * in CLIENT_TOKENS and FRONTEND_TOKENS and no others, the file read again on RELOAD_INTERVAL.
 */
const CLIENT = '*:production.offline-client-secret';
const SHOP_CLIENT = 'shop:production.offline-shop-secret';
const FRONTEND = '*:production.offline-frontend-secret';
let folder: string;
let file: string;
let edge: TestEdge;

const flag = (name: string, project: string, enabled: boolean, rollout = '100'): ClientFeature => ({
  name,
  type: 'release',
  description: null,
  project,
  enabled,
  stale: false,
  impressionData: false,
  strategies: [
    {
      id: `${name}-s`,
      name: 'flexibleRollout',
      sortOrder: 0,
      constraints: [],
      parameters: { rollout, stickiness: 'default', groupId: name },
      variants: [],
    },
  ],
  variants: [],
});

async function writeFlags(features: ClientFeature[]) {
  await writeFile(file, JSON.stringify({ version: 2, features, segments: [] }));
}

before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'vexil-edge-offline-'));
  file = join(folder, 'features.json');
  await writeFlags([flag('checkout', 'shop', true), flag('search', 'default', true, '50'), flag('beta', 'default', false)]);
  edge = await startTestEdge({
    BOOTSTRAP_FILE: file,
    CLIENT_TOKENS: `${CLIENT},${SHOP_CLIENT}`,
    FRONTEND_TOKENS: FRONTEND,
    RELOAD_INTERVAL: '1',
  });
});

after(async () => {
  await edge?.close();
  await rm(folder, { recursive: true, force: true });
});

describe('Vexil Edge offline', () => {
  test('serves the file to the Node SDK, its projects to a project token, and evaluates for a frontend token', async () => {
    const sdk = await startNodeSdk(edge.url, CLIENT, { refreshInterval: 3_600_000 });
    try {
      assert.deepEqual(
        sdk
          .getFeatureToggleDefinitions()
          .map((definition) => definition.name)
          .sort(),
        ['beta', 'checkout', 'search'],
      );
      assert.equal(sdk.isEnabled('checkout'), true);
      assert.equal(sdk.isEnabled('beta'), false);
    } finally {
      sdk.destroy();
    }
    const shop = (await (await fetch(`${edge.url}/api/client/features`, { headers: { authorization: SHOP_CLIENT } })).json()) as {
      features: Array<{ name: string }>;
    };
    assert.deepEqual(
      shop.features.map((feature) => feature.name),
      ['checkout'],
    );
    const answer = await fetch(`${edge.url}/api/frontend?userId=42`, { headers: { authorization: FRONTEND } });
    assert.equal(answer.status, 200);
    const { toggles } = (await answer.json()) as { toggles: Array<{ name: string }> };
    assert.ok(toggles.some((toggle) => toggle.name === 'checkout'));
    assert.ok(!toggles.some((toggle) => toggle.name === 'beta'));
    const ready = (await (await fetch(`${edge.url}/internal-backstage/ready`)).json()) as { status: string; upstream: { changes: string } };
    assert.deepEqual([ready.status, ready.upstream.changes], ['READY', 'file']);
  });

  test('browsers may call the frontend API and OFREP from any origin, and only those', async () => {
    const preflight = await fetch(`${edge.url}/api/frontend`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    const frontendAnswer = await fetch(`${edge.url}/api/frontend`, {
      headers: { authorization: FRONTEND, origin: 'https://shop.example' },
    });
    assert.equal(frontendAnswer.headers.get('access-control-allow-origin'), '*');
    assert.equal(frontendAnswer.headers.get('access-control-expose-headers'), 'ETag');
    const clientAnswer = await fetch(`${edge.url}/api/client/features`, {
      headers: { authorization: CLIENT, origin: 'https://shop.example' },
    });
    assert.equal(clientAnswer.status, 200);
    assert.equal(clientAnswer.headers.get('access-control-allow-origin'), null);
  });

  test('any other token is refused: there is nobody to ask', async () => {
    const other = await fetch(`${edge.url}/api/client/features`, { headers: { authorization: '*:production.someone-elses-secret' } });
    assert.equal(other.status, 401);
    const frontendOnClient = await fetch(`${edge.url}/api/client/features`, { headers: { authorization: FRONTEND } });
    assert.equal(frontendOnClient.status, 403);
  });

  test('a change to the file is served after the reload interval; a broken file keeps what was read', async () => {
    await writeFlags([flag('checkout', 'shop', false), flag('search', 'default', true, '50'), flag('beta', 'default', true)]);
    const enabled = async (name: string) => {
      const answer = (await (await fetch(`${edge.url}/api/client/features/${name}`, { headers: { authorization: CLIENT } })).json()) as {
        enabled: boolean;
      };
      return answer.enabled;
    };
    await eventually(async () => (await enabled('beta')) && !(await enabled('checkout')), 5_000);
    await writeFile(file, '{"features": [');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(await enabled('beta'), true, 'the flags read before stay');
  });
});

describe('Vexil Edge access by address and pretrusted tokens', () => {
  test('ALLOW_LIST and DENY_LIST by the caller’s address (X-Forwarded-For’s with TRUST_PROXY); probes stay open', async () => {
    await writeFlags([
      {
        ...flag('office', 'default', true),
        strategies: [{ id: 'o', name: 'remoteAddress', sortOrder: 0, constraints: [], parameters: { IPs: '10.1.2.3' }, variants: [] }],
      },
    ]);
    const guarded = await startTestEdge({
      BOOTSTRAP_FILE: file,
      CLIENT_TOKENS: CLIENT,
      FRONTEND_TOKENS: FRONTEND,
      PRETRUSTED_TOKENS: 'legacy-proxy-key@production',
      TRUST_PROXY: 'true',
      ALLOW_LIST: '10.0.0.0/8',
      DENY_LIST: '10.6.6.6',
    });
    try {
      const from = (address?: string, token = FRONTEND) =>
        fetch(`${guarded.url}/api/frontend`, { headers: { authorization: token, ...(address ? { 'x-forwarded-for': address } : {}) } });
      const local = await from();
      assert.equal(local.status, 403, '127.0.0.1 is not on the allow list');
      assert.match(((await local.json()) as { message: string }).message, /does not take requests from 127\.0\.0\.1/);
      assert.equal((await from('10.6.6.6')).status, 403, 'denied');
      const office = await from('10.1.2.3');
      assert.equal(office.status, 200);
      const { toggles } = (await office.json()) as { toggles: Array<{ name: string }> };
      assert.deepEqual(
        toggles.map((toggle) => toggle.name),
        ['office'],
        'the forwarded address is the one evaluated',
      );
      const legacy = await from('10.9.9.9', 'legacy-proxy-key@production');
      assert.equal(legacy.status, 200, 'a pretrusted proxy key is a frontend token');
      assert.deepEqual(((await legacy.json()) as { toggles: unknown[] }).toggles, []);
      const legacyOnClient = await fetch(`${guarded.url}/api/client/features`, {
        headers: { authorization: 'legacy-proxy-key@production', 'x-forwarded-for': '10.9.9.9' },
      });
      assert.equal(legacyOnClient.status, 403);
      // An SDK that polled from the office is refused with its ETag too once its address is denied.
      const features = (address: string, headers: Record<string, string> = {}) =>
        fetch(`${guarded.url}/api/client/features`, { headers: { authorization: CLIENT, 'x-forwarded-for': address, ...headers } });
      const polled = await features('10.1.2.3');
      assert.equal(polled.status, 200);
      const etag = polled.headers.get('etag')!;
      assert.equal((await features('10.1.2.3', { 'if-none-match': etag })).status, 304);
      assert.equal((await features('10.6.6.6', { 'if-none-match': etag })).status, 403);
      assert.equal((await fetch(`${guarded.url}/internal-backstage/health`)).status, 200);
    } finally {
      await guarded.close();
    }
  });
});
