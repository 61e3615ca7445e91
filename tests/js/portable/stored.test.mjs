// Reading parts of stored items without knowing the format's attribute
// names: carriesVersion (is this parent that write?) and chunkData (a
// chunk's bytes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { carriesVersion, chunkData, decompress, split, Splitter } from 'dynaslice';
import { randomBytes, throwsDynaslice, toBase64 } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const VERSION = '01HF7YAT00000000000000001A';
const OTHER = '01HF7YAT00000000000000002B';

const big = (bytes) => ({ pk: { S: 'doc' }, data: { B: randomBytes(bytes) } });

/** The chunks' data, in order, as one array. */
function joined(chunks) {
  const parts = chunks.map(chunkData);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

test('carriesVersion: true for the parent of that write, false for another version', () => {
  const { parent, manifest } = split(big(1_000_000), { ...table, version: VERSION });
  assert.equal(manifest.version, VERSION);
  assert.equal(carriesVersion(parent, VERSION), true);
  assert.equal(carriesVersion(parent, OTHER), false);
  const next = split(big(1_000_000), { ...table, version: OTHER, expect: parent });
  assert.equal(carriesVersion(next.parent, OTHER), true);
  assert.equal(carriesVersion(next.parent, VERSION), false);
  // An inline payload has a manifest too.
  const inline = split({ pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) } }, { ...table, version: VERSION });
  assert.equal(inline.manifest.inline, true);
  assert.equal(carriesVersion(inline.parent, VERSION), true);
});

test('carriesVersion: false for no item and for an item that was not split', () => {
  assert.equal(carriesVersion(undefined, VERSION), false);
  assert.equal(carriesVersion(null, VERSION), false);
  assert.equal(carriesVersion({}, VERSION), false);
  const small = split({ pk: { S: 'doc' }, n: { N: '1' } }, { ...table, version: VERSION });
  assert.equal(small.manifest, undefined);
  assert.equal(carriesVersion(small.parent, VERSION), false);
});

test('carriesVersion: a damaged manifest is an error, not an answer', () => {
  const { parent } = split(big(1_000_000), { ...table, version: VERSION });
  const manifest = parent._ds.M;
  const withManifest = (value) => ({ ...parent, _ds: value });
  throwsDynaslice(() => carriesVersion(withManifest({ S: VERSION }), VERSION), 'MANIFEST_INVALID');
  throwsDynaslice(() => carriesVersion(withManifest({ M: { ...manifest, v: { S: 'not a version' } } }), VERSION), 'MANIFEST_INVALID');
  throwsDynaslice(() => carriesVersion(withManifest({ M: { ...manifest, n: { N: '-1' } } }), VERSION), 'MANIFEST_INVALID');
  const { v, ...noVersion } = manifest;
  assert.deepEqual(v, { S: VERSION });
  throwsDynaslice(() => carriesVersion(withManifest({ M: noVersion }), VERSION), 'MANIFEST_INVALID', /field v/);
  throwsDynaslice(() => carriesVersion(withManifest({ M: { ...manifest, f: { N: '4' } } }), VERSION), 'MANIFEST_UNSUPPORTED_VERSION');
  throwsDynaslice(() => carriesVersion(withManifest({ Q: 1 }), VERSION), 'INPUT_INVALID');
});

test('carriesVersion: the version must be a version id', () => {
  const { parent } = split(big(1_000_000), { ...table, version: VERSION });
  throwsDynaslice(() => carriesVersion(parent, 'v1'), 'VERSION_ID_INVALID', /26/);
  throwsDynaslice(() => carriesVersion(parent, VERSION.toLowerCase()), 'VERSION_ID_INVALID');
  throwsDynaslice(() => carriesVersion(undefined, 'v1'), 'VERSION_ID_INVALID');
  for (const version of [undefined, null, 42, { S: VERSION }]) throwsDynaslice(() => carriesVersion(parent, version), 'INPUT_INVALID');
  for (const item of ['parent', 42, [], new Date()]) throwsDynaslice(() => carriesVersion(item, VERSION), 'INPUT_INVALID');
});

