// Capacity: split's write capacity request by request (`capacity`),
// readCapacity, and MAX_ITEM_BYTES. Every figure is checked against the
// DynamoDB developer guide's rules computed here from exact item sizes:
// writes cost one unit per started KB (1,024 bytes) of each item, at least
// one, twice that in a transaction; strongly consistent reads one unit per
// started 4 KB of each item, eventually consistent reads half that.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemSize, MAX_ITEM_BYTES, readCapacity, readRequests, split, Splitter, validateItem } from 'dynaslice';
import { randomBytes, throwsDynaslice } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const VERSION = '01HF7YAT00000000000000001A';

const big = (bytes) => ({ pk: { S: 'doc' }, data: { B: randomBytes(bytes) }, title: { S: 'report' } });
const writeUnits = (item, transactional) => Math.max(1, Math.ceil(itemSize(item) / 1024)) * (transactional ? 2 : 1);
const readUnits = (item, consistent = true) => (Math.max(1, Math.ceil(itemSize(item) / 4096)) * (consistent ? 2 : 1)) / 2;
const sum = (numbers) => numbers.reduce((total, n) => total + n, 0);

/** True when `item` has another key than `parent`: a chunk (each has its own key). */
const otherKey = (item, parent) => JSON.stringify([item.pk, item.sk]) !== JSON.stringify([parent.pk, parent.sk]);

/** The expected capacity entry of a request writing `items`, of which the chunks are the ones not keyed as `parent`. */
function expectedRequest(operation, items, parent, transactional = false) {
  const entries = items.map((item) => ({
    chunk: otherKey(item, parent),
    bytes: itemSize(item),
    writeUnits: writeUnits(item, transactional),
  }));
  return { operation, transactional, items: entries, writeUnits: sum(entries.map((e) => e.writeUnits)) };
}

test('MAX_ITEM_BYTES is the limit split and validateItem apply: 409,600 bytes', () => {
  assert.equal(MAX_ITEM_BYTES, 409_600);
  // pk (2 + 1 bytes), then the binary's name (1 byte) and its bytes.
  const sized = (bytes) => ({ pk: { S: 'a' }, b: { B: randomBytes(bytes - 4) } });
  assert.equal(itemSize(sized(MAX_ITEM_BYTES)), MAX_ITEM_BYTES);
  const fits = split(sized(MAX_ITEM_BYTES), table);
  assert.equal(fits.manifest, undefined, 'an item of exactly the limit is written as it is');
  assert.deepEqual(validateItem(sized(MAX_ITEM_BYTES)), []);
  const over = split(sized(MAX_ITEM_BYTES + 1), table);
  assert.ok(over.manifest, 'one byte more is split');
  assert.deepEqual(validateItem(sized(MAX_ITEM_BYTES + 1)).map((v) => v.code), ['ITEM_TOO_LARGE']);
});

test('an item that fits: one PutItem of the item, one unit per started KB', () => {
  for (const bytes of [10, 1024 - 4, 1024 - 3, 2048 - 4, 2048 - 3, MAX_ITEM_BYTES - 4]) {
    const item = { pk: { S: 'a' }, b: { B: randomBytes(bytes) } };
    const result = split(item, table);
    assert.deepEqual(result.capacity, [expectedRequest('PutItem', [result.requests.putItem.Item], result.requests.putItem.Item)]);
    assert.equal(result.capacity[0].writeUnits, result.writeUnits);
  }
  // The boundaries themselves, spelled out: 1,024 bytes is one unit, 1,025 two.
  const units = (bytes) => split({ pk: { S: 'a' }, b: { B: new Uint8Array(bytes - 4) } }, table).capacity[0].writeUnits;
  assert.deepEqual([units(1024), units(1025), units(2048), units(2049), units(MAX_ITEM_BYTES)], [1, 2, 2, 3, 400]);
});

test('an inlined item: one PutItem of the parent, which is not a chunk', () => {
  const item = { pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) } };
  const result = split(item, table);
  assert.equal(result.manifest.inline, true);
  assert.deepEqual(result.capacity, [expectedRequest('PutItem', [result.parent], result.parent)]);
});

test('a transaction: one TransactWriteItems, each item at twice its units, the parent last', () => {
  const result = split(big(1_000_000), { ...table, version: VERSION, mode: 'auto' });
  const items = result.requests.transactWriteItems.TransactItems.map((action) => action.Put.Item);
  const expected = expectedRequest('TransactWriteItems', items, result.parent, true);
  assert.deepEqual(result.capacity, [expected]);
  assert.deepEqual(result.capacity[0].items.map((i) => i.chunk), [true, true, true, false]);
  assert.deepEqual(result.capacity[0].items.slice(0, 2).map((i) => i.writeUnits), [800, 800], 'a full chunk is 400 KB, twice');
  assert.equal(result.capacity[0].writeUnits, result.writeUnits);
});

