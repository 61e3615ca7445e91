// reassemble, and the read and delete requests: chunks in any order, both
// output formats, exact numbers, every digest and key checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteRequests, itemSize, NumberValue, parentRequest, readRequests, reassemble, split } from 'dynaslice';
import { batchEntries, randomBytes, shuffled, throwsDynaslice, toBase64 } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const collection = { table: 't', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection' };

const item = {
  pk: { S: 'doc' },
  data: { B: randomBytes(1_000_000) },
  n: { N: '12.5' },
  exact: { N: '123456789012345678901234567890.5' },
  spelled: { N: '1.50E3' },
  tags: { SS: ['x', 'y'] },
  scores: { NS: ['1', '2.5'] },
  blobs: { BS: [Uint8Array.of(0, 1), Uint8Array.of(2)] },
  flag: { BOOL: false },
  nothing: { NULL: true },
  list: { L: [{ N: '1' }, { S: 's' }, { L: [] }] },
  map: { M: { k: { N: '-7' }, inner: { M: { s: { S: 'é€😀' } } } } },
};
const written = split(item, { ...table, parentBudget: 0 });

test('chunks in any order give back the item exactly, in DynamoDB JSON', () => {
  assert.equal(written.chunks.length, 3);
  assert.deepEqual(written.manifest.spilled, Object.keys(item).filter((n) => n !== 'pk').sort());
  for (let i = 0; i < 5; i++) {
    assert.deepEqual(reassemble(written.parent, shuffled(written.chunks), table), item);
  }
  assert.deepEqual(reassemble(written.parent, written.chunks.slice().reverse(), table), item);
  assert.deepEqual(reassemble(written.parent, written.chunks, { ...table, format: 'dynamodb' }), item);
});

test('plain output: Set, Uint8Array, null, arrays, objects and JavaScript numbers', () => {
  const { exact, ...rest } = item; // exact needs wrapNumbers
  const fits = split(rest, { ...table, parentBudget: 0 });
  const back = reassemble(fits.parent, shuffled(fits.chunks), { ...table, format: 'plain' });
  assert.deepEqual(back, {
    pk: 'doc',
    data: item.data.B,
    n: 12.5,
    spelled: 1500,
    tags: new Set(['x', 'y']),
    scores: new Set([1, 2.5]),
    blobs: new Set([Uint8Array.of(0, 1), Uint8Array.of(2)]),
    flag: false,
    nothing: null,
    list: [1, 's', []],
    map: { k: -7, inner: { s: 'é€😀' } },
  });
});

test('wrapNumbers returns every number as a NumberValue with its exact text', () => {
  const back = reassemble(written.parent, written.chunks, { ...table, format: 'plain', wrapNumbers: true });
  for (const value of [back.n, back.exact, back.spelled, back.list[0], back.map.k, ...back.scores]) {
    assert.ok(value instanceof NumberValue, String(value));
  }
  assert.equal(back.exact.value, '123456789012345678901234567890.5');
  assert.equal(back.spelled.value, '1.50E3', 'spilled numbers keep the writer\'s text');
  assert.equal(back.map.k.toString(), '-7');
  assert.deepEqual([...back.scores].map((v) => v.value), ['1', '2.5']);
  assert.equal(JSON.stringify({ n: back.n }), '{"n":"12.5"}');
  assert.equal(back.pk, 'doc');
  assert.deepEqual(back.tags, new Set(['x', 'y']));
});

test('a number a JavaScript number cannot hold throws NUMBER_IMPRECISE without wrapNumbers', () => {
  throwsDynaslice(() => reassemble(written.parent, written.chunks, { ...table, format: 'plain' }), 'NUMBER_IMPRECISE', /exact/);
  // Integers beyond Number.MAX_SAFE_INTEGER are refused even when they print
  // back exactly (2^53, 1E21), as plain input refuses them: plain output
  // always goes back in as plain input.
  const cases = ['9007199254740993', '0.1000000000000000000001', '12345678901234567890123', '9007199254740992', '1E21'];
  for (const text of cases) {
    throwsDynaslice(() => reassemble({ pk: { S: 'a' }, x: { N: text } }, [], { ...table, format: 'plain' }), 'NUMBER_IMPRECISE', new RegExp(`^x: ${text}`));
    throwsDynaslice(() => reassemble({ pk: { S: 'a' }, x: { NS: ['1', text] } }, [], { ...table, format: 'plain' }), 'NUMBER_IMPRECISE');
    throwsDynaslice(() => reassemble({ pk: { S: 'a' }, x: { L: [{ M: { y: { N: text } } }] } }, [], { ...table, format: 'plain' }), 'NUMBER_IMPRECISE', /x\[0\]\.y/);
    const wrapped = reassemble({ pk: { S: 'a' }, x: { N: text } }, [], { ...table, format: 'plain', wrapNumbers: true });
    assert.equal(wrapped.x.value, text);
  }
  const fits = { '9007199254740991': 9007199254740991, '0.1': 0.1, '-0.25': -0.25, '1e-7': 1e-7, '2.5E-9': 2.5e-9, '+5': 5, '5.': 5 };
  for (const [text, number] of Object.entries(fits)) {
    assert.equal(reassemble({ pk: { S: 'a' }, x: { N: text } }, [], { ...table, format: 'plain' }).x, number, text);
  }
});

test('an unsplit item is its own parent; an inline parent needs no chunks', () => {
  const small = { pk: { S: 'a' }, x: { S: 'b' } };
  assert.deepEqual(reassemble(small, [], table), small);
  assert.deepEqual(reassemble(small, [], { ...table, format: 'plain' }), { pk: 'a', x: 'b' });
  throwsDynaslice(() => reassemble(small, written.chunks, table), 'CHUNKS_UNEXPECTED');
  const text = { pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) } };
  const inline = split(text, table);
  assert.equal(inline.manifest.inline, true);
  assert.deepEqual(reassemble(inline.parent, [], table), text);
  throwsDynaslice(() => reassemble(inline.parent, written.chunks, table), 'CHUNKS_UNEXPECTED');
});

