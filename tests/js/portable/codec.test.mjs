// compress and decompress: every codec, levels, frames, limits and damage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compress, decompress } from 'dynaslice';
import { randomBytes, throwsDynaslice } from '../support/check.mjs';

const CODECS = ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd'];
const CODEC_IDS = { none: 0, deflate: 1, zlib: 2, gzip: 3, snappy: 4, zstd: 5 };
const text = new TextEncoder().encode('{"order":"A-1001","items":[{"sku":"café-42","qty":3}]}'.repeat(400));

const rawLengthOf = (frame) => new DataView(frame.buffer, frame.byteOffset).getBigUint64(5, true);

test('every codec round-trips text, random and empty bytes, in a self-describing frame', () => {
  const random = randomBytes(100_000);
  for (const codec of CODECS) {
    for (const raw of [text, random, new Uint8Array(0), Uint8Array.of(7)]) {
      const frame = compress(raw, { codec });
      assert.ok(frame instanceof Uint8Array, codec);
      assert.deepEqual(Array.from(frame.subarray(0, 5)), [0x44, 0x53, 0x5a, 1, CODEC_IDS[codec]], codec);
      assert.equal(rawLengthOf(frame), BigInt(raw.length), codec);
      assert.deepEqual(decompress(frame), raw, `${codec}, ${raw.length} bytes`);
    }
  }
});

test('none stores the bytes as they are; the others shrink repetitive text', () => {
  const none = compress(text, { codec: 'none' });
  assert.equal(none.length, text.length + 21);
  assert.deepEqual(none.subarray(13, 13 + text.length), text);
  for (const codec of ['deflate', 'zlib', 'gzip', 'snappy', 'zstd']) {
    assert.ok(compress(text, { codec }).length < text.length / 5, codec);
  }
});

test('the default codec is zstd', () => {
  assert.equal(compress(text)[4], CODEC_IDS.zstd);
  assert.equal(compress(text, {})[4], CODEC_IDS.zstd);
  assert.deepEqual(compress(text), compress(text, { codec: 'zstd' }));
});

