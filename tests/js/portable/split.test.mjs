// split: modes, layouts, the request shapes @aws-sdk/client-dynamodb takes,
// DynamoDB's request limits, expectations and their cleanup, write units.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemSize, reassemble, split } from 'dynaslice';
import { batchEntries, randomBytes, throwsDynaslice, writeUnitsOf } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const VERSION = '01HF7YAT00000000000000001A';
const LIMIT = 409_600;
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const NOT_EXISTS = { ConditionExpression: 'attribute_not_exists(#k)', ExpressionAttributeNames: { '#k': 'pk' } };

const big = (bytes, pk = 'doc') => ({ pk: { S: pk }, data: { B: randomBytes(bytes) }, title: { S: 'report' } });
const sum = (items) => items.reduce((total, item) => total + writeUnitsOf(item), 0);
const txBytes = (result) => [...result.chunks, result.parent].reduce((total, item) => total + itemSize(item), 0);

test('an item that fits is one PutItem of the item itself, conditional on absence', () => {
  const item = { pk: { S: 'a' }, n: { N: '12.5' }, tags: { SS: ['x', 'y'] }, blob: { B: Uint8Array.of(1, 2, 3) } };
  const result = split(item, table);
  assert.deepEqual(result.parent, item);
  assert.deepEqual(result.chunks, []);
  assert.equal(result.manifest, undefined);
  assert.equal(result.requests.mode, 'single');
  assert.deepEqual(result.requests.putItem, { TableName: 'docs', Item: item, ...NOT_EXISTS });
  assert.deepEqual(result.requests.cleanup, []);
  assert.equal(result.requests.transactWriteItems, undefined);
  assert.equal(result.requests.batchWriteItems, undefined);
  assert.equal(result.writeUnits, 1);
  // An item of exactly 409,600 bytes still fits; 2 KiB and a byte costs 3 units.
  const atLimit = { pk: { S: 'a' }, b: { B: new Uint8Array(LIMIT - 4) } };
  assert.equal(itemSize(atLimit), LIMIT);
  const whole = split(atLimit, table);
  assert.equal(whole.requests.mode, 'single');
  assert.equal(whole.writeUnits, 400);
  assert.equal(split({ pk: { S: 'a' }, b: { B: new Uint8Array(2048 - 4 + 1) } }, table).writeUnits, 3);
});

test('plain input is written as DynamoDB JSON', () => {
  const result = split({ pk: 'a', n: 12.5, ok: true, none: null }, { ...table, format: 'plain' });
  assert.deepEqual(result.parent, { pk: { S: 'a' }, n: { N: '12.5' }, ok: { BOOL: true }, none: { NULL: true } });
  assert.deepEqual(result.requests.putItem.Item, result.parent);
});

test('a compressible item over the limit is inlined: one PutItem of a parent carrying the payload', () => {
  const item = { pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) }, title: { S: 'report' } };
  assert.ok(itemSize(item) > LIMIT);
  const result = split(item, { ...table, version: VERSION });
  assert.equal(result.requests.mode, 'single');
  assert.deepEqual(result.chunks, []);
  assert.equal(result.manifest.inline, true);
  assert.equal(result.manifest.chunkCount, 0);
  assert.equal(result.manifest.version, VERSION);
  assert.deepEqual(result.manifest.spilled, ['body']);
  assert.equal(result.manifest.rawBytes > 1_140_000, true);
  assert.ok(result.manifest.storedBytes < result.manifest.rawBytes / 100);
  assert.notEqual(result.manifest.codec, 'none');
  assert.ok(result.parent._ds.M.p.B instanceof Uint8Array);
  assert.equal(result.parent._ds.M.p.B.length, result.manifest.storedBytes);
  assert.deepEqual(result.parent.title, { S: 'report' });
  assert.ok(itemSize(result.parent) <= LIMIT);
  assert.deepEqual(result.requests.putItem, { TableName: 'docs', Item: result.parent, ...NOT_EXISTS });
  assert.equal(result.writeUnits, writeUnitsOf(result.parent));
  assert.deepEqual(reassemble(result.parent, [], table), item);
});

