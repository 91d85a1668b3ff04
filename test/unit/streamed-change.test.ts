import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readStreamedChange, revisionOfId } from '../../src/edge/upstream-client.js';

/**
 * What the edge reads of its upstream's change stream: a change it can apply, or nothing (then it fetches the flags,
 * as it did for every change before it applied them), never a throw.
 */
describe("the edge's reading of a streamed change", () => {
  const flag = { name: 'checkout', enabled: true, strategies: [] };

  test('a greeting is a hydration at the revision the event id names', () => {
    const data = JSON.stringify({ events: [{ type: 'hydration', eventId: 41, features: [flag], segments: [] }] });
    assert.deepEqual(readStreamedChange(data, '42'), {
      revision: 42,
      events: [{ type: 'hydration', eventId: 41, features: [flag], segments: [] }],
    });
  });

  test("a change without an id takes its revision from the events' ids", () => {
    const events = [
      { type: 'feature-updated', eventId: 7, feature: flag },
      { type: 'feature-removed', eventId: 8, featureName: 'old', project: 'default' },
      { type: 'segment-updated', eventId: 8, segment: { id: 3, name: 'beta', constraints: [] } },
      { type: 'segment-removed', eventId: 6, segmentId: 4 },
    ];
    assert.deepEqual(readStreamedChange(JSON.stringify({ events }), undefined), { revision: 8, events });
    assert.deepEqual(readStreamedChange(JSON.stringify({ events }), 'not-a-number'), { revision: 8, events });
  });

  test("an event's id names a revision only when it is a number", () => {
    assert.deepEqual(['42', '0', undefined, '', '4.2', '-1', 'x1', '9'.repeat(16)].map(revisionOfId), [
      42,
      0,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  test('anything else is no change to apply', () => {
    const unreadable = [
      'not json',
      'null',
      '[]',
      JSON.stringify({ events: 'all' }),
      JSON.stringify({ events: [{ type: 'feature-renamed', eventId: 1 }] }),
      JSON.stringify({ events: [{ type: 'feature-updated', eventId: 1, feature: { enabled: true } }] }),
      JSON.stringify({ events: [{ type: 'feature-removed', eventId: 1 }] }),
      JSON.stringify({ events: [{ type: 'segment-updated', eventId: 1, segment: { id: '3' } }] }),
      JSON.stringify({ events: [{ type: 'segment-removed', eventId: 1, segmentId: null }] }),
      JSON.stringify({ events: [{ type: 'hydration', eventId: 1, features: [flag] }] }),
      JSON.stringify({ events: [{ type: 'feature-updated', eventId: 1, feature: flag }, 'and more'] }),
    ];
    for (const data of unreadable) assert.equal(readStreamedChange(data, '1'), undefined, data);
  });
});
