// The shared golden vectors of tests/vectors/, the same cases core's Rust
// tests read: sizes, numbers, invalid items, codec bodies written by other
// implementations, and chunk sets written by an independent implementation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compress, decompress, deleteRequests, itemSize, readRequests, reassemble, split, validateItem } from 'dynaslice';
import { expandItem, hexToBytes, keyOption, loadVectors } from '../support/vectors.mjs';
import { batchEntries, shuffled, throwsDynaslice } from '../support/check.mjs';

const sizes = await loadVectors('sizes.json', 'dynaslice-size-vectors/1');
const codecs = await loadVectors('codecs.json', 'dynaslice-codec-vectors/1');
const chunkSets = await loadVectors('chunks.v2.json', 'dynaslice-chunk-vectors/2');
// Written before anchors, by older writers: every set must still read.
const chunkSetsV1 = await loadVectors('chunks.json', 'dynaslice-chunk-vectors/1');

const LIMIT = 409_600;
const nesting = (c) => c.code === 'NESTING_TOO_DEEP';

test('sizes.json items: itemSize is exact, and the item is otherwise valid', () => {
  assert.ok(sizes.items.length >= 70, 'the file has its cases');
  for (const c of sizes.items) {
    const item = expandItem(c.item);
    assert.equal(itemSize(item), c.size, c.name);
    // Each item breaks no rule but, for *-over-limit, the size limit.
    const expected = c.size > LIMIT ? [{ code: 'ITEM_TOO_LARGE', path: '' }] : [];
    const found = validateItem(item).map(({ code, path }) => ({ code, path }));
    assert.deepEqual(found, expected, c.name);
  }
});

test('sizes.json numbers: { n: { N: text } } costs 1 + size, and is valid', () => {
  assert.ok(sizes.numbers.length >= 60);
  for (const c of sizes.numbers) {
    const item = { n: { N: c.text } };
    assert.equal(itemSize(item), 1 + c.size, c.text);
    assert.deepEqual(validateItem(item), [], c.text);
  }
});

test('sizes.json invalid: exactly one violation with its code and path', () => {
  const cases = sizes.invalid.filter((c) => !nesting(c));
  assert.ok(cases.length >= 55);
  for (const c of cases) {
    const options = c.key ? { key: keyOption(c.key) } : {};
    const found = validateItem(expandItem(c.item), options);
    assert.equal(found.length, 1, `${c.name}: ${JSON.stringify(found)}`);
    assert.equal(found[0].code, c.code, c.name);
    assert.equal(found[0].path, c.path, c.name);
    assert.equal(typeof found[0].message, 'string');
    assert.ok(found[0].message.length > 0, c.name);
  }
});

// The reader reads a few levels past DynamoDB's limit, so a value 33 deep is
// a violation validateItem returns, with its path, like any other.
test('sizes.json invalid, nesting: one NESTING_TOO_DEEP violation with its path', () => {
  const cases = sizes.invalid.filter(nesting);
  assert.equal(cases.length, 4);
  for (const c of cases) {
    const found = validateItem(expandItem(c.item));
    assert.deepEqual(found.map(({ code, path }) => ({ code, path })), [{ code: c.code, path: c.path }], c.name);
  }
});

// --- codecs.json -----------------------------------------------------------

const CODEC_IDS = { none: 0, deflate: 1, zlib: 2, gzip: 3, snappy: 4, zstd: 5 };

/** The reference XXH3-64 of `raw_hex`, as the frame stores it (u64 little-endian). */
const referenceDigests = new Map(codecs.digests.map((d) => [d.raw_hex, hexToBytes(d.xxh3_64).reverse()]));

/** A dynaslice frame around an external body (docs/FORMAT.md §4, as core/tests/golden.rs builds it). */
function frame(codec, raw, body, digestLE) {
  const out = new Uint8Array(13 + body.length + 8);
  out.set([0x44, 0x53, 0x5a, 1, CODEC_IDS[codec]]);
  new DataView(out.buffer).setBigUint64(5, BigInt(raw.length), true);
  out.set(body, 13);
  out.set(digestLE, 13 + body.length);
  return out;
}

test('codecs.json digests: a none frame is header, raw bytes and the reference XXH3-64', () => {
  assert.ok(codecs.digests.length >= 5);
  for (const d of codecs.digests) {
    const raw = hexToBytes(d.raw_hex);
    const expected = frame('none', raw, raw, referenceDigests.get(d.raw_hex));
    assert.deepEqual(compress(raw, { codec: 'none' }), expected, d.raw_hex.slice(0, 32));
  }
});