test('atomic: chunk Puts and the conditional parent Put in one transaction; units count double', () => {
  const item = big(1_000_000);
  const result = split(item, { ...table, version: VERSION, mode: 'auto' });
  assert.equal(result.requests.mode, 'atomic');
  assert.equal(result.manifest.codec, 'none', 'random bytes are stored as they are');
  assert.equal(result.manifest.chunkCount, 3);
  assert.equal(result.chunks.length, 3);
  assert.equal(result.manifest.inline, false);
  assert.equal(result.manifest.storedBytes, result.manifest.rawBytes + 21);
  const actions = result.requests.transactWriteItems.TransactItems;
  assert.equal(actions.length, 4);
  result.chunks.forEach((chunk, seq) => {
    assert.deepEqual(actions[seq], { Put: { TableName: 'docs_chunks', Item: chunk } }, `chunk ${seq}`);
    // Chunk 0 is an anchor: `_da`, a copy of `_h` (docs/FORMAT.md §6).
    assert.deepEqual(Object.keys(chunk).sort(), seq === 0 ? ['_d', '_da', '_h', 'pk'] : ['_d', '_h', 'pk']);
    if (seq === 0) assert.deepEqual(chunk._da, chunk._h);
    assert.equal(chunk.pk.S, `doc#${VERSION}#${String(seq).padStart(6, '0')}`);
    assert.equal(chunk._h.B.length, 8);
  });
  assert.deepEqual(actions[3], { Put: { TableName: 'docs', Item: result.parent, ...NOT_EXISTS } });
  assert.deepEqual(result.parent.pk, { S: 'doc' });
  assert.deepEqual(result.parent.title, { S: 'report' });
  assert.equal(result.parent.data, undefined);
  assert.equal(result.parent._ds.M.v.S, VERSION);
  assert.equal(result.parent._ds.M.n.N, '3');
  assert.deepEqual(result.requests.cleanup, []);
  assert.equal(result.writeUnits, 2 * sum([...result.chunks, result.parent]));
});

test('exactly one of putItem, transactWriteItems and commit is present: a sender needs no mode name', () => {
  const cases = [
    [split({ pk: { S: 'a' } }, table), 'single', 'putItem'],
    [split({ pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) } }, table), 'single', 'putItem'],
    [split(big(1_000_000), { ...table, mode: 'auto' }), 'atomic', 'transactWriteItems'],
    [split(big(1_000_000), table), 'batch', 'commit'],
  ];
  for (const [result, mode, present] of cases) {
    assert.equal(result.requests.mode, mode);
    const sent = ['putItem', 'transactWriteItems', 'commit'].filter((name) => result.requests[name] !== undefined);
    assert.deepEqual(sent, [present], mode);
    assert.equal(result.requests.batchWriteItems !== undefined, present === 'commit', mode);
  }
});

test('every anchor is exactly chunkItemBytes but the last chunk, the others 11 bytes less (no _da)', () => {
  for (const chunkItemBytes of [undefined, 409_600, 100_000, 2048]) {
    const options = chunkItemBytes === undefined ? table : { ...table, chunkItemBytes };
    const { chunks, manifest } = split(big(900_000), options);
    const limit = chunkItemBytes ?? LIMIT;
    assert.equal(chunks.length, manifest.chunkCount);
    assert.ok(chunks.length >= 3);
    chunks.slice(0, -1).forEach((chunk, seq) => assert.equal(itemSize(chunk), seq % 64 === 0 ? limit : limit - 11));
    assert.ok(itemSize(chunks.at(-1)) <= limit);
    const frameBytes = chunks.reduce((total, chunk) => total + chunk._d.B.length, 0);
    assert.equal(frameBytes, manifest.storedBytes);
  }
  throwsDynaslice(() => split(big(500_000), { ...table, chunkItemBytes: 2047 }), 'OPTIONS_INVALID', /2048/);
  throwsDynaslice(() => split(big(500_000), { ...table, chunkItemBytes: 409_601 }), 'OPTIONS_INVALID', /409600/);
});

