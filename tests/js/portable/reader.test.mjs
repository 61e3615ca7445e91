// ChunkReader: one stored attribute streamed out of its parent and chunks,
// pushed in order: the bytes reassemble gives, from every codec and layout,
// with each chunk checked before any of its bytes come out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChunkReader, chunkData, readRequests, reassemble, split } from 'dynaslice';
import { randomBytes, throwsDynaslice } from '../support/check.mjs';

const table = { table: 'files', key: [{ name: 'pk', type: 'S' }] };
const collection = { table: 'files', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection' };
const VERSION = '01HF7YAT00000000000000001A';
const CODECS = ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd'];

/** Text that compresses, about `n` bytes of it. */
function text(n) {
  const words = ['order ', 'shipped ', 'café ', '返品 ', '{"sku":', '1299.95,'];
  let out = '';
  for (let i = 0; out.length < n; i++) out += words[(i * 7 + (i >> 3)) % words.length] + i;
  return out;
}

/** An item whose `data` sits between two other spilled attributes. */
function fileItem(keys, data) {
  return {
    ...keys,
    a: { L: Array.from({ length: 1500 }, (_, i) => ({ N: `${i}.5` })) },
    data,
    z: { M: Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`key${i}`, { SS: [`é${i}`, 'x'] }])) },
  };
}

/** True when `chunk` carries every attribute of `key`, equal. */
function hasKey(chunk, key) {
  return Object.entries(key).every(([name, value]) => {
    const [[type, inner]] = Object.entries(value);
    const other = chunk[name]?.[type];
    return inner instanceof Uint8Array ? other instanceof Uint8Array && sameBytes(other, inner) : other === inner;
  });
}

/** Every piece `read()` gives until it is empty. */
function drain(reader, pieces) {
  for (let piece = reader.read(); piece.length > 0; piece = reader.read()) pieces.push(piece);
}

/** Streams `attribute` out of `parent`, fetching chunks from `chunks` two at a time. */
function streamRead(parent, chunks, options) {
  const reader = new ChunkReader(parent, options);
  try {
    const pieces = [];
    drain(reader, pieces);
    for (let start = 0; start < reader.chunkCount; start += 2) {
      const window = reader.chunkKeys(start, start + 2).map((key) => chunks.find((c) => hasKey(c, key)));
      for (const chunk of window) {
        const first = reader.push(chunk);
        if (first.length > 0) pieces.push(first);
        drain(reader, pieces);
      }
    }
    reader.finish();
    return concat(pieces);
  } finally {
    reader.free();
  }
}

