import { negotiate } from '@fastify/accept-negotiator';
import { promisify } from 'node:util';
import { constants, deflateRawSync, gzip } from 'node:zlib';

/*
 * Answers compressed for the clients that take it, without compressing per request: what is the same for many
 * requests is compressed once and kept beside the plain bytes for as long as they live. Two ways: a whole body
 * gzipped once, and a body spliced from a part compressed once and a part sent as it is (deflate, below).
 */

const gzipped = promisify(gzip);
const gzippedBodies = new WeakMap<Buffer, Promise<Buffer>>();

/**
 * A prepared body (the client API's features, the same for every SDK of a scope until the next change) gzipped
 * once, off the event loop; requests that come while it is being compressed wait for the same result.
 */
export function gzippedOnce(body: Buffer): Promise<Buffer> {
  let result = gzippedBodies.get(body);
  if (!result) {
    result = gzipped(body);
    gzippedBodies.set(body, result);
    // A failure is not kept: the next request tries again.
    result.catch(() => gzippedBodies.delete(body));
  }
  return result;
}

/** The encoding to answer in, negotiated from the client's `Accept-Encoding` among those offered. */
export function encodingFor<E extends 'gzip' | 'deflate'>(acceptEncoding: string | undefined, offered: E[]): E | undefined {
  return acceptEncoding === undefined ? undefined : (negotiate(acceptEncoding, offered) ?? undefined);
}

/*
 * Deflate splicing. Large answers made of a part that recurs (the flags that are off: the same bytes for every
 * context) and a part made per request, sent as `Content-Encoding: deflate` (a zlib stream, RFC 1950 and 1951)
 * without compressing per request: the recurring part is compressed once and kept, the fresh part goes in stored
 * (uncompressed) blocks. Compressed data ending with a sync flush is byte-aligned and refers to nothing after it,
 * so blocks of either kind may follow one another, and the Adler-32 checksum of the whole combines from the parts'
 * own.
 */

/** A part of an answer as deflate blocks (never the final one), with the checksum and length of what it holds. */
export interface DeflatedPart {
  blocks: Buffer[];
  adler: number;
  length: number;
}

const ADLER_MODULUS = 65521;
/**
 * The bytes the Adler-32 sums take in between reductions: with every byte 255, b stays under 2^31
 * (65520 + 65520n + 255n(n+1)/2), so the sums are small integers all the way.
 */
const ADLER_RUN = 3800;
const STORED_BLOCK_MAX = 65535;
/** CMF and FLG of a zlib stream: deflate with a 32 KiB window, default compression (0x789c is divisible by 31). */
const ZLIB_HEADER = Buffer.from([0x78, 0x9c]);
/** An empty block of fixed codes with BFINAL set: the end of the deflate data. */
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

/** Adler-32 (RFC 1950) in four-byte steps: per step, b gains 4a and the bytes weighted 4, 3, 2, 1. */
function adler32(bytes: Buffer): number {
  let a = 1;
  let b = 0;
  let index = 0;
  while (index < bytes.length) {
    const end = Math.min(index + ADLER_RUN, bytes.length);
    for (const stepsEnd = end - ((end - index) % 4); index < stepsEnd; index += 4) {
      const x0 = bytes[index]!;
      const x1 = bytes[index + 1]!;
      const x2 = bytes[index + 2]!;
      const x3 = bytes[index + 3]!;
      b = (b + 4 * a + 4 * x0 + 3 * x1 + 2 * x2 + x3) | 0;
      a = (a + x0 + x1 + x2 + x3) | 0;
    }
    for (; index < end; index++) {
      a = (a + bytes[index]!) | 0;
      b = (b + a) | 0;
    }
    a %= ADLER_MODULUS;
    b %= ADLER_MODULUS;
  }
  return b * 65536 + a;
}

/** The Adler-32 of `first`'s bytes followed by `second`'s, from theirs (zlib's adler32_combine). */
function combinedAdler(first: number, second: number, secondLength: number): number {
  const [a1, b1] = [first % 65536, Math.floor(first / 65536)];
  const [a2, b2] = [second % 65536, Math.floor(second / 65536)];
  const a = (a1 + a2 + ADLER_MODULUS - 1) % ADLER_MODULUS;
  const b = (b1 + b2 + (secondLength % ADLER_MODULUS) * ((a1 + ADLER_MODULUS - 1) % ADLER_MODULUS)) % ADLER_MODULUS;
  return b * 65536 + a;
}

const compressedParts = new WeakMap<Buffer, DeflatedPart>();

/** `bytes` compressed, once for as long as the buffer lives: for a part that recurs in many answers. */
export function compressedOnce(bytes: Buffer): DeflatedPart {
  let part = compressedParts.get(bytes);
  if (!part) {
    part = { blocks: [deflateRawSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH })], adler: adler32(bytes), length: bytes.length };
    compressedParts.set(bytes, part);
  }
  return part;
}

/** `bytes` in stored blocks: for a part made for one answer, where compressing would cost more than it saves. */
export function storedAsIs(bytes: Buffer): DeflatedPart {
  const blocks: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += STORED_BLOCK_MAX) {
    const chunk = bytes.subarray(start, start + STORED_BLOCK_MAX);
    // BFINAL 0 and BTYPE 00 in the first byte (the rest of it padding), then LEN and its one's complement.
    const header = Buffer.alloc(5);
    header.writeUInt16LE(chunk.length, 1);
    header.writeUInt16LE(~chunk.length & 0xffff, 3);
    blocks.push(header, chunk);
  }
  return { blocks, adler: adler32(bytes), length: bytes.length };
}

/** The parts, in order, as one zlib stream. */
export function zlibStreamOf(parts: DeflatedPart[]): Buffer {
  let adler = 1;
  for (const part of parts) adler = combinedAdler(adler, part.adler, part.length);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(adler);
  return Buffer.concat([ZLIB_HEADER, ...parts.flatMap((part) => part.blocks), FINAL_BLOCK, trailer]);
}