test('binary read as base64 text (a DynamoDB JSON export) reassembles the same', () => {
  const chunks = written.chunks.map((chunk) => ({ ...chunk, _d: { B: toBase64(chunk._d.B) }, _h: { B: toBase64(chunk._h.B) } }));
  const parent = { ...written.parent, _ds: { M: { ...written.parent._ds.M, h: { B: toBase64(written.parent._ds.M.h.B) } } } };
  assert.deepEqual(reassemble(parent, chunks, table), item);
});

test('damaged, missing, foreign and duplicated chunks give their codes', () => {
  const { parent, chunks } = written;
  const replace = (seq, chunk) => chunks.map((c, i) => (i === seq ? chunk : c));
  const withData = (seq, bytes) => replace(seq, { ...chunks[seq], _d: { B: bytes } });
  const d0 = chunks[0]._d.B;
  const last = chunks.length - 1;
  const dLast = chunks[last]._d.B;
  throwsDynaslice(() => reassemble(parent, withData(0, d0.subarray(0, d0.length - 10)), table), 'CHUNK_TRUNCATED', /chunk 0/);
  throwsDynaslice(() => reassemble(parent, withData(last, dLast.subarray(0, dLast.length - 1)), table), 'CHUNK_TRUNCATED');
  const longer = new Uint8Array(dLast.length + 1);
  longer.set(dLast);
  throwsDynaslice(() => reassemble(parent, withData(last, longer), table), 'CHUNK_OVERSIZED');
  const flipped = d0.slice();
  flipped[1000] ^= 1;
  throwsDynaslice(() => reassemble(parent, withData(0, flipped), table), 'CHUNK_DIGEST_MISMATCH');
  throwsDynaslice(() => reassemble(parent, chunks.slice(1), table), 'CHUNK_MISSING', /chunk 0/);
  throwsDynaslice(() => reassemble(parent, [], table), 'CHUNK_MISSING');
  throwsDynaslice(() => reassemble(parent, [...chunks, chunks[1]], table), 'CHUNK_DUPLICATE');
  throwsDynaslice(() => reassemble(parent, replace(1, { pk: chunks[1].pk, _h: chunks[1]._h }), table), 'CHUNK_MALFORMED');
  const other = split({ ...item, data: { B: randomBytes(1_000_000) } }, { ...table, parentBudget: 0 });
  throwsDynaslice(() => reassemble(parent, replace(1, other.chunks[1]), table), 'CHUNK_FOREIGN_VERSION');
  const sameVersion = split({ ...item, pk: { S: 'other' } }, { ...table, parentBudget: 0, version: written.manifest.version });
  throwsDynaslice(() => reassemble(parent, replace(1, sameVersion.chunks[1]), table), 'CHUNK_FOREIGN_PARENT');
  throwsDynaslice(() => reassemble(parent, chunks, collection), 'LAYOUT_MISMATCH');
  throwsDynaslice(() => reassemble(parent, chunks, { ...table, maxBytes: written.manifest.rawBytes - 1 }), 'DECOMPRESS_LIMIT', /the option maxBytes raises it/);
  assert.deepEqual(reassemble(parent, chunks, { ...table, maxBytes: written.manifest.rawBytes }), item);
  throwsDynaslice(() => reassemble({ ...parent, _ds: { M: { ...parent._ds.M, f: { N: '4' } } } }, chunks, table), 'MANIFEST_UNSUPPORTED_VERSION');
  throwsDynaslice(() => reassemble({ ...parent, _ds: { S: 'x' } }, chunks, table), 'MANIFEST_INVALID');
  throwsDynaslice(() => reassemble({ ...parent, data: { S: 'also here' } }, chunks, table), 'ATTRIBUTE_CONFLICT');
});