test('batch: chunk PutRequests, at most 25 per BatchWriteItem, in order; then the commit; abort deletes them', () => {
  const item = big(600_000);
  const result = split(item, { ...table, chunkItemBytes: 4096, mode: 'batch', version: VERSION });
  const { requests } = result;
  assert.equal(requests.mode, 'batch');
  assert.equal(requests.transactWriteItems, undefined);
  assert.equal(requests.putItem, undefined);
  assert.ok(result.chunks.length > 100);
  for (const batch of requests.batchWriteItems) {
    assert.ok(batch.RequestItems.docs_chunks.length <= 25);
    assert.ok(batch.RequestItems.docs_chunks.length >= 1);
  }
  assert.equal(requests.batchWriteItems.length, Math.ceil(result.chunks.length / 25));
  assert.deepEqual(
    batchEntries(requests.batchWriteItems, 'docs_chunks'),
    result.chunks.map((Item) => ({ PutRequest: { Item } })),
  );
  assert.deepEqual(requests.commit, { TableName: 'docs', Item: result.parent, ...NOT_EXISTS });
  assert.deepEqual(
    batchEntries(requests.abort, 'docs_chunks'),
    result.chunks.map((chunk) => ({ DeleteRequest: { Key: { pk: chunk.pk } } })),
  );
  requests.abort.forEach((batch) => assert.ok(batch.RequestItems.docs_chunks.length <= 25));
  assert.deepEqual(requests.cleanup, []);
  // Batches are not transactions: each item's units once.
  assert.equal(result.writeUnits, sum([...result.chunks, result.parent]));
});

test('a transaction holds at most 100 actions: 99 chunks are atomic, 100 are batches', () => {
  // Chunks of 8 KiB: 99 of them hold more than an item can (800 KB).
  const options = { ...table, codec: 'none', chunkItemBytes: 8192, version: VERSION, mode: 'auto' };
  const probe = split(big(450_000), options);
  const k = Number(probe.parent._ds.M.k.N);
  const fixed = probe.manifest.storedBytes - 450_000; // framing and encoding, the same at these lengths
  const bytesFor = (chunks) => chunks * k - fixed;
  const at99 = split(big(bytesFor(99)), options);
  assert.equal(at99.chunks.length, 99);
  assert.equal(at99.requests.mode, 'atomic');
  assert.equal(at99.requests.transactWriteItems.TransactItems.length, 100);
  assert.equal(at99.writeUnits, 2 * sum([...at99.chunks, at99.parent]));
  const at100 = split(big(bytesFor(99) + 1), options);
  assert.equal(at100.chunks.length, 100);
  assert.equal(at100.requests.mode, 'batch');
  assert.equal(at100.writeUnits, sum([...at100.chunks, at100.parent]));
  throwsDynaslice(() => split(big(bytesFor(99) + 1), { ...options, mode: 'atomic' }), 'ATOMIC_TOO_LARGE', /101 actions/);
});

