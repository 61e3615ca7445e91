// Round trips through split and reassemble at the sizes that matter: an
// item that fits, one just over the item limit, and one of several MB, with
// incompressible and compressible payloads, in both layouts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemSize, reassemble, split } from 'dynaslice';
import { randomBytes, shuffled, writeUnitsOf } from '../support/check.mjs';

const LIMIT = 409_600;
const layouts = {
  table: { table: 'docs', key: [{ name: 'pk', type: 'S' }] },
  collection: { table: 'docs', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection' },
};

/** Splits, checks every invariant of the write, and reassembles from shuffled chunks. */
function roundTrip(item, options) {
  const result = split(item, options);
  const { parent, chunks, requests, writeUnits } = result;
  assert.ok(itemSize(parent) <= LIMIT);
  for (const chunk of chunks) assert.ok(itemSize(chunk) <= LIMIT);
  const units = [...chunks, parent].reduce((total, i) => total + writeUnitsOf(i), 0);
  assert.equal(writeUnits, requests.mode === 'atomic' ? 2 * units : units, requests.mode);
  const written = {
    single: () => [requests.putItem.Item],
    atomic: () => requests.transactWriteItems.TransactItems.map((a) => a.Put.Item),
    batch: () => [...requests.batchWriteItems.flatMap((b) => Object.values(b.RequestItems)[0].map((e) => e.PutRequest.Item)), requests.commit.Item],
  }[requests.mode]();
  assert.deepEqual(written, [...chunks, parent], 'the requests write exactly the chunks, then the parent');
  assert.deepEqual(reassemble(parent, shuffled(chunks), options), item);
  return result;
}

for (const [name, layout] of Object.entries(layouts)) {
  const key = name === 'table' ? { pk: { S: 'doc-1' } } : { pk: { S: 'doc-1' }, sk: { S: 'v#1' } };

  test(`${name} layout: 1 KB stays whole`, () => {
    const item = { ...key, data: { B: randomBytes(1024) } };
    const result = roundTrip(item, layout);
    assert.equal(result.requests.mode, 'single');
    assert.deepEqual(result.parent, item);
  });

  test(`${name} layout: 400 KB of random bytes plus the key is over the limit and splits`, () => {
    const item = { ...key, data: { B: randomBytes(400 * 1024) }, note: { S: 'kept' } };
    assert.ok(itemSize(item) > LIMIT);
    assert.equal(roundTrip(item, layout).requests.mode, 'batch', 'the default');
    const result = roundTrip(item, { ...layout, mode: 'auto' });
    assert.equal(result.requests.mode, 'atomic');
    assert.equal(result.chunks.length, 2);
    assert.deepEqual(result.parent.note, { S: 'kept' });
  });

  test(`${name} layout: 5 MB of random bytes is written in batches`, () => {
    const item = { ...key, data: { B: randomBytes(5 * 1024 * 1024) }, n: { N: '42' } };
    const result = roundTrip(item, layout);
    assert.equal(result.requests.mode, 'batch');
    assert.equal(result.chunks.length, Math.ceil(result.manifest.storedBytes / Number(result.parent._ds.M.k.N)));
    assert.ok(result.chunks.length >= 13);
  });

  test(`${name} layout: 5 MB of text compresses, in any codec`, () => {
    const line = '{"order":"A-1001","items":[{"sku":"café-42","qty":3,"price":"1299.95"}],"note":"返品なし"}\n';
    const item = { ...key, body: { S: line.repeat(Math.ceil((5 * 1024 * 1024) / line.length)) } };
    for (const codec of ['auto', 'deflate', 'snappy', 'zstd']) {
      const result = roundTrip(item, { ...layout, codec });
      assert.ok(result.manifest.storedBytes < result.manifest.rawBytes / 10, codec);
    }
  });
}
