import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHANGED_ACCESS, CHANGED_SETTINGS } from '../../src/db/notification-channels.js';
import { ClientFeatureStore } from '../../src/domain/client-features/client-feature-store.js';
import type { EnvironmentConfiguration } from '../../src/domain/client-features/environment-configuration.js';
import { ChangeFeed } from '../../src/domain/events/change-feed.js';

// The change feed is the process's one way of hearing committed changes; the SDK store is one subscriber among others,
// and what fails in the background is reported rather than swallowed.

function feedWithChanges() {
  let send: (payload: string | undefined) => void = () => {};
  const failures: unknown[] = [];
  const feed = new ChangeFeed(
    async (onChange) => {
      send = onChange;
      return async () => {};
    },
    (error) => failures.push(error),
  );
  return { feed, send: (payload: string | undefined) => send(payload), failures };
}

test('each subscriber hears the changes of its kind, and one that throws keeps the change from none of the others', async () => {
  const { feed, send, failures } = feedWithChanges();
  const heard: string[] = [];
  feed.onChangeOf(CHANGED_ACCESS, () => heard.push('access'));
  feed.subscribe(() => {
    throw new Error('a broken subscriber');
  });
  feed.onChangeOf(CHANGED_SETTINGS, () => heard.push('settings'));
  await feed.start();
  send(CHANGED_ACCESS);
  send(`${CHANGED_SETTINGS},${CHANGED_ACCESS}`);
  // Listening (re)started: anything may have changed.
  send(undefined);
  assert.deepEqual(heard, ['access', 'access', 'settings', 'access', 'settings']);
  assert.deepEqual(
    failures.map((error) => (error as Error).message),
    ['a broken subscriber', 'a broken subscriber', 'a broken subscriber'],
  );
  await feed.stop();
});

test('a rebuild for streaming SDKs that fails is reported with its environment, and the next change tries again', async () => {
  const configuration = (revision: number): EnvironmentConfiguration => ({
    environment: 'production',
    revision,
    features: [],
    tags: new Map(),
    segments: new Map(),
  });
  let loads = 0;
  const reported: Array<{ message: string; environment: string }> = [];
  const store = new ClientFeatureStore(
    async () => {
      loads++;
      if (loads === 2) throw new Error('the database refused the read');
      return configuration(loads);
    },
    (error, environment) => reported.push({ message: (error as Error).message, environment }),
  );
  const { feed, send } = feedWithChanges();
  feed.subscribe((payload) => store.changed(payload));
  await feed.start();
  await store.configuration('production');
  store.subscribe(() => {});
  send(undefined);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(reported, [{ message: 'the database refused the read', environment: 'production' }]);
  send(undefined);
  await new Promise((resolve) => setTimeout(resolve, 10));
  // Tried again, and read: a configuration with nothing SDKs see changed keeps the one held (and its ETags).
  assert.equal(loads, 3);
  assert.equal((await store.configuration('production')).revision, 1);
  assert.equal(reported.length, 1);
});
