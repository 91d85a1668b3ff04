import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { inUnitOfWork } from '../../src/db/unit-of-work.js';
import { SYSTEM_ACTOR } from '../../src/domain/access/actor.js';
import type { EventType } from '../../src/domain/events/event-types.js';
import { recordEvent } from '../../src/domain/events/record-event.js';
import { createProject } from '../../src/domain/projects/projects.js';
import { systemClock } from '../../src/shared/clock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let database: TestDatabase;
let handle: DatabaseHandle;
before(async () => {
  database = await createTestDatabase();
  handle = await database.open();
  await migrateToLatest(handle.db);
});
after(async () => {
  await handle.close();
  await database.drop();
});

const deps = () => ({ db: handle.db, clock: systemClock });

async function projectExists(id: string): Promise<boolean> {
  return Boolean(await handle.db.selectFrom('projects').select('id').where('id', '=', id).executeTakeFirst());
}

async function eventCount(): Promise<number> {
  const row = await handle.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('migrations', () => {
  test('are idempotent: running them again changes nothing', async () => {
    await migrateToLatest(handle.db);
    await migrateToLatest(handle.db);
    const environments = await handle.db.selectFrom('environments').select('name').orderBy('name').execute();
    assert.deepEqual(
      environments.map((e) => e.name),
      ['development', 'production'],
    );
    const projects = await handle.db.selectFrom('projects').select('id').where('id', '=', 'default').execute();
    assert.equal(projects.length, 1);
  });
});

describe('the unit of work', () => {
  test('commits the change and its event together', async () => {
    const before = await eventCount();
    await inUnitOfWork(deps(), SYSTEM_ACTOR, (uow) => createProject(uow, { id: 'committed', name: 'C' }));
    assert.ok(await projectExists('committed'));
    assert.equal(await eventCount(), before + 1);
  });

  test('rolls the change back when its event cannot be written', async () => {
    const before = await eventCount();
    await assert.rejects(
      inUnitOfWork(deps(), SYSTEM_ACTOR, async (uow) => {
        await createProject(uow, { id: 'rolled-back', name: 'R' });
        // jsonb cannot hold NUL: the database refuses this event, so the project must go too.
        await recordEvent(uow, { type: 'project-updated', project: 'rolled-back', data: { name: 'bad\u0000' } });
      }),
    );
    assert.equal(await projectExists('rolled-back'), false);
    assert.equal(await eventCount(), before);
  });

  test('refuses an event type outside the known list, rolling back', async () => {
    await assert.rejects(
      inUnitOfWork(deps(), SYSTEM_ACTOR, async (uow) => {
        await createProject(uow, { id: 'bad-type', name: 'B' });
        await recordEvent(uow, { type: 'feature-exploded' as EventType });
      }),
      /Unknown event type "feature-exploded"/,
    );
    assert.equal(await projectExists('bad-type'), false);
  });

  test('records nothing for an update whose data equals its preData', async () => {
    const before = await eventCount();
    const result = await inUnitOfWork(deps(), SYSTEM_ACTOR, (uow) =>
      recordEvent(uow, { type: 'project-updated', project: 'default', data: { a: 1, b: [1, 2] }, preData: { b: [1, 2], a: 1 } }),
    );
    assert.equal(result, null);
    assert.equal(await eventCount(), before);
  });

  test('gives events strictly increasing ids from a sequence', async () => {
    const ids = await inUnitOfWork(deps(), SYSTEM_ACTOR, async (uow) => {
      const first = await recordEvent(uow, { type: 'project-updated', project: 'default', data: { n: 1 } });
      const second = await recordEvent(uow, { type: 'project-updated', project: 'default', data: { n: 2 } });
      return [first!.id, second!.id];
    });
    assert.equal(typeof ids[0], 'number');
    assert.ok(ids[1]! > ids[0]!);
  });
});

describe('the embedded database', () => {
  test('keeps its data across a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'vexil-pglite-'));
    try {
      const first = await openDatabase({ kind: 'pglite', dataDir });
      await migrateToLatest(first.db);
      await inUnitOfWork({ db: first.db, clock: systemClock }, SYSTEM_ACTOR, (uow) => createProject(uow, { id: 'survivor', name: 'S' }));
      await first.close();

      const second = await openDatabase({ kind: 'pglite', dataDir });
      await migrateToLatest(second.db);
      const row = await second.db.selectFrom('projects').select(['id', 'name']).where('id', '=', 'survivor').executeTakeFirst();
      const events = await second.db.selectFrom('events').select('type').where('project', '=', 'survivor').execute();
      await second.close();
      assert.deepEqual(row, { id: 'survivor', name: 'S' });
      assert.deepEqual(events, [{ type: 'project-created' }]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