function sameBytes(a, b) {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function concat(pieces) {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

test('every codec and layout, inline or in chunks: the bytes reassemble gives', () => {
  const binary = randomBytes(450_000);
  const string = text(700_000);
  const layouts = new Set();
  for (const [options, keys] of [[table, { pk: { S: 'f#1' } }], [collection, { pk: { S: 'f#1' }, sk: { S: 'v\\1' } }]]) {
    for (const codec of CODECS) {
      for (const data of [{ B: binary }, { S: string }]) {
        const item = fileItem(keys, data);
        const written = split(item, { ...options, codec, version: VERSION, chunkItemBytes: 65_536 });
        const back = reassemble(written.parent, written.chunks, options).data;
        const expected = back.B ?? new TextEncoder().encode(back.S);
        layouts.add(written.manifest.inline ? 'inline' : 'chunks');
        const got = streamRead(written.parent, written.chunks, { ...options, attribute: 'data' });
        assert.ok(sameBytes(got, expected), `${options.layout ?? 'table'} ${codec} ${data.B ? 'B' : 'S'}: ${got.length} of ${expected.length} bytes`);
      }
    }
  }
  assert.deepEqual([...layouts].sort(), ['chunks', 'inline']);
});

test('chunkKeys are the keys readRequests reads, in order, from chunkTable', () => {
  const written = split(fileItem({ pk: { S: 'f' } }, { B: randomBytes(900_000) }), { ...table, codec: 'none', version: VERSION });
  const reader = new ChunkReader(written.parent, { ...table, attribute: 'data' });
  assert.equal(reader.chunkCount, written.chunks.length);
  assert.equal(reader.chunkTable, 'files_chunks');
  const planned = readRequests(written.parent, table).batchGetItems.flatMap((b) => b.RequestItems.files_chunks.Keys);
  assert.deepEqual(reader.chunkKeys(0, reader.chunkCount), planned);
  assert.deepEqual(reader.chunkKeys(1, 1_000), planned.slice(1), 'end stops at the count');
  assert.deepEqual(reader.chunkKeys(2, 1), []);
  written.chunks.forEach((chunk, seq) => assert.ok(hasKey(chunk, reader.chunkKeys(seq, seq + 1)[0]), `chunk ${seq}`));
  throwsDynaslice(() => reader.chunkKeys(-1, 2), 'INPUT_INVALID');
  throwsDynaslice(() => reader.chunkKeys(0, 1.5), 'INPUT_INVALID');
  reader.free();
});

test('a flipped byte in any chunk throws CHUNK_DIGEST_MISMATCH from push, before its bytes come out', () => {
  const data = randomBytes(450_000);
  const written = split(fileItem({ pk: { S: 'f' } }, { B: data }), { ...table, codec: 'deflate', version: VERSION, chunkItemBytes: 65_536 });
  assert.ok(written.chunks.length >= 3);
  for (let bad = 0; bad < written.chunks.length; bad++) {
    const reader = new ChunkReader(written.parent, { ...table, attribute: 'data' });
    const pieces = [];
    let seq = 0;
    for (; seq < bad; seq++) {
      pieces.push(reader.push(written.chunks[seq]));
      drain(reader, pieces);
    }
    const damaged = structuredClone(written.chunks[bad]);
    const bytes = chunkData(damaged);
    bytes[bytes.length >> 1] ^= 1;
    throwsDynaslice(() => reader.push(damaged), 'CHUNK_DIGEST_MISMATCH', new RegExp(`chunk ${bad}`));
    // What came out is the start of the attribute, from the chunks before the damaged one.
    const got = concat(pieces);
    if (bad === 0) assert.equal(got.length, 0);
    assert.ok(sameBytes(got, data.subarray(0, got.length)), `damaged chunk ${bad}`);
    throwsDynaslice(() => reader.read(), 'READER_FINISHED', /CHUNK_DIGEST_MISMATCH/);
    reader.free();
  }
});

test('attributes on the parent need no chunks; missing or not S or B are typed errors', () => {
  const item = { ...fileItem({ pk: { S: 'f' } }, { B: randomBytes(450_000) }), title: { S: 'rapport é' }, count: { N: '3' } };
  const written = split(item, { ...table, codec: 'zstd', version: VERSION });
  const title = new ChunkReader(written.parent, { ...table, attribute: 'title' });
  assert.equal(title.chunkCount, 0);
  assert.equal(title.size, new TextEncoder().encode('rapport é').length);
  assert.deepEqual(title.read(), new TextEncoder().encode('rapport é'));
  assert.equal(title.read().length, 0);
  title.finish();
  title.free();

  const plain = { pk: { S: 'small' }, data: { B: Uint8Array.of(1, 2, 3) } };
  assert.deepEqual(streamRead(plain, [], { ...table, attribute: 'data' }), Uint8Array.of(1, 2, 3));

  throwsDynaslice(() => new ChunkReader(written.parent, { ...table, attribute: 'count' }), 'ATTRIBUTE_NOT_BLOB', /count/);
  throwsDynaslice(() => new ChunkReader(written.parent, { ...table, attribute: 'nope' }), 'ATTRIBUTE_NOT_FOUND', /nope/);
  throwsDynaslice(() => new ChunkReader(plain, { ...table, attribute: 'nope' }), 'ATTRIBUTE_NOT_FOUND');
  throwsDynaslice(() => new ChunkReader(plain, table), 'OPTIONS_INVALID', /attribute/);
  throwsDynaslice(() => streamRead(written.parent, written.chunks, { ...table, attribute: 'a' }), 'ATTRIBUTE_NOT_BLOB');
});

test('size, finishing early or twice, a missing chunk, and use after free are typed', () => {
  const data = randomBytes(500_000);
  const written = split(fileItem({ pk: { S: 'f' } }, { B: data }), { ...table, codec: 'none', version: VERSION });
  const options = { ...table, attribute: 'data' };

  const reader = new ChunkReader(written.parent, options);
  assert.equal(reader.size, undefined, 'unknown before the stream reaches it');
  reader.push(written.chunks[0]);
  assert.equal(reader.size, data.length);
  throwsDynaslice(() => reader.finish(), 'READER_NOT_DRAINED');
  throwsDynaslice(() => reader.finish(), 'READER_FINISHED');
  reader.free();
  throwsDynaslice(() => reader.read(), 'READER_FREED');
  reader.free();

  const short = new ChunkReader(written.parent, options);
  short.push(written.chunks[0]);
  drain(short, []);
  throwsDynaslice(() => short.finish(), 'CHUNK_MISSING');
  short.free();

  const skipping = new ChunkReader(written.parent, options);
  throwsDynaslice(() => skipping.push(written.chunks[1]), 'CHUNK_MISSING');
  skipping.free();
});
