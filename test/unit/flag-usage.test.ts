import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeFlagUsage, joinWords } from '../../src/shared/flag-usage.js';

describe('describing where flags use something', () => {
  test('groups strategies by flag, lists environments once, and marks archived flags', () => {
    const text = describeFlagUsage([
      { featureName: 'search', environment: 'production', archived: false },
      { featureName: 'checkout', environment: 'production', archived: false },
      { featureName: 'checkout', environment: 'development', archived: false },
      { featureName: 'checkout', environment: 'production', archived: false },
      { featureName: 'old', environment: 'development', archived: true },
    ]);
    assert.equal(text, 'flag "checkout" (development, production), flag "old" (development, archived) and flag "search" (production)');
  });

  test('names the first ten flags and counts the rest', () => {
    const usages = Array.from({ length: 12 }, (_, index) => ({
      featureName: `flag-${String(index).padStart(2, '0')}`,
      environment: 'development',
      archived: false,
    }));
    const text = describeFlagUsage(usages);
    assert.ok(text.startsWith('flag "flag-00" (development), '));
    assert.ok(text.includes('flag "flag-09" (development)'));
    assert.ok(!text.includes('flag-10'));
    assert.ok(text.endsWith(' and 2 more flags'));
  });

  test('joins words as a sentence', () => {
    assert.equal(joinWords([]), '');
    assert.equal(joinWords(['a']), 'a');
    assert.equal(joinWords(['a', 'b']), 'a and b');
    assert.equal(joinWords(['a', 'b', 'c']), 'a, b and c');
  });
});