test('parentRequest: the consistent GetItem of the key, from a key or a whole item, in either format', () => {
  const expected = { TableName: 'docs', Key: { pk: { S: 'doc' } }, ConsistentRead: true };
  assert.deepEqual(parentRequest({ pk: { S: 'doc' } }, table), expected);
  assert.deepEqual(parentRequest(item, table), expected);
  assert.deepEqual(parentRequest({ pk: 'doc', other: 1 }, { ...table, format: 'plain' }), expected);
  const composite = { table: 't', key: [{ name: 'pk', type: 'N' }, { name: 'sk', type: 'S' }] };
  assert.deepEqual(parentRequest({ pk: 12345678901234567890n, sk: 's', x: true }, { ...composite, format: 'plain' }), {
    TableName: 't',
    Key: { pk: { N: '12345678901234567890' }, sk: { S: 's' } },
    ConsistentRead: true,
  });
  throwsDynaslice(() => parentRequest({ pk: 'doc' }, table), 'INPUT_INVALID');
  throwsDynaslice(() => parentRequest({ pk: { S: 'doc' } }, { key: table.key }), 'OPTIONS_INVALID');
});

// A missing or mistyped key would make a GetItem DynamoDB refuses.
test('parentRequest refuses a key that does not match the key schema', () => {
  throwsDynaslice(() => parentRequest({ x: { S: 'doc' } }, table), 'KEY_MISSING');
  throwsDynaslice(() => parentRequest({ pk: { N: '1' } }, table), 'KEY_WRONG_TYPE');
  throwsDynaslice(() => parentRequest({ pk: { S: '' } }, table), 'KEY_EMPTY');
});

