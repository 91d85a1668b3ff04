import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { inUnitOfWork } from '../../src/db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../src/domain/access/actor.js';
import { setFeatureEnvironmentEnabled } from '../../src/domain/features/feature-environments.js';
import { expectStatus } from '../helpers/assertions.js';
import { eventually } from '../helpers/eventually.js';
import { createFlag } from '../helpers/projects.js';
import { createSdkToken } from '../helpers/sdk-fixtures.js';
import { useTestApp } from '../helpers/test-app.js';
import { usingPostgres } from '../helpers/test-database.js';

// Event ids are taken when a transaction records its event, not when it commits: on PostgreSQL a change can commit
// after a later one was already read. What SDKs are served must still get it, and with a new revision (ETag).

const skip = usingPostgres() ? false : 'the embedded database has one connection: its transactions commit in the order they start';

describe('a change committed after a later change', { skip }, () => {
  const ctx = useTestApp();

  test('reaches SDKs, with a revision and an ETag of its own', async () => {
    const token = await createSdkToken(ctx, 'client', 'development');
    const sdk = ctx.as(token);
    await createFlag(ctx, 'default', { name: 'committed-late' });
    await createFlag(ctx, 'default', { name: 'committed-early' });
    const served = async () => {
      const response = await sdk.get('/api/client/features');
      expectStatus(response, 200);
      const { features } = response.json() as { features: Array<{ name: string; enabled: boolean }> };
      const on = features.filter((feature) => feature.enabled).map((feature) => feature.name);
      return { on: on.sort(), etag: response.headers.etag };
    };
    assert.deepEqual((await served()).on, []);

    // Another instance turns the flag on, and its transaction commits only after a later change was served.
    const other = await openDatabase(ctx.databaseConfig);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let recorded!: () => void;
    const wasRecorded = new Promise<void>((resolve) => (recorded = resolve));
    const slow = inUnitOfWork({ db: other.db, clock: ctx.clock }, SYSTEM_ACTOR, async (uow) => {
      await setFeatureEnvironmentEnabled(uow, { project: 'default', featureName: 'committed-late', environment: 'development' }, true);
      recorded();
      await released;
    });
    try {
      await wasRecorded;
      expectStatus(await ctx.admin.post('/api/admin/projects/default/features/committed-early/environments/development/on'), 200);
      await eventually(async () => (await served()).on.includes('committed-early'));
      const before = await served();
      release();
      await slow;

      await eventually(async () => (await served()).on.includes('committed-late'), 2_000);
      const after = await served();
      assert.deepEqual(after.on, ['committed-early', 'committed-late']);
      assert.notEqual(after.etag, before.etag, 'a new ETag, so SDKs holding the old one download the change');
    } finally {
      release();
      await slow.catch(() => undefined);
      await other.close();
    }
  });
});