test('a transaction holds at most 4 MiB of items: the largest atomic write is at most 4,194,304 bytes', () => {
  const TX = 4 * 1024 * 1024;
  const options = { ...table, codec: 'none', version: VERSION, mode: 'auto' };
  const data = randomBytes(4_300_000);
  const at = (n) => split({ pk: { S: 'doc' }, data: { B: data.subarray(0, n) } }, options);
  // Binary search for the last length written atomically.
  let low = 3_000_000; // atomic
  let high = 4_300_000; // batch
  assert.equal(at(low).requests.mode, 'atomic');
  assert.equal(at(high).requests.mode, 'batch');
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (at(middle).requests.mode === 'atomic') low = middle;
    else high = middle;
  }
  const last = at(low);
  const first = at(high);
  assert.ok(txBytes(last) <= TX, `${txBytes(last)}`);
  assert.ok(txBytes(first) > TX, `${txBytes(first)}`);
  assert.ok(txBytes(last) > TX - 8, `the boundary is the 4 MiB rule, not another: ${txBytes(last)}`);
  throwsDynaslice(() => split({ pk: { S: 'doc' }, data: { B: data.subarray(0, high) } }, { ...options, mode: 'atomic' }), 'ATOMIC_TOO_LARGE');
});

test('expect: a stored split parent makes the write conditional on its version, and cleanup deletes its chunks', () => {
  const old = split(big(1_000_000), { ...table, chunkItemBytes: 20_000 });
  assert.ok(old.chunks.length > 25);
  const oldVersion = old.manifest.version;
  const replacedKeys = old.chunks.map((chunk) => ({ DeleteRequest: { Key: { pk: chunk.pk } } }));
  const condition = {
    ConditionExpression: '#m.#v = :v AND attribute_not_exists(#m.#u)',
    ExpressionAttributeNames: { '#m': '_ds', '#v': 'v', '#u': 'u' },
    ExpressionAttributeValues: { ':v': { S: oldVersion } },
  };
  for (const [item, mode] of [[big(1_000_000), 'atomic'], [{ pk: { S: 'doc' }, small: { S: 'x' } }, 'single']]) {
    const next = split(item, { ...table, expect: old.parent, mode: 'auto' });
    assert.equal(next.requests.mode, mode);
    assert.notEqual(next.manifest?.version, oldVersion);
    const put = mode === 'single' ? next.requests.putItem : next.requests.transactWriteItems.TransactItems.at(-1).Put;
    assert.deepEqual(put, { TableName: 'docs', Item: next.parent, ...condition });
    assert.deepEqual(batchEntries(next.requests.cleanup, 'docs_chunks'), replacedKeys);
    next.requests.cleanup.forEach((batch) => assert.ok(batch.RequestItems.docs_chunks.length <= 25));
    // Cleanup is not part of the write's units.
    const items = [...next.chunks, next.parent];
    assert.equal(next.writeUnits, (mode === 'atomic' ? 2 : 1) * sum(items));
  }
  const batch = split(big(1_000_000), { ...table, expect: old.parent, mode: 'batch' });
  assert.deepEqual(batch.requests.commit, { TableName: 'docs', Item: batch.parent, ...condition });
  assert.deepEqual(batchEntries(batch.requests.cleanup, 'docs_chunks'), replacedKeys);
});

test('expect: a stored unsplit item, "any" and "absent"', () => {
  const item = { pk: { S: 'doc' }, x: { S: 'new' } };
  const plain = split(item, { ...table, expect: { pk: { S: 'doc' }, x: { S: 'old' } } });
  assert.deepEqual(plain.requests.putItem, {
    TableName: 'docs',
    Item: item,
    ConditionExpression: 'attribute_exists(#k) AND attribute_not_exists(#m)',
    ExpressionAttributeNames: { '#k': 'pk', '#m': '_ds' },
  });
  assert.deepEqual(plain.requests.cleanup, []);
  assert.deepEqual(split(item, { ...table, expect: 'any' }).requests.putItem, { TableName: 'docs', Item: item });
  assert.deepEqual(split(item, { ...table, expect: 'absent' }).requests.putItem, { TableName: 'docs', Item: item, ...NOT_EXISTS });
  throwsDynaslice(() => split(item, { ...table, expect: 'present' }), 'OPTIONS_INVALID', /expect/);
  throwsDynaslice(() => split(item, { ...table, expect: { x: 'plain, not DynamoDB JSON' } }), 'INPUT_INVALID');
});