test('codecs.json bodies from other implementations decode exactly', () => {
  assert.ok(codecs.bodies.length >= 15);
  const computed = [];
  for (const c of codecs.bodies) {
    const raw = hexToBytes(c.raw_hex);
    const body = hexToBytes(c.body_hex);
    // Every raw has a reference digest but one snappy case; for it the
    // digest is the trailer of a none frame, which the test above checks
    // against the reference implementation.
    let digest = referenceDigests.get(c.raw_hex);
    if (digest === undefined) {
      digest = compress(raw, { codec: 'none' }).slice(-8);
      computed.push(c.name);
    }
    const framed = frame(c.codec, raw, body, digest);
    assert.deepEqual(decompress(framed), raw, c.name);
    assert.deepEqual(decompress(framed, { maxBytes: raw.length }), raw, c.name);
    if (raw.length > 0) {
      throwsDynaslice(() => decompress(framed, { maxBytes: raw.length - 1 }), 'DECOMPRESS_LIMIT');
    }
    // One byte less of body is refused, never a silent truncation.
    if (body.length > 0) {
      const short = frame(c.codec, raw, body.subarray(0, body.length - 1), digest);
      throwsDynaslice(() => decompress(short), ['CODEC_CORRUPT', 'LENGTH_MISMATCH']);
    }
  }
  assert.deepEqual(computed, ['snappy-abc-hand-encoded']);
});


// --- chunks.json -----------------------------------------------------------

/** The ULID text of a version id's 48-bit time and 80 random bits (docs/FORMAT.md §6). */
function ulid({ unix_ms: unixMs, random }) {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let value = (BigInt(unixMs) << 80n) | BigInt(random);
  let text = '';
  for (let i = 0; i < 26; i++, value >>= 5n) text = alphabet[Number(value & 31n)] + text;
  return text;
}

const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** A DynamoDB JSON value as the package returns it: binary as Uint8Array. */
function withBytes(value) {
  const [type] = Object.keys(value);
  const inner = value[type];
  if (type === 'B') return { B: typeof inner === 'string' ? fromBase64(inner) : inner };
  if (type === 'BS') return { BS: inner.map(fromBase64) };
  if (type === 'L') return { L: inner.map(withBytes) };
  if (type === 'M') return { M: itemWithBytes(inner) };
  return value;
}
const itemWithBytes = (item) => Object.fromEntries(Object.entries(item).map(([n, v]) => [n, withBytes(v)]));

/** The table options of a case: its key schema and layout. */
function tableOf(c) {
  const layout = c.layout.kind === 'collection' ? { layout: 'collection' } : { layout: 'table', chunkKey: c.layout.key_name };
  return { table: 'vectors', key: keyOption(c.key), ...layout };
}

const chunkKeyOf = (chunk) => Object.fromEntries(Object.entries(chunk).filter(([name]) => !['_d', '_h', '_da'].includes(name)));

test('chunks.v2.json and chunks.json: every chunk set reassembles to its item, chunks in any order', () => {
  assert.ok(chunkSets.cases.length >= 20);
  assert.ok(chunkSetsV1.cases.length >= 19);
  for (const c of [...chunkSets.cases, ...chunkSetsV1.cases]) {
    const expected = itemWithBytes(expandItem(c.item));
    const options = tableOf(c);
    assert.deepEqual(reassemble(c.parent, c.chunks, options), expected, c.name);
    assert.deepEqual(reassemble(c.parent, shuffled(c.chunks), options), expected, c.name);
    assert.equal(c.parent._ds.M.v.S, ulid(c.options.version), c.name);
  }
});

test('chunks.v2.json: readRequests and deleteRequests name exactly the chunk keys', () => {
  for (const c of chunkSets.cases) {
    const options = tableOf(c);
    const chunkTable = c.layout.kind === 'collection' ? 'vectors' : 'vectors_chunks';
    const keys = c.chunks.map(chunkKeyOf);
    const reads = readRequests(c.parent, options).batchGetItems.flatMap((b) => b.RequestItems[chunkTable].Keys);
    assert.deepEqual(reads, keys.map(itemWithBytes), c.name);
    const deletes = batchEntries(deleteRequests(c.parent, options).batchWriteItems, chunkTable);
    assert.deepEqual(deletes, keys.map((k) => ({ DeleteRequest: { Key: itemWithBytes(k) } })), c.name);
  }
});

test('chunks.v2.json: split writes exactly the vector\'s parent and chunks, anchors included', () => {
  const cases = chunkSets.cases.filter((c) => !c.decode_only);
  assert.equal(cases.length, 16);
  for (const c of cases) {
    const result = split(expandItem(c.item), {
      ...tableOf(c),
      codec: c.options.codec,
      chunkItemBytes: c.options.chunk_item_bytes,
      itemLimit: c.options.item_limit,
      parentBudget: c.options.parent_budget,
      inline: c.options.inline,
      version: ulid(c.options.version),
    });
    assert.deepEqual(result.parent, itemWithBytes(c.parent), c.name);
    assert.deepEqual(result.chunks, c.chunks.map(itemWithBytes), c.name);
  }
});
