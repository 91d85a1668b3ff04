import assert from 'node:assert/strict';
import { test } from 'node:test';
import murmurHash3 from 'murmurhash3js';
import { GroupHash } from '../../src/domain/evaluation/group-hash.js';

test('the group hash is murmurhash3js of the joined string, for every prefix and value length and for non-ASCII text', () => {
  const prefixes = ['', ':', 'a:', 'ab:', 'abc:', 'flag-0001:', 'undefined:', 'Feature.A:', 'ÆØÅ:', '😀:', 'x'.repeat(41)];
  const values = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'user-1234', '123', 'ÆØÅ', '😀 smile', 'y'.repeat(1000)];
  let compared = 0;
  for (const seed of [0, 86028157, 42]) {
    for (const prefix of prefixes) {
      const hash = new GroupHash(prefix, seed);
      for (const value of values) {
        assert.equal(
          hash.of(value),
          murmurHash3.x86.hash32(prefix + value, seed),
          `${JSON.stringify(prefix)} + ${JSON.stringify(value)}, seed ${seed}`,
        );
        compared++;
      }
    }
  }
  assert.equal(compared, 3 * prefixes.length * values.length);
});