test('a write may not reuse the replaced version id (its cleanup would delete the new chunks)', () => {
  const old = split(big(1_000_000), { ...table, version: VERSION });
  throwsDynaslice(() => split(big(1_000_000), { ...table, expect: old.parent, version: VERSION }), 'VERSION_REUSED');
});

test('version: the given ULID names every chunk and the manifest; otherwise a fresh one per write', () => {
  const item = big(500_000);
  const a = split(item, { ...table, version: VERSION });
  const b = split(item, { ...table, version: VERSION });
  assert.deepEqual(a, b, 'a fixed version makes split deterministic');
  assert.equal(a.manifest.version, VERSION);
  const fresh = [split(item, table), split(item, table), split(item, table)].map((r) => r.manifest.version);
  for (const version of fresh) assert.match(version, ULID);
  assert.equal(new Set(fresh).size, 3);
  for (const version of ['bad', VERSION.toLowerCase(), `${VERSION}0`, '81HF7YAT00000000000000001A', 'IHF7YAT00000000000000001AU']) {
    throwsDynaslice(() => split(item, { ...table, version }), 'OPTIONS_INVALID', /version/);
  }
});

test('table layout: chunks in chunkTable under chunkKey, key parts escaped and canonical', () => {
  const options = { ...table, chunkTable: 'blobs', chunkKey: 'id', version: VERSION, mode: 'auto' };
  const result = split(big(500_000, 'a#b\\c'), options);
  assert.deepEqual(result.chunks.map((c) => Object.keys(c).sort()), [['_d', '_da', '_h', 'id'], ['_d', '_h', 'id']]);
  assert.deepEqual(result.chunks.map((c) => c.id.S), [`a\\#b\\\\c#${VERSION}#000000`, `a\\#b\\\\c#${VERSION}#000001`]);
  assert.deepEqual(result.requests.transactWriteItems.TransactItems.map((a) => a.Put.TableName), ['blobs', 'blobs', 'docs']);
  const numeric = split({ pk: { N: '1.50' }, data: { B: randomBytes(500_000) } }, { table: 'n', key: [{ name: 'pk', type: 'N' }], version: VERSION });
  assert.equal(numeric.chunks[0].pk.S, `1.5#${VERSION}#000000`);
  const composite = { table: 'c', key: [{ name: 'pk', type: 'B' }, { name: 'sk', type: 'S' }], version: VERSION };
  const both = split({ pk: { B: Uint8Array.of(0, 1, 2) }, sk: { S: 'x#y' }, data: { B: randomBytes(500_000) } }, composite);
  assert.equal(both.chunks[1].pk.S, `AAEC#x\\#y#${VERSION}#000001`);
  assert.deepEqual(both.parent.sk, { S: 'x#y' });
});

test('collection layout: chunks in the parent table, same partition key, sort key suffixed', () => {
  const options = { table: 't', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection', version: VERSION, mode: 'auto' };
  const result = split({ pk: { S: 'p' }, sk: { S: 's' }, data: { B: randomBytes(500_000) } }, options);
  assert.deepEqual(result.chunks.map((c) => [c.pk, c.sk]), [
    [{ S: 'p' }, { S: `s#${VERSION}#000000` }],
    [{ S: 'p' }, { S: `s#${VERSION}#000001` }],
  ]);
  assert.equal(result.parent._ds.M.l.S, 'collection');
  assert.deepEqual(result.requests.transactWriteItems.TransactItems.map((a) => a.Put.TableName), ['t', 't', 't']);
  const noSortKey = { table: 't', key: [{ name: 'pk', type: 'S' }], layout: 'collection' };
  throwsDynaslice(() => split(big(500_000, 'p'), noSortKey), 'LAYOUT_UNSUPPORTED');
  const numericSortKey = { table: 't', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'N' }], layout: 'collection' };
  throwsDynaslice(() => split({ pk: { S: 'p' }, sk: { N: '1' }, data: { B: randomBytes(500_000) } }, numericSortKey), 'LAYOUT_UNSUPPORTED');
});

