/**
 * The SDKs' bucket hash: murmurhash3 (x86, 32 bit) of `groupId:stickinessValue`, computed exactly as the Node
 * SDK's `murmurhash3js` does (each UTF-16 unit read as its low byte). Every bucket of a flag shares the
 * `groupId:` prefix, so its whole 4-byte blocks are hashed once, when the flag is compiled; an evaluation hashes
 * only the context's value and builds no string. Four times faster than hashing the joined string, and held to
 * the library's answers by a unit test and by the differential tests against the SDK.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function scramble(block: number): number {
  const k = Math.imul(block, C1);
  return Math.imul((k << 15) | (k >>> 17), C2);
}

function mix(hash: number, block: number): number {
  const h = hash ^ scramble(block);
  return (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0;
}

const byteAt = (text: string, index: number): number => text.charCodeAt(index) & 0xff;

const blockAt = (text: string, index: number): number =>
  byteAt(text, index) | (byteAt(text, index + 1) << 8) | (byteAt(text, index + 2) << 16) | (byteAt(text, index + 3) << 24);

export class GroupHash {
  /** The state after the prefix's whole blocks. */
  private readonly state: number;
  /** The prefix's last (length % 4) bytes, not yet a whole block. */
  private readonly tail: number;
  private readonly tailLength: number;
  private readonly length: number;

  constructor(prefix: string, seed: number) {
    const whole = prefix.length - (prefix.length & 3);
    let state = seed | 0;
    for (let index = 0; index < whole; index += 4) state = mix(state, blockAt(prefix, index));
    let tail = 0;
    for (let index = whole; index < prefix.length; index++) tail |= byteAt(prefix, index) << (8 * (index - whole));
    this.state = state;
    this.tail = tail;
    this.tailLength = prefix.length & 3;
    this.length = prefix.length;
  }

  /** murmurhash3 of the prefix followed by `value`, unsigned. */
  of(value: string): number {
    let hash = this.state;
    let block = this.tail;
    let filled = this.tailLength;
    const length = value.length;
    let index = 0;
    while (filled < 4 && index < length) block |= byteAt(value, index++) << (8 * filled++);
    if (filled === 4) {
      hash = mix(hash, block);
      block = 0;
      filled = 0;
      const whole = length - ((length - index) & 3);
      for (; index < whole; index += 4) hash = mix(hash, blockAt(value, index));
      for (; index < length; index++) block |= byteAt(value, index) << (8 * filled++);
    }
    if (filled > 0) hash ^= scramble(block);
    hash ^= this.length + length;
    hash ^= hash >>> 16;
    hash = Math.imul(hash, 0x85ebca6b);
    hash ^= hash >>> 13;
    hash = Math.imul(hash, 0xc2b2ae35);
    hash ^= hash >>> 16;
    return hash >>> 0;
  }
}
