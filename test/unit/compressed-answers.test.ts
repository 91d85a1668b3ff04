import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { compressedOnce, storedAsIs, zlibStreamOf } from '../../src/http/sdk-api/compressed-answers.js';

/**
 * A zlib stream spliced from parts compressed once and parts stored as they are must read, with zlib's own inflate
 * (which checks the Adler-32), as the parts' bytes one after the other.
 */
describe('answers spliced from compressed and stored parts', () => {
  const json = (count: number) =>
    Buffer.from(Array.from({ length: count }, (_, index) => `{"key":"flag-${index}","value":false}`).join(','));

  test('a recurring part, a fresh one longer than one stored block, and an empty one read as their concatenation', () => {
    // Random bytes keep the Adler-32 sums large, and 200 kB of them take four stored blocks.
    const recurring = json(20_000);
    const fresh = randomBytes(200_000);
    const end = Buffer.from(']}');
    const spliced = zlibStreamOf([compressedOnce(recurring), storedAsIs(fresh), storedAsIs(Buffer.alloc(0)), storedAsIs(end)]);
    assert.deepEqual(inflateSync(spliced), Buffer.concat([recurring, fresh, end]));
    assert.ok(compressedOnce(recurring).blocks[0]!.length < recurring.length / 10, 'the recurring JSON is compressed to under a tenth');
  });

  test('a part is compressed once for as long as its buffer lives', () => {
    const recurring = json(100);
    assert.equal(compressedOnce(recurring), compressedOnce(recurring));
    assert.notEqual(compressedOnce(Buffer.from(recurring)), compressedOnce(recurring));
  });

  test('nothing at all, empty parts, and stored parts alone, are valid streams', () => {
    assert.equal(inflateSync(zlibStreamOf([])).length, 0);
    // An environment with every flag on has no flags that are off: an empty part compressed once.
    const start = Buffer.from('{"flags":[');
    const onlyOn = zlibStreamOf([compressedOnce(start), compressedOnce(Buffer.alloc(0)), storedAsIs(Buffer.from('{"key":"a"}]}'))]);
    assert.equal(inflateSync(onlyOn).toString(), '{"flags":[{"key":"a"}]}');
    const bytes = randomBytes(65_535 * 2 + 1);
    assert.deepEqual(inflateSync(zlibStreamOf([storedAsIs(bytes)])), bytes);
    const exactlyFull = randomBytes(65_535 * 2);
    assert.deepEqual(inflateSync(zlibStreamOf([storedAsIs(exactlyFull)])), exactlyFull);
  });
});
