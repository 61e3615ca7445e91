// The trust boundary: uploads built with the npm package's `split` in Node,
// then tampered with, posted straight to `POST /api/upload`. Each is refused
// with its error code, and the table is exactly as before (an item already
// stored under the same key included). A good upload succeeds, as a control.
// The header's chunk lengths are checked against the manifest before any
// chunk data is read, so every lie about a length is CHUNK_LENGTH_MISMATCH.
// And `GET /api/items` in pages: every item once, whatever the page size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { split } from 'dynaslice';
import { orderHistory } from '../../www/js/sample.js';
import { uploadBody } from '../../www/js/wire.js';
import { allItemPages, apiFetch, getConfig, keyParam, listedItems, listedKeys, startServer } from './support/server.mjs';
import { chunkData, encodeUpload, postUpload, rawUpload, storeSmallItems } from './support/upload.mjs';

const MB = 1 << 20;
const PREFIX = 'scope-';
const MAX_ITEM_BYTES = 4_000_000;
const TABLE = 'dynaslice-demo';

test('tampered uploads are refused with their codes and change nothing', async (t) => {
  const server = await startServer(['--key-prefix', PREFIX, '--max-item-bytes', String(MAX_ITEM_BYTES)]);
  const observed = [];
  try {
    const config = await getConfig(server);
    assert.equal(config.keyPrefix, PREFIX);
    assert.equal(config.maxItemBytes, MAX_ITEM_BYTES);
    const table = config.tables.find((x) => x.name === TABLE);
    const options = { table: table.name, key: table.key, layout: table.layout, chunkTable: table.chunkTable, anchors: table.anchors };
    const orderItem = (pk, bytes) => ({ pk: { S: pk }, body: { S: orderHistory(bytes) } });

    // An item already stored: every tampered overwrite of it must leave it as it is.
    const existing = orderItem(`${PREFIX}existing`, MB);
    const first = split(existing, { ...options, codec: 'none' });
    const stored = await postUpload(server, TABLE, uploadBody(first.parent, first.chunks));
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    const baseline = await listedItems(server);
    assert.equal(baseline.length, 1);

    /** Posts `body`, expects `status` and `code`, and the table unchanged. */
    async function refused(name, table, body, status, code) {
      const answer = await postUpload(server, table, body);
      observed.push(`${name}: ${answer.status} ${answer.body?.error?.code} (${answer.body?.error?.message})`);
      assert.equal(answer.status, status, `${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body?.error?.code, code, `${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(typeof answer.body.error.message, 'string');
      assert.deepEqual(await listedItems(server), baseline, `${name}: the table is unchanged`);
    }

    // A fresh split of a new version of the existing item: codec none takes
    // 3 chunks; deflate of 3 MB takes 2.
    const again = (codec = 'none', bytes = MB) => split(orderItem(`${PREFIX}existing`, bytes), { ...options, codec });

    await t.test('a chunk altered after splitting', async () => {
      const r = again();
      const data = chunkData(r);
      data[1] = data[1].slice();
      data[1][1000] ^= 0x01;
      await refused('chunk altered', TABLE, encodeUpload(r.parent, data), 400, 'DIGEST_MISMATCH');
    });

    await t.test('a manifest lying about the stored size', async () => {
      const r = again('deflate', 3 * MB);
      assert.equal(r.chunks.length, 2);
      const parent = structuredClone(r.parent);
      parent._ds.M.s.N = String(Number(parent._ds.M.s.N) - 10);
      await refused('manifest stored size', TABLE, encodeUpload(parent, chunkData(r)), 400, 'CHUNK_LENGTH_MISMATCH');
    });

    await t.test('a manifest lying about the raw size', async () => {
      const r = again('deflate', 3 * MB);
      const parent = structuredClone(r.parent);
      parent._ds.M.r.N = String(Number(parent._ds.M.r.N) + 1000);
      await refused('manifest raw size', TABLE, encodeUpload(parent, chunkData(r)), 400, 'FRAME_MISMATCH');
    });

    await t.test('a manifest whose sizes contradict each other', async () => {
      const r = again();
      const parent = structuredClone(r.parent);
      // Codec none stores the raw stream plus a fixed frame: s and r must agree.
      parent._ds.M.r.N = String(Number(parent._ds.M.r.N) - 10);
      await refused('manifest sizes contradict', TABLE, encodeUpload(parent, chunkData(r)), 400, 'MANIFEST_INVALID');
    });

    await t.test('chunk lengths that disagree with the manifest', async () => {
      const r = again();
      const data = chunkData(r);
      // The same bytes, the first chunk cut 100 bytes short and the last 100
      // longer: the header matches the body, not the manifest.
      const last = data.length - 1;
      const moved = [data[0].subarray(0, data[0].length - 100), ...data.slice(1, last), Buffer.concat([data[0].subarray(data[0].length - 100), data[last]])];
      await refused('chunk lengths', TABLE, encodeUpload(r.parent, moved), 400, 'CHUNK_LENGTH_MISMATCH');
    });

    await t.test('a chunk over the 409,600-byte item limit', async () => {
      const r = again();
      const data = chunkData(r);
      data[0] = Buffer.concat([data[0], Buffer.alloc(2000, 0x20)]);
      // The manifest fixes every chunk's length (409,600-byte items but the
      // last), so a longer chunk is refused from the header alone.
      await refused('chunk over the limit', TABLE, encodeUpload(r.parent, data), 400, 'CHUNK_LENGTH_MISMATCH');
    });

    await t.test('a table not on the allow-list', async () => {
      const r = split(orderItem(`${PREFIX}other-table`, MB), { ...options, table: 'not-allowed', chunkTable: 'not-allowed_chunks', codec: 'none' });
      await refused('table not allowed', 'not-allowed', encodeUpload(r.parent, chunkData(r)), 403, 'TABLE_NOT_ALLOWED');
    });

    await t.test('a key outside the scope', async () => {
      const r = split(orderItem('elsewhere-1', MB), { ...options, codec: 'none' });
      await refused('key out of scope', TABLE, encodeUpload(r.parent, chunkData(r)), 403, 'KEY_OUT_OF_SCOPE');
    });

    await t.test('a body over the limit', async () => {
      const r = split(orderItem(`${PREFIX}big`, 7 * MB), { ...options, codec: 'none' });
      const body = encodeUpload(r.parent, chunkData(r));
      assert.ok(body.length > config.maxBodyBytes, `${body.length} > ${config.maxBodyBytes}`);
      const show = (answer) => (answer.status ? `${answer.status} ${answer.body.error?.code} (${answer.body.error?.message})` : `connection cut before an answer (${answer.error})`);
      // Declared: refused from its Content-Length, before any of the body is
      // read (the client waits for 100 Continue, which never comes).
      const declared = await rawUpload(server, TABLE, body, { declareLength: true });
      observed.push(`body over the limit (declared length): ${show(declared)}`);
      assert.equal(declared.status, 413, JSON.stringify(declared));
      assert.equal(declared.body.error.code, 'BODY_TOO_LARGE');
      assert.equal(declared.bodySent, 0, 'the server answered without asking for the body');
      assert.deepEqual(await listedItems(server), baseline);
      // Chunked (no declared length): refused from the header's manifest
      // (the item it describes is over --max-item-bytes) before any chunk
      // data is read, and answered after the rest is drained.
      const answer = await rawUpload(server, TABLE, body);
      observed.push(`body over the limit (chunked): ${show(answer)}`);
      assert.equal(answer.status, 413, JSON.stringify(answer));
      assert.equal(answer.body.error.code, 'VIRTUAL_ITEM_TOO_LARGE');
      assert.deepEqual(await listedItems(server), baseline);
    });

    await t.test('an item over --max-item-bytes in a small body', async () => {
      const r = split(orderItem(`${PREFIX}compressed`, 6 * MB), { ...options, codec: 'deflate' });
      const body = encodeUpload(r.parent, chunkData(r));
      assert.ok(body.length < MAX_ITEM_BYTES && r.manifest.rawBytes > MAX_ITEM_BYTES);
      await refused('item over --max-item-bytes', TABLE, body, 413, 'VIRTUAL_ITEM_TOO_LARGE');
    });

    await t.test('the existing item is untouched and a good upload succeeds', async () => {
      const back = Buffer.from(await (await apiFetch(server, `/api/item?table=${TABLE}&key=${keyParam(`${PREFIX}existing`)}&attribute=body`)).arrayBuffer());
      assert.ok(back.equals(Buffer.from(existing.body.S)));
      const good = orderItem(`${PREFIX}good`, MB);
      const r = split(good, options);
      const answer = await postUpload(server, TABLE, uploadBody(r.parent, r.chunks));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body.key, { pk: { S: `${PREFIX}good` } });
      assert.equal(answer.body.mode, r.requests.mode);
      assert.equal(answer.body.writeUnits, r.writeUnits, 'the server plans what the package planned');
      assert.equal(answer.body.manifest.codec, r.manifest.codec);
      assert.deepEqual((await listedItems(server)).map((i) => i.key.pk.S), [`${PREFIX}existing`, `${PREFIX}good`]);
      const read = Buffer.from(await (await apiFetch(server, `/api/item?table=${TABLE}&key=${keyParam(`${PREFIX}good`)}&attribute=body`)).arrayBuffer());
      assert.ok(read.equals(Buffer.from(good.body.S)));
    });
  } finally {
    for (const line of observed) t.diagnostic(line);
    console.error(observed.map((line) => `OBSERVED ${line}`).join('\n'));
    await server.stop();
  }
});

test('GET /api/items comes in pages joined by an opaque cursor', async () => {
  const server = await startServer();
  try {
    // 105 items: over the default page of 100, so the default listing pages too.
    const keys = Array.from({ length: 105 }, (_, i) => `paged-${String(i).padStart(3, '0')}`);
    await storeSmallItems(server, keys);
    const expected = keys.map((pk) => JSON.stringify({ pk: { S: pk } }));

    const first = await (await apiFetch(server, `/api/items?table=${TABLE}`)).json();
    assert.ok(first.items.length > 0 && first.items.length <= 100, `the default page holds at most 100 items (${first.items.length})`);
    assert.equal(typeof first.cursor, 'string', 'a cursor, since more items follow');

    const byDefault = await allItemPages(server, TABLE);
    assert.deepEqual(byDefault.items.map((i) => JSON.stringify(i.key)).sort(), expected, 'every item once, none twice');

    // Pages of at most 7 (allItemPages checks each): 15 full pages, and
    // perhaps an empty last one (a scan cannot know it ended exactly there).
    const small = await allItemPages(server, TABLE, { limit: 7 });
    assert.ok(small.pages === 15 || small.pages === 16, `${small.pages} pages of 7`);
    assert.deepEqual(small.items.map((i) => JSON.stringify(i.key)).sort(), expected);
    assert.deepEqual(await listedKeys(server), expected);
  } finally {
    await server.stop();
  }
});
