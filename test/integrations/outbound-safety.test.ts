import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { nonPublicRange } from '../../src/domain/addons/outbound-safety.js';
import { runDeliveryPass } from '../../src/workers/delivery-worker.js';
import { expectError, expectStatus } from '../helpers/assertions.js';
import { lastEventId, eventsSince } from '../helpers/events.js';
import { uniqueName } from '../helpers/fixtures.js';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Outbound safety with INTEGRATIONS_ALLOW_PRIVATE_NETWORKS off (the default): private, loopback, link-local
 * and metadata addresses are refused when a configuration names them and when a delivery would connect.
 */
describe('address classification', () => {
  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::7f00:1', 'reserved'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['2002:a9fe:a9fe::', '6to4'],
  ];
  for (const [address, range] of refused) {
    test(`${address} is refused (${range})`, () => assert.equal(nonPublicRange(address), range));
  }
  test('public unicast addresses are allowed', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(nonPublicRange(address), undefined, address);
    }
  });
});

describe('outbound safety through the API', () => {
  let ctx: TestApp;
  let receiver: HttpReceiver;
  before(async () => {
    ctx = await startTestApp();
    receiver = await startHttpReceiver();
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  test('configurations naming private addresses are refused with a 400', async () => {
    const before = await lastEventId(ctx);
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.0.0.5/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::1]:4242/hook',
      'http://100.100.100.200/',
      'http://0.0.0.0/',
      'http://2130706433/hook',
      // Spellings of loopback that a check of the literal text would let through.
      'http://[::127.0.0.1]/',
      'http://localhost.:4242/',
      'http://LOCALHOST../hook',
      'http://api.localhost/hook',
    ]) {
      const response = await ctx.admin.post('/api/admin/addons', { provider: 'webhook', enabled: true, parameters: { url }, events: [] });
      const error = expectError(response, 400, 'BadDataError');
      assert.equal(error.details[0]!.path, '/body/parameters/url', url);
      assert.match(error.details[0]!.message, /INTEGRATIONS_ALLOW_PRIVATE_NETWORKS=true/, url);
    }
    const slack = await ctx.admin.post('/api/admin/addons', {
      provider: 'slack',
      enabled: true,
      parameters: { url: 'http://localhost:9/services/x', defaultChannel: 'x' },
      events: [],
    });
    expectError(slack, 400, 'BadDataError');
    assert.deepEqual(await eventsSince(ctx, before), []);
  });

  test('a public address is accepted', async () => {
    const response = await ctx.admin.post('/api/admin/addons', {
      provider: 'webhook',
      enabled: false,
      parameters: { url: 'https://93.184.215.14/hook' },
      events: [],
    });
    expectStatus(response, 201);
  });

  test('at send time a private address is refused without a request, and not retried', async () => {
    // Stored while private networks were allowed, delivered after the operator turned them off.
    const permissive = await startTestApp({ env: { INTEGRATIONS_ALLOW_PRIVATE_NETWORKS: 'true' } });
    try {
      const project = uniqueName('proj');
      expectStatus(await permissive.admin.post('/api/admin/projects', { id: project, name: project }), 201);
      const port = new URL(receiver.origin).port;
      const ids: number[] = [];
      // An IP literal is checked before connecting; a name is checked by the lookup the socket connects with.
      for (const url of [`${receiver.origin}/literal`, `http://localhost:${port}/by-name`]) {
        const response = await permissive.admin.post('/api/admin/addons', {
          provider: 'webhook',
          enabled: true,
          parameters: { url },
          events: [],
          projects: [project],
        });
        expectStatus(response, 201);
        ids.push((response.json() as { id: number }).id);
      }
      expectStatus(await permissive.admin.post(`/api/admin/projects/${project}/features`, { name: uniqueName('flag') }), 201);

      const strict = { ...permissive.config, integrations: { ...permissive.config.integrations, allowPrivateNetworks: false } };
      const result = await runDeliveryPass({ db: permissive.db, clock: permissive.clock, config: strict, log: permissive.app.log });
      assert.deepEqual(result, { attempted: 2, delivered: 0, failed: 2 });
      assert.deepEqual(receiver.requests, [], 'nothing reached the receiver');
      for (const id of ids) {
        const [event, ...others] = (await permissive.admin.get(`/api/admin/addons/${id}/events`)).json().integrationEvents as Array<{
          state: string;
          stateDetails: string;
        }>;
        assert.deepEqual(others, []);
        assert.equal(event!.state, 'failed');
        assert.match(
          event!.stateDetails,
          /^Failed: refused: .*(127\.0\.0\.1|::1), a loopback address; .*INTEGRATIONS_ALLOW_PRIVATE_NETWORKS=true \(attempt 1 of 5\); not retried$/,
        );
        assert.equal((await permissive.admin.get(`/api/admin/addons/${id}`)).json().deliveries.pending, 0);
      }
    } finally {
      await permissive.close();
    }
  });
});