test('readRequests: BatchGetItems of exactly the chunk keys, at most 100 keys each, their read units and version', () => {
  const many = split({ pk: { S: 'doc' }, data: { B: randomBytes(600_000) } }, { ...table, chunkItemBytes: 2048 });
  assert.ok(many.chunks.length > 250);
  for (const [result, options] of [[written, table], [many, table]]) {
    const read = readRequests(result.parent, options);
    assert.equal(read.version, result.manifest.version);
    const keys = read.batchGetItems.flatMap((batch) => {
      assert.deepEqual(Object.keys(batch.RequestItems), ['docs_chunks']);
      assert.equal(batch.RequestItems.docs_chunks.ConsistentRead, true);
      assert.ok(batch.RequestItems.docs_chunks.Keys.length <= 100);
      return batch.RequestItems.docs_chunks.Keys;
    });
    assert.deepEqual(keys, result.chunks.map((chunk) => ({ pk: chunk.pk })));
    // Strongly consistent: one unit per started 4 KiB of each chunk.
    const units = result.chunks.reduce((total, chunk) => total + Math.ceil(itemSize(chunk) / 4096), 0);
    assert.equal(read.readUnits, units);
    const eventual = readRequests(result.parent, { ...options, consistentRead: false });
    assert.equal(eventual.readUnits, units / 2);
    eventual.batchGetItems.forEach((batch) => assert.equal(batch.RequestItems.docs_chunks.ConsistentRead, false));
  }
  assert.equal(readRequests(many.parent, table).batchGetItems.length, Math.ceil(many.chunks.length / 100));
  // At most 16 MiB of chunks per request: 40 full ones.
  const huge = split({ pk: { S: 'doc' }, data: { B: randomBytes(20_000_000) } }, table);
  const sizes = readRequests(huge.parent, table).batchGetItems.map((b) => b.RequestItems.docs_chunks.Keys.length);
  assert.deepEqual(sizes, [40, huge.chunks.length - 40]);
  assert.deepEqual(readRequests({ pk: { S: 'a' } }, table), { batchGetItems: [], readUnits: 0 });
  const inline = split({ pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) } }, table);
  // Stored inline: no chunk to read, but a version.
  assert.deepEqual(readRequests(inline.parent, table), { batchGetItems: [], readUnits: 0, version: inline.manifest.version });
});

test('readRequests in the collection layout: the parent table, partition and sort keys', () => {
  const result = split({ pk: { S: 'p' }, sk: { S: 's' }, data: { B: randomBytes(900_000) } }, collection);
  const [batch, ...rest] = readRequests(result.parent, collection).batchGetItems;
  assert.deepEqual(rest, []);
  assert.deepEqual(batch.RequestItems.t.Keys, result.chunks.map((c) => ({ pk: c.pk, sk: c.sk })));
  throwsDynaslice(() => readRequests(result.parent, { ...collection, layout: 'table' }), 'LAYOUT_MISMATCH');
});

test('deleteRequests: the parent\'s conditional delete, then deletes of exactly its chunks', () => {
  const { parent, chunks, manifest } = written;
  const { deleteItem, batchWriteItems } = deleteRequests(parent, table);
  assert.deepEqual(deleteItem, {
    TableName: 'docs',
    Key: { pk: { S: 'doc' } },
    ConditionExpression: '#m.#v = :v AND attribute_not_exists(#m.#u)',
    ExpressionAttributeNames: { '#m': '_ds', '#v': 'v', '#u': 'u' },
    ExpressionAttributeValues: { ':v': { S: manifest.version } },
  });
  assert.deepEqual(batchEntries(batchWriteItems, 'docs_chunks'), chunks.map((c) => ({ DeleteRequest: { Key: { pk: c.pk } } })));
  const many = split({ pk: { S: 'doc' }, data: { B: randomBytes(600_000) } }, { ...table, chunkItemBytes: 4096 });
  const batches = deleteRequests(many.parent, table).batchWriteItems;
  batches.forEach((b) => assert.ok(b.RequestItems.docs_chunks.length <= 25));
  assert.equal(batchEntries(batches, 'docs_chunks').length, many.chunks.length);
  assert.deepEqual(deleteRequests({ pk: { S: 'a' }, x: { S: 'b' } }, table), {
    deleteItem: {
      TableName: 'docs',
      Key: { pk: { S: 'a' } },
      ConditionExpression: 'attribute_exists(#k) AND attribute_not_exists(#m)',
      ExpressionAttributeNames: { '#k': 'pk', '#m': '_ds' },
    },
    batchWriteItems: [],
  });
  throwsDynaslice(() => deleteRequests(parent, collection), 'LAYOUT_MISMATCH');
});

test('readRequests refuses a consistentRead that is not a boolean', () => {
  throwsDynaslice(() => readRequests(written.parent, { ...table, consistentRead: 'no' }), 'OPTIONS_INVALID');
});