test('bodies are the standard formats (zlib RFC 1950, gzip RFC 1952, zstd RFC 8878)', () => {
  const zlib = compress(text, { codec: 'zlib' });
  assert.equal(zlib[13] & 0x0f, 8, 'zlib CM = deflate');
  assert.equal(((zlib[13] << 8) | zlib[14]) % 31, 0, 'zlib FCHECK');
  const gzip = compress(text, { codec: 'gzip' });
  assert.deepEqual(Array.from(gzip.subarray(13, 23)), [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  // gzip's ISIZE: the raw length, u32 little-endian, just before the trailer.
  assert.equal(new DataView(gzip.buffer).getUint32(gzip.length - 12, true), text.length);
  const zstd = compress(text, { codec: 'zstd' });
  assert.deepEqual(Array.from(zstd.subarray(13, 17)), [0x28, 0xb5, 0x2f, 0xfd]);
});

test('the trailer is the digest of the raw bytes, the same for every codec', () => {
  const trailers = CODECS.map((codec) => Array.from(compress(text, { codec }).slice(-8)));
  for (const t of trailers) assert.deepEqual(t, trailers[0]);
  assert.notDeepEqual(Array.from(compress(text.subarray(1), { codec: 'none' }).slice(-8)), trailers[0]);
});

test('deflate, zlib and gzip take levels 0 to 10; level 0 stores, higher levels shrink', () => {
  for (const codec of ['deflate', 'zlib', 'gzip']) {
    const lengths = [];
    for (let level = 0; level <= 10; level++) {
      const frame = compress(text, { codec, level });
      assert.deepEqual(decompress(frame), text, `${codec} level ${level}`);
      lengths.push(frame.length);
    }
    assert.ok(lengths[0] > text.length, `${codec} level 0 stores: ${lengths[0]}`);
    assert.ok(lengths[6] < text.length / 5, `${codec} level 6 compresses`);
    assert.ok(lengths[1] >= lengths[9], `${codec}: level 9 no larger than level 1`);
    assert.deepEqual(compress(text, { codec }), compress(text, { codec, level: 6 }), `${codec} defaults to 6`);
    throwsDynaslice(() => compress(text, { codec, level: 11 }), 'CODEC_LEVEL_UNSUPPORTED', /level 11/);
  }
});

test('zstd has level 1 only: 0, 3 and 19 are refused', () => {
  assert.deepEqual(decompress(compress(text, { codec: 'zstd', level: 1 })), text);
  assert.deepEqual(compress(text, { codec: 'zstd', level: 1 }), compress(text, { codec: 'zstd' }));
  for (const level of [0, 3, 19]) {
    throwsDynaslice(() => compress(text, { codec: 'zstd', level }), 'CODEC_LEVEL_UNSUPPORTED', new RegExp(`level ${level}`));
  }
});

test('none and snappy take no level', () => {
  for (const codec of ['none', 'snappy']) {
    throwsDynaslice(() => compress(text, { codec, level: 1 }), 'CODEC_LEVEL_UNSUPPORTED');
  }
});

test('bad compress options are OPTIONS_INVALID', () => {
  for (const options of [{ codec: 'lz4' }, { codec: 'ZSTD' }, { codec: 5 }, { codec: 'zlib', level: -1 }, { codec: 'zlib', level: 1.5 }, { codec: 'zlib', level: '6' }]) {
    throwsDynaslice(() => compress(text, options), 'OPTIONS_INVALID');
  }
});

test('compress reads exactly the bytes of a view, not its whole buffer', () => {
  const backing = randomBytes(1000);
  const view = backing.subarray(100, 300);
  for (const codec of CODECS) {
    const frame = compress(view, { codec });
    assert.equal(rawLengthOf(frame), 200n);
    assert.deepEqual(decompress(frame), backing.slice(100, 300), codec);
  }
});

test('decompress refuses more than maxBytes, before allocating', () => {
  const frame = compress(text, { codec: 'zlib' });
  assert.deepEqual(decompress(frame, { maxBytes: text.length }), text);
  throwsDynaslice(() => decompress(frame, { maxBytes: text.length - 1 }), 'DECOMPRESS_LIMIT', new RegExp(`${text.length}`));
  throwsDynaslice(() => decompress(frame, { maxBytes: 0 }), 'DECOMPRESS_LIMIT', /the option maxBytes raises it/);
  assert.deepEqual(decompress(compress(new Uint8Array(0)), { maxBytes: 0 }), new Uint8Array(0));
  // A header claiming 2^50 (or 2^64 - 1) bytes is refused by the default
  // 64 MiB limit from its header alone.
  for (const claimed of [2n ** 50n, 2n ** 64n - 1n, 64n * 1024n * 1024n + 1n]) {
    const bomb = frame.slice();
    new DataView(bomb.buffer).setBigUint64(5, claimed, true);
    throwsDynaslice(() => decompress(bomb), 'DECOMPRESS_LIMIT', new RegExp(`${claimed}`));
  }
  for (const maxBytes of [-1, 1.5, '100', Number.NaN]) {
    throwsDynaslice(() => decompress(frame, { maxBytes }), 'OPTIONS_INVALID');
  }
});

test('damaged frames give their codes', () => {
  const zlib = compress(text, { codec: 'zlib' });
  const none = compress(text, { codec: 'none' });
  const edit = (frame, change) => {
    const copy = frame.slice();
    change(copy, new DataView(copy.buffer));
    return copy;
  };
  throwsDynaslice(() => decompress(new Uint8Array(0)), 'FRAME_TRUNCATED');
  throwsDynaslice(() => decompress(zlib.subarray(0, 20)), 'FRAME_TRUNCATED');
  throwsDynaslice(() => decompress(edit(zlib, (f) => { f[0] = 0x45; })), 'FRAME_BAD_MAGIC');
  throwsDynaslice(() => decompress(edit(zlib, (f) => { f[3] = 2; })), 'FRAME_UNSUPPORTED_VERSION');
  throwsDynaslice(() => decompress(edit(zlib, (f) => { f[4] = 6; })), 'CODEC_UNKNOWN');
  throwsDynaslice(() => decompress(edit(zlib, (f) => { f[f.length - 1] ^= 1; })), 'DIGEST_MISMATCH');
  throwsDynaslice(() => decompress(edit(none, (f) => { f[20] ^= 1; })), 'DIGEST_MISMATCH');
  throwsDynaslice(() => decompress(edit(zlib, (f, v) => v.setBigUint64(5, BigInt(text.length + 1), true))), 'LENGTH_MISMATCH');
  throwsDynaslice(() => decompress(edit(zlib, (f, v) => v.setBigUint64(5, BigInt(text.length - 1), true))), 'LENGTH_MISMATCH');
  throwsDynaslice(() => decompress(edit(none, (f, v) => v.setBigUint64(5, BigInt(text.length - 1), true))), 'LENGTH_MISMATCH');
  // One stray byte between body and trailer.
  const trailing = new Uint8Array(zlib.length + 1);
  trailing.set(zlib.subarray(0, zlib.length - 8));
  trailing.set(zlib.subarray(zlib.length - 8), zlib.length - 7);
  throwsDynaslice(() => decompress(trailing), 'CODEC_CORRUPT');
});

test('a frame read from a larger buffer decodes', () => {
  const frame = compress(text, { codec: 'gzip' });
  const backing = new Uint8Array(frame.length + 64);
  backing.set(frame, 32);
  assert.deepEqual(decompress(backing.subarray(32, 32 + frame.length)), text);
});

// Bytes are checked: a string must not compress as that many zero bytes.
test(
  'compress and decompress refuse what is not a Uint8Array with INPUT_INVALID',
  () => {
    for (const bad of ['abc', 123, undefined, null, {}]) {
      throwsDynaslice(() => compress(bad, { codec: 'none' }), 'INPUT_INVALID');
      throwsDynaslice(() => decompress(bad), 'INPUT_INVALID');
    }
    // An ArrayBuffer: its bytes (items accept it as binary), or refused.
    const buffer = Uint8Array.of(1, 2, 3).buffer;
    try {
      assert.deepEqual(decompress(compress(buffer, { codec: 'none' })), Uint8Array.of(1, 2, 3));
    } catch (error) {
      assert.equal(error.code, 'INPUT_INVALID', error.message);
    }
  },
);