test('spilling: largest attributes first, keys and keep stay, parentBudget bounds the parent', () => {
  const item = () => ({ pk: { S: 'a' }, body: { B: randomBytes(500_000) }, small: { S: 'x' }, gsi: { S: 'k'.repeat(3000) } });
  const byDefault = split(item(), table);
  assert.deepEqual(byDefault.manifest.spilled, ['body']);
  assert.deepEqual(Object.keys(byDefault.parent).sort(), ['_ds', 'gsi', 'pk', 'small']);
  assert.ok(itemSize(byDefault.parent) <= 4096);
  const all = split(item(), { ...table, parentBudget: 0 });
  assert.deepEqual(all.manifest.spilled, ['body', 'gsi', 'small']);
  assert.deepEqual(Object.keys(all.parent).sort(), ['_ds', 'pk']);
  const kept = split(item(), { ...table, parentBudget: 0, keep: ['gsi'] });
  assert.deepEqual(kept.manifest.spilled, ['body', 'small']);
  assert.deepEqual(kept.parent.gsi, { S: 'k'.repeat(3000) });
  throwsDynaslice(() => split(item(), { ...table, keep: ['body'] }), 'PARENT_TOO_LARGE', /409600/);
});

test('inline: false chunks even a payload that would fit the parent', () => {
  const item = { pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) } };
  const result = split(item, { ...table, inline: false });
  assert.equal(result.manifest.inline, false);
  assert.equal(result.parent._ds.M.p, undefined);
  assert.equal(result.chunks.length, 1);
  assert.equal(result.requests.mode, 'batch');
  assert.deepEqual(reassemble(result.parent, result.chunks, table), item);
});

test('codec: auto picks none for random bytes and compresses text; a fixed codec and level are used', () => {
  const text = { pk: { S: 'doc' }, body: { S: 'quarterly numbers, '.repeat(60_000) } };
  assert.equal(split(big(500_000), table).manifest.codec, 'none');
  assert.notEqual(split(text, table).manifest.codec, 'none');
  assert.notEqual(split(text, { ...table, codec: 'auto' }).manifest.codec, 'none');
  for (const codec of ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd']) {
    const result = split(text, { ...table, codec, inline: false });
    assert.equal(result.manifest.codec, codec);
    assert.equal(result.parent._ds.M.c.S, codec);
    assert.deepEqual(reassemble(result.parent, result.chunks, table), text, codec);
  }
  const level0 = split(text, { ...table, codec: 'zlib', level: 0 }).manifest.storedBytes;
  const level9 = split(text, { ...table, codec: 'zlib', level: 9 }).manifest.storedBytes;
  assert.ok(level0 > level9 * 10, `${level0} vs ${level9}`);
  throwsDynaslice(() => split(text, { ...table, codec: 'zstd', level: 19 }), 'CODEC_LEVEL_UNSUPPORTED');
  throwsDynaslice(() => split(text, { ...table, codec: 'brotli' }), 'OPTIONS_INVALID');
});

test('maxRawBytes bounds the payload', () => {
  const item = big(500_000);
  const raw = split(item, table).manifest.rawBytes;
  assert.equal(split(item, { ...table, maxRawBytes: raw }).manifest.rawBytes, raw);
  throwsDynaslice(() => split(item, { ...table, maxRawBytes: raw - 1 }), 'VIRTUAL_ITEM_TOO_LARGE', new RegExp(`${raw}.*the option maxRawBytes raises it`));
});