test('batches: one BatchWriteItem per batch in order, then the commit; each item rounded up on its own', () => {
  // 2,500-byte chunks cost 3 units each: 25 of them rounded together would be 62.
  const result = split(big(500_000), { ...table, codec: 'none', chunkItemBytes: 2500, mode: 'batch', version: VERSION });
  const { batchWriteItems, commit } = result.requests;
  assert.ok(batchWriteItems.length >= 3);
  const expected = [
    ...batchWriteItems.map((batch) => expectedRequest('BatchWriteItem', batch.RequestItems.docs_chunks.map((w) => w.PutRequest.Item), commit.Item)),
    expectedRequest('PutItem', [commit.Item], commit.Item),
  ];
  assert.deepEqual(result.capacity, expected);
  assert.equal(result.capacity[0].items.length, 25);
  assert.equal(result.capacity[0].writeUnits, 75);
  assert.ok(result.capacity.slice(0, -1).every((r) => r.items.every((i) => i.chunk)));
  assert.equal(sum(result.capacity.map((r) => r.writeUnits)), result.writeUnits);
  assert.equal(sum(result.capacity.map((r) => r.items.length)), result.chunks.length + 1);
});

test('replacing a stored version: capacity leaves out the cleanup, in the collection layout too', () => {
  const collection = { table: 'docs', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection' };
  const item = { pk: { S: 'doc' }, sk: { S: 'v' }, data: { B: randomBytes(900_000) } };
  const first = split(item, collection);
  const second = split(item, { ...collection, expect: first.parent, mode: 'atomic' });
  assert.ok(second.requests.cleanup.length > 0);
  const items = second.requests.transactWriteItems.TransactItems.map((action) => action.Put.Item);
  assert.deepEqual(second.capacity, [expectedRequest('TransactWriteItems', items, second.parent, true)]);
  assert.equal(second.capacity[0].writeUnits, second.writeUnits);
});

test('a streamed split: capacity holds the commit alone (its chunks came from push)', () => {
  const splitter = new Splitter({ pk: { S: 'upload' } }, { ...table, attribute: 'data', size: 1_000_000, version: VERSION });
  let pushed = [];
  try {
    pushed = splitter.push(randomBytes(1_000_000));
    const result = splitter.finish();
    assert.deepEqual(result.capacity, [expectedRequest('PutItem', [result.requests.commit.Item], result.requests.commit.Item)]);
    const chunks = [...pushed, ...result.chunks];
    assert.equal(result.writeUnits, result.capacity[0].writeUnits + sum(chunks.map((c) => writeUnits(c, false))));
  } finally {
    splitter.free();
  }
});

test('readCapacity of an item that was not split: its GetItem, per started 4 KB', () => {
  for (const bytes of [10, 4096 - 4, 4096 - 3, MAX_ITEM_BYTES - 4]) {
    const parent = { pk: { S: 'a' }, b: { B: randomBytes(bytes) } };
    const units = readUnits(parent);
    assert.deepEqual(readCapacity(parent, table), { parentReadUnits: units, chunkReadUnits: 0, readUnits: units });
  }
  const units = (bytes) => readCapacity({ pk: { S: 'a' }, b: { B: new Uint8Array(bytes - 4) } }, table).readUnits;
  assert.deepEqual([units(4096), units(4097), units(MAX_ITEM_BYTES)], [1, 2, 100]);
  // The parent is read strongly consistent whatever consistentRead says (parentRequest always is).
  assert.equal(readCapacity({ pk: { S: 'a' } }, { ...table, consistentRead: false }).readUnits, 1);
});

test('readCapacity of a split item: the parent, then every chunk on its own', () => {
  const result = split(big(1_000_000), { ...table, codec: 'none', chunkItemBytes: 10_000, version: VERSION });
  assert.ok(result.chunks.length > 50);
  for (const consistentRead of [true, false]) {
    const options = { ...table, consistentRead };
    const chunkUnits = sum(result.chunks.map((c) => readUnits(c, consistentRead)));
    const capacity = readCapacity(result.parent, options);
    assert.deepEqual(capacity, { parentReadUnits: readUnits(result.parent), chunkReadUnits: chunkUnits, readUnits: readUnits(result.parent) + chunkUnits });
    assert.equal(capacity.chunkReadUnits, readRequests(result.parent, options).readUnits);
  }
  // A full 10,000-byte chunk is 3 units strongly consistent, 1.5 eventually: halves are kept.
  const full = result.chunks.length - 1;
  const eventual = readCapacity(result.parent, { ...table, consistentRead: false }).chunkReadUnits;
  assert.equal(eventual, full * 1.5 + readUnits(result.chunks.at(-1), false));
});

test('readCapacity refuses what readRequests refuses', () => {
  const { parent } = split(big(1_000_000), table);
  const damaged = { ...parent, _ds: { M: { ...parent._ds.M, v: { S: 'not a version' } } } };
  throwsDynaslice(() => readCapacity(damaged, table), 'MANIFEST_INVALID');
  throwsDynaslice(() => readCapacity(parent, { ...table, maxBytes: 1000 }), 'DECOMPRESS_LIMIT', /the option maxBytes raises it/);
  throwsDynaslice(() => readCapacity(parent, { ...table, consistentRead: 'yes' }), 'OPTIONS_INVALID');
  throwsDynaslice(() => readCapacity('parent', table), 'INPUT_INVALID');
});