test('carriesVersion reads the manifest alone: the rest of the parent does not cross into WebAssembly', () => {
  const { parent } = split(big(1_000_000), { ...table, version: VERSION });
  // An attribute no item may hold: refused if the whole parent were encoded.
  assert.equal(carriesVersion({ ...parent, odd: { Q: 'x' } }, VERSION), true);
});

test('chunkData: the chunks\' bytes in order are the stored frame, which decompresses with its digest checked', () => {
  for (const codec of ['none', 'zstd', 'deflate']) {
    const item = { pk: { S: 'doc' }, data: { B: randomBytes(600_000) }, text: { S: 'line of text\n'.repeat(80_000) } };
    const { chunks, manifest } = split(item, { ...table, codec, chunkItemBytes: 100_000 });
    assert.ok(chunks.length >= 3, `${codec}: ${chunks.length} chunks`);
    const frame = joined(chunks);
    assert.equal(frame.length, manifest.storedBytes, codec);
    assert.equal(decompress(frame).length, manifest.rawBytes, codec);
    chunks.forEach((chunk) => assert.equal(chunkData(chunk), chunk._d.B, 'the chunk\'s own array, not a copy'));
  }
});

test('chunkData: chunks from a Splitter, and chunks whose binary is base64 text', () => {
  const payload = randomBytes(900_000);
  const splitter = new Splitter({ pk: { S: 'upload' } }, { ...table, attribute: 'data', size: payload.length });
  try {
    const chunks = [...splitter.push(payload.subarray(0, 500_000)), ...splitter.push(payload.subarray(500_000))];
    const result = splitter.finish();
    chunks.push(...result.chunks);
    const frame = joined(chunks);
    assert.equal(frame.length, result.manifest.storedBytes);
    assert.equal(decompress(frame).length, result.manifest.rawBytes);
    const asText = chunks.map((chunk) => ({ ...chunk, _d: { B: toBase64(chunk._d.B) } }));
    assert.deepEqual(joined(asText), frame);
  } finally {
    splitter.free();
  }
});

test('chunkData: anything but a chunk is CHUNK_MALFORMED', () => {
  const { parent, chunks } = split(big(1_000_000), table);
  const chunk = chunks[0];
  const cases = [
    parent,
    {},
    { ...chunk, _d: { S: 'data' } },
    { ...chunk, _d: { B: 'not base64!' } },
    { ...chunk, _d: { B: [1, 2] } },
    { ...chunk, _d: chunk._d.B },
    { ...chunk, _d: undefined },
    Object.assign(Object.create({ _d: chunk._d }), { pk: chunk.pk }),
    null,
    undefined,
    'chunk',
    [chunk],
  ];
  for (const item of cases) throwsDynaslice(() => chunkData(item), 'CHUNK_MALFORMED', /not a chunk/);
});

test('a getter or Proxy that throws while the item is read is INPUT_INVALID', () => {
  const { parent, chunks } = split(big(1_000_000), table);
  const throwing = (item, name) =>
    Object.defineProperty({ ...item }, name, {
      enumerable: true,
      get() {
        throw new Error('no access');
      },
    });
  throwsDynaslice(() => chunkData(throwing(chunks[0], '_d')), 'INPUT_INVALID', /no access/);
  throwsDynaslice(() => carriesVersion(throwing(parent, '_ds'), VERSION), 'INPUT_INVALID', /no access/);
  const trap = new Proxy({}, {
    getPrototypeOf() {
      throw new Error('trapped');
    },
  });
  throwsDynaslice(() => chunkData(trap), 'INPUT_INVALID', /trapped/);
  throwsDynaslice(() => carriesVersion(trap, VERSION), 'INPUT_INVALID', /trapped/);
});