test('invalid items are refused with every violation', () => {
  const error = throwsDynaslice(() => split({ pk: { S: 'a' }, s: { SS: ['x', 'x'] } }, table), 'SET_DUPLICATE');
  assert.deepEqual(error.violations.map(({ code, path }) => ({ code, path })), [{ code: 'SET_DUPLICATE', path: 's' }]);
  assert.equal(typeof error.violations[0].message, 'string');
  const missing = throwsDynaslice(() => split({ x: { S: 'a' } }, table), 'KEY_MISSING');
  assert.deepEqual(missing.violations.map(({ code, path }) => ({ code, path })), [{ code: 'KEY_MISSING', path: 'pk' }]);
  throwsDynaslice(() => split({ pk: { N: '1' } }, table), 'KEY_WRONG_TYPE');
  throwsDynaslice(() => split({ pk: { S: 'a' }, _ds: { S: 'mine' } }, table), 'ATTRIBUTE_RESERVED', /_ds/);
});

test('bad split options are OPTIONS_INVALID, naming the option', () => {
  const item = { pk: { S: 'a' } };
  const cases = [
    [undefined, /table/],
    [{ key: table.key }, /table/],
    [{ table: 'docs' }, /key/],
    [{ ...table, key: [] }, /key/],
    [{ ...table, key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }, { name: 'x', type: 'S' }] }, /key/],
    [{ ...table, key: [{ name: 'pk', type: 'BOOL' }] }, /key/],
    [{ ...table, key: { name: 'pk', type: 'S' } }, /key/],
    [{ ...table, layout: 'tables' }, /layout/],
    [{ ...table, mode: 'fast' }, /mode/],
    [{ ...table, chunkItemBytes: -1 }, /chunkItemBytes/],
    [{ ...table, chunkItemBytes: '4096' }, /chunkItemBytes/],
    [{ ...table, parentBudget: 1.5 }, /parentBudget/],
    [{ ...table, inline: 'no' }, /inline/],
    [{ ...table, keep: 'gsi' }, /keep/],
    [{ ...table, keep: [1] }, /keep/],
    [{ ...table, chunkTable: 5 }, /chunkTable/],
    [{ ...table, format: 'json' }, /format/],
  ];
  for (const [options, message] of cases) throwsDynaslice(() => split(item, options), 'OPTIONS_INVALID', message);
});

test('batch is the default mode: a write that fits a transaction is still chunk batches, then the commit', () => {
  const result = split(big(1_000_000), { ...table, version: VERSION });
  assert.equal(result.requests.mode, 'batch');
  assert.equal(result.requests.transactWriteItems, undefined);
  assert.equal(result.writeUnits, sum([...result.chunks, result.parent]), 'half of what a transaction bills');
  assert.equal(split(big(1_000_000), { ...table, version: VERSION, mode: 'auto' }).writeUnits, 2 * result.writeUnits);
});

test("commit: 'overwrite' plans last writer wins: an unconditional commit returning the old item, the pinned one as its fallback", () => {
  const old = split(big(1_000_000), { ...table, chunkItemBytes: 100_000 });
  const next = split(big(900_000), { ...table, expect: old.parent, commit: 'overwrite' });
  assert.deepEqual(next.requests.overwrite, { TableName: 'docs', Item: next.parent, ReturnValues: 'ALL_OLD' });
  assert.equal(next.requests.commit.ConditionExpression, '#m.#v = :v AND attribute_not_exists(#m.#u)', 'the fallback stays pinned to the parent read');
  const small = split({ pk: { S: 'doc' }, x: { S: 'new' } }, { ...table, expect: old.parent, commit: 'overwrite' });
  assert.deepEqual(small.requests.putItem, { TableName: 'docs', Item: small.parent, ReturnValues: 'ALL_OLD' });
  assert.deepEqual(small.requests.cleanup, [], 'learned from the answer instead');
  assert.equal(split(big(900_000), { ...table, expect: old.parent }).requests.overwrite, undefined, 'conditional by default');
  throwsDynaslice(() => split(big(10), { ...table, commit: 'always' }), 'OPTIONS_INVALID');
});
