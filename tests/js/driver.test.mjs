// dynaslice/dynamodb against Amazon's DynamoDB Local: what the driver adds
// to the plans (tests/js/dynamodb-local.test.mjs covers sizes, layouts,
// modes and the commit protocol's races): `expect`, concurrent writers and
// readers, AbortSignal, progress, capacity, streams both ways, the
// DocumentClient with plain values, gc, and option checks.
// Needs Java (a JDK: see tests/js/support/dynamodb-local.mjs).

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CreateTableCommand, DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, ScanCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { split } from 'dynaslice';
import { DEFAULT_WINDOW, deleteItem, gc, getItem, getStream, listVersions, putItem, putItems, putStream, queryItems, restoreVersion, updateItem, verify } from 'dynaslice/dynamodb';
import { startDynamoDBLocal } from './support/dynamodb-local.mjs';
import { orderHistory } from './support/documents.mjs';

// A full garbage collection on demand, without --expose-gc on the command
// line (the memory test measures what is live, not what awaits collection).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');

const KB = 1024;
const MB = 1024 * KB;

const DOCS = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const APP = { table: 'app', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection' };

let server;
let client;
let dir;

before(async () => {
  server = await startDynamoDBLocal();
  client = server.client();
  dir = mkdtempSync(join(tmpdir(), 'dynaslice-driver-'));
  // The tables chunks live in have the anchors index (docs/FORMAT.md §6).
  const anchors = {
    IndexName: 'dynaslice-anchors',
    KeySchema: [{ AttributeName: '_da', KeyType: 'HASH' }],
    Projection: { ProjectionType: 'KEYS_ONLY' },
  };
  for (const [name, key, indexed] of [['docs', ['pk'], false], ['docs_chunks', ['pk'], true], ['app', ['pk', 'sk'], true]]) {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          ...key.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
          ...(indexed ? [{ AttributeName: '_da', AttributeType: 'B' }] : []),
        ],
        KeySchema: key.map((AttributeName, i) => ({ AttributeName, KeyType: i === 0 ? 'HASH' : 'RANGE' })),
        ...(indexed ? { GlobalSecondaryIndexes: [anchors] } : {}),
      }),
    );
  }
});

after(async () => {
  client?.destroy();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A DynamoDB JSON item of `key` holding `bytes` random bytes in `data`. */
function blob(pk, bytes, extra = {}) {
  return { pk: { S: pk }, data: { B: new Uint8Array(randomBytes(bytes)) }, ...extra };
}

const same = (a, b) => Buffer.from(a).equals(Buffer.from(b));

async function scanAll(TableName) {
  const items = [];
  let ExclusiveStartKey;
  do {
    const page = await client.send(new ScanCommand({ TableName, ExclusiveStartKey, ConsistentRead: true }));
    items.push(...page.Items);
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

/** The chunk items of docs_chunks of the parent `pk` (its chunk keys escape `#` and `\\`: docs/FORMAT.md). */
async function chunksOf(pk) {
  const part = pk.replace(/[\\#]/g, (c) => `\\${c}`);
  return (await scanAll('docs_chunks')).filter((c) => c.pk.S.startsWith(`${part}#`));
}

/** The version the stored parent of `pk` carries (its chunk keys hold it), by reading its chunks. */
async function storedVersion(pk) {
  const { version } = await getItem(client, { pk: { S: pk } }, DOCS);
  return version;
}

describe('expect', () => {
  test("'absent' writes a new item and refuses to replace one (CONFLICT), leaving it intact", async () => {
    const first = blob('expect#absent', 600 * KB);
    const put = await putItem(client, first, { ...DOCS, expect: 'absent' });
    assert.equal(put.replaced, false);
    await assert.rejects(putItem(client, blob('expect#absent', 600 * KB), { ...DOCS, expect: 'absent' }), { code: 'CONFLICT' });
    const { item, version } = await getItem(client, { pk: { S: 'expect#absent' } }, DOCS);
    assert.ok(same(item.data.B, first.data.B));
    assert.equal(version, put.version);
    assert.equal((await chunksOf('expect#absent')).length, put.manifest.chunkCount, 'the refused write left no chunk');
  });

  test('{ version } replaces exactly that version and refuses a stale one', async () => {
    const one = await putItem(client, blob('expect#version', 700 * KB), DOCS);
    const two = await putItem(client, blob('expect#version', 700 * KB), { ...DOCS, expect: { version: one.version } });
    assert.equal(two.replaced, true);
    assert.notEqual(two.version, one.version);
    await assert.rejects(putItem(client, blob('expect#version', 700 * KB), { ...DOCS, expect: { version: one.version } }), { code: 'CONFLICT' });
    assert.equal(await storedVersion('expect#version'), two.version);
    await assert.rejects(putItem(client, blob('expect#none', 10), { ...DOCS, expect: { version: one.version } }), { code: 'CONFLICT' });
  });

  test('anything else is OPTIONS_INVALID, before anything is written', async () => {
    for (const expect of ['any', 'present', { version: 7 }, null]) {
      await assert.rejects(putItem(client, blob('expect#bad', 10), { ...DOCS, expect }), { code: 'OPTIONS_INVALID' });
    }
    assert.equal((await getItem(client, { pk: { S: 'expect#bad' } }, DOCS)).item, undefined);
  });
});

describe('concurrency', () => {
  for (const mode of ['batch', 'atomic', 'auto']) {
    test(`${mode}, last writer wins: 5 writers of one key all succeed; readers never see a torn item; only the survivor's chunks remain`, async () => {
      const pk = `race#${mode}`;
      // 500 KB to 2.5 MB: every one fits a transaction; the first is one small item.
      const versions = Array.from({ length: 5 }, (_, i) => blob(pk, (1 + i) * 500 * KB, { writer: { N: String(i) } }));
      await putItem(client, blob(pk, 1 * KB), DOCS);
      const written = new Map(versions.map((v) => [v.writer.N, v]));
      let reads = 0;
      let writing = true;
      const reader = (async () => {
        while (writing) {
          const { item } = await getItem(client, { pk: { S: pk } }, DOCS);
          reads += 1;
          if (item.writer === undefined) continue; // the first, small version
          assert.ok(same(item.data.B, written.get(item.writer.N).data.B), `read writer ${item.writer.N}'s bytes whole`);
        }
      })();
      const results = await Promise.allSettled(versions.map((v) => putItem(client, v, { ...DOCS, mode })));
      writing = false;
      await reader;
      for (const r of results) assert.equal(r.status, 'fulfilled', r.reason?.stack);
      const won = results.map((r) => r.value);
      assert.ok(won.every((w) => w.mode === (mode === 'batch' ? 'batch' : 'atomic')), won.map((w) => w.mode).join());
      assert.ok(won.every((w) => w.superseded === false && w.replaced === true), 'no fault, nothing superseded');
      const { item, version } = await getItem(client, { pk: { S: pk } }, DOCS);
      const winner = won.find((w) => w.version === version);
      assert.ok(winner, 'the stored version is one a writer reported committing');
      assert.ok(same(item.data.B, written.get(item.writer.N).data.B));
      assert.ok(reads > 0);
      // Each replaced version's chunks were deleted by the write that replaced it.
      const chunks = await chunksOf(pk);
      assert.equal(chunks.length, winner.manifest.chunkCount, 'only the stored version\'s chunks remain');
      assert.ok(chunks.every((c) => c.pk.S.includes(`#${version}#`)));
    });
  }

  for (const mode of ['batch', 'atomic']) {
    test(`${mode}, expect { version }: 4 writers incrementing a counter lose no increment; losers get CONFLICT and keep nothing`, async () => {
      const pk = `counter#${mode}`;
      // Over 400 KB: split, so each stored count has a version to expect.
      const counter = (n) => blob(pk, 450 * KB + n * 37 * KB, { count: { N: String(n) } });
      const increments = 3;
      let conflicts = 0;
      const writer = async () => {
        for (let made = 0; made < increments; ) {
          const { item, version } = await getItem(client, { pk: { S: pk } }, DOCS);
          const count = item === undefined ? 0 : Number(item.count.N);
          const expect = item === undefined ? 'absent' : { version };
          try {
            const put = await putItem(client, counter(count + 1), { ...DOCS, mode, expect });
            assert.equal(put.superseded, false);
            made += 1;
          } catch (error) {
            if (error?.code !== 'CONFLICT') throw error;
            conflicts += 1;
          }
        }
      };
      await Promise.all(Array.from({ length: 4 }, writer));
      const { item, version } = await getItem(client, { pk: { S: pk } }, DOCS);
      assert.equal(Number(item.count.N), 4 * increments, 'every successful write incremented the count it read');
      assert.ok(conflicts > 0, 'the writers raced');
      const chunks = await chunksOf(pk);
      assert.ok(chunks.length > 0 && chunks.every((c) => c.pk.S.includes(`#${version}#`)), 'losers deleted their chunks');
    });
  }
});

describe('AbortSignal, progress and capacity', () => {
  test('an abort during the chunk writes rejects with the signal\'s reason; the stored item stays; the chunks written are deleted', async () => {
    const pk = 'abort#batch';
    const before = blob(pk, 600 * KB);
    const stored = await putItem(client, before, DOCS);
    const controller = new AbortController();
    const reason = new Error('user cancelled');
    let events = 0;
    const write = putItem(client, blob(pk, 12 * MB), {
      ...DOCS,
      mode: 'batch',
      concurrency: 1,
      onProgress: ({ chunksWritten }) => {
        events += 1;
        if (chunksWritten > 0) controller.abort(reason);
      },
      signal: controller.signal,
    });
    await assert.rejects(write, (error) => error === reason);
    assert.ok(events >= 2, 'aborted after a batch was written');
    const { item, version } = await getItem(client, { pk: { S: pk } }, DOCS);
    assert.equal(version, stored.version);
    assert.ok(same(item.data.B, before.data.B));
    const chunks = await chunksOf(pk);
    assert.equal(chunks.length, stored.manifest.chunkCount, 'nothing of the aborted write is left');
    assert.ok(chunks.every((c) => c.pk.S.includes(`#${stored.version}#`)));
  });

  test('an AbortSignal that already fired sends nothing', async () => {
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    await assert.rejects(putItem(client, blob('abort#early', 10), { ...DOCS, signal: controller.signal }), { message: 'too late' });
    await assert.rejects(getItem(client, { pk: { S: 'abort#early' } }, { ...DOCS, signal: controller.signal }), { message: 'too late' });
    assert.equal((await getItem(client, { pk: { S: 'abort#early' } }, DOCS)).item, undefined);
  });

  test('progress: put bytes rise to the total the result reports; get counts every chunk', async () => {
    const item = blob('progress#1', 5 * MB);
    const seen = [];
    const put = await putItem(client, item, { ...DOCS, mode: 'batch', onProgress: (p) => seen.push(p) });
    assert.ok(seen.length >= 3);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].bytesWritten >= seen[i - 1].bytesWritten);
    assert.deepStrictEqual(seen.at(-1), { bytesWritten: put.bytesWritten, totalBytes: put.bytesWritten, chunksWritten: put.manifest.chunkCount, chunks: put.manifest.chunkCount });
    assert.ok(put.bytesWritten > 5 * MB);
    const reads = [];
    await getItem(client, { pk: { S: 'progress#1' } }, { ...DOCS, onProgress: (p) => reads.push(p) });
    assert.deepStrictEqual(reads.at(-1), { chunksRead: put.manifest.chunkCount, chunks: put.manifest.chunkCount });
  });

  test('a throwing progress callback does not break the write', async () => {
    const put = await putItem(client, blob('progress#throws', 1 * MB), { ...DOCS, onProgress: () => { throw new Error('display broke'); } });
    assert.ok((await getItem(client, { pk: { S: 'progress#throws' } }, DOCS)).version === put.version);
  });

  test('capacity: the planned write units are the split\'s; consumed units are what the server reported', async () => {
    const item = blob('capacity#1', 3 * MB);
    const plan = split(item, { ...DOCS, mode: 'batch' });
    const put = await putItem(client, item, { ...DOCS, mode: 'batch' });
    assert.equal(put.writeUnits, plan.writeUnits);
    // DynamoDB Local reports each chunk put and the commit: a 400 KB chunk is 400 units.
    assert.ok(put.consumed.writeUnits >= plan.writeUnits - 1, `consumed ${put.consumed.writeUnits}, planned ${plan.writeUnits}`);
    assert.ok(put.consumed.readUnits >= 1, 'the parent read');
    const got = await getItem(client, { pk: { S: 'capacity#1' } }, DOCS);
    assert.ok(got.consumed.readUnits >= (3 * MB) / 4096, `read ${got.consumed.readUnits} units`);
  });
});

describe('streams', () => {
  test('putStream of a Node stream and of a Blob, read back byte for byte', async () => {
    const bytes = randomBytes(9 * MB + 123);
    const path = join(dir, 'file.bin');
    writeFileSync(path, bytes);
    const progress = [];
    const fromFile = await putStream(client, createReadStream(path), { pk: { S: 'stream#file' } }, { ...DOCS, attribute: 'file', size: bytes.length, onProgress: (p) => progress.push(p) });
    assert.equal(fromFile.bytesWritten, bytes.length);
    assert.ok(progress.length > 2 && progress.at(-1).bytesRead === bytes.length);
    const back = await getItem(client, { pk: { S: 'stream#file' } }, DOCS);
    assert.equal(back.version, fromFile.version);
    assert.ok(same(back.item.file.B, bytes));

    await putStream(client, new Blob([bytes]), { pk: 'stream#blob', kind: 'backup' }, { ...DOCS, format: 'plain', attribute: 'file' });
    const plain = await getItem(client, { pk: 'stream#blob' }, { ...DOCS, format: 'plain' });
    assert.equal(plain.item.kind, 'backup');
    assert.ok(same(plain.item.file, bytes));
  });

  test('putStream with no size: a Node Readable, a ReadableStream and an async generator, read back byte for byte', async () => {
    const bytes = randomBytes(9 * MB + 321);
    const path = join(dir, 'unsized.bin');
    writeFileSync(path, bytes);
    const sources = {
      // A Node stream has no length to give; neither has a web stream or a generator.
      'a Node Readable of 9 MB': () => createReadStream(path),
      'a Node Readable of 1 KB': () => Readable.from([bytes.subarray(0, KB)]),
      'a ReadableStream of 9 MB': () => Readable.toWeb(createReadStream(path)),
      'an async generator of 1 KB': async function* () { yield new Uint8Array(bytes.subarray(0, 1000)); yield new Uint8Array(bytes.subarray(1000, KB)); },
    };
    for (const [name, source] of Object.entries(sources)) {
      const expected = name.endsWith('1 KB') ? bytes.subarray(0, KB) : bytes;
      const progress = [];
      const put = await putStream(client, source(), { pk: { S: `unsized#${name}` } }, { ...DOCS, attribute: 'file', onProgress: (p) => progress.push(p) });
      assert.equal(put.bytesWritten, expected.length, name);
      // docs/FORMAT.md: a version 2 value stream, 11 bytes before the payload.
      assert.equal(put.manifest.rawBytes, expected.length + 11, name);
      assert.equal(progress.at(-1).bytesRead, expected.length, name);
      const back = await getItem(client, { pk: { S: `unsized#${name}` } }, DOCS);
      assert.ok(same(back.item.file.B, expected), name);
    }
    // A declared size that lies is still refused, and nothing is committed.
    for (const size of [bytes.length - 1, bytes.length + 1]) {
      await assert.rejects(putStream(client, createReadStream(path), { pk: { S: 'unsized#lie' } }, { ...DOCS, attribute: 'file', size }), { code: 'STREAM_LENGTH_MISMATCH' });
    }
    assert.equal((await getItem(client, { pk: { S: 'unsized#lie' } }, DOCS)).item, undefined);
    // A stream of unknown length passing maxRawBytes is cut off there, its chunks deleted.
    await assert.rejects(putStream(client, createReadStream(path), { pk: { S: 'unsized#cut' } }, { ...DOCS, attribute: 'file', codec: 'none', maxRawBytes: 2 * MB }), { code: 'VIRTUAL_ITEM_TOO_LARGE' });
    assert.equal((await getItem(client, { pk: { S: 'unsized#cut' } }, DOCS)).item, undefined);
    assert.deepEqual(await chunksOf('unsized#cut'), []);
  });

  test('a source that fails half-way: the stored item stays, the written chunks are deleted', async () => {
    const before = await putItem(client, blob('stream#broken', 500 * KB), DOCS);
    async function* broken() {
      yield new Uint8Array(randomBytes(3 * MB));
      throw new Error('disk read failed');
    }
    await assert.rejects(putStream(client, broken(), { pk: { S: 'stream#broken' } }, { ...DOCS, attribute: 'file', size: 8 * MB }), { message: 'disk read failed' });
    assert.equal(await storedVersion('stream#broken'), before.version);
    assert.equal((await chunksOf('stream#broken')).length, before.manifest.chunkCount);
  });

  test('a failed stream deletes every chunk it may have written, a write whose answer was lost included', async () => {
    // The second chunk batch is carried out but its answer lost (as when a
    // connection drops): with one attempt the write fails, and the chunks
    // of that batch go with the rest (the driver once deleted only the
    // chunks whose write it saw succeed, and left these to gc).
    let batches = 0;
    const lossy = {
      async send(command, options) {
        const output = await client.send(command, options);
        if (command.constructor.name === 'BatchWriteItemCommand' && ++batches === 2) {
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
        }
        return output;
      },
    };
    const data = new Uint8Array(randomBytes(6 * MB));
    const options = { ...DOCS, attribute: 'file', size: data.length, batchItems: 2, retry: { maxAttempts: 1 } };
    await assert.rejects(putStream(lossy, new Blob([data]), { pk: { S: 'stream#lost' } }, options), { code: 'CONNECTION_FAILED' });
    assert.ok(batches >= 2);
    assert.deepStrictEqual(await chunksOf('stream#lost'), []);
    assert.equal(await storedVersion('stream#lost'), undefined);
  });
});

/** Every byte a ReadableStream yields, and the number of pieces. */
async function drain(stream) {
  const pieces = [];
  for await (const piece of stream) pieces.push(piece);
  return { bytes: Buffer.concat(pieces), pieces: pieces.length };
}

describe('getStream', () => {
  test('yields the stored bytes of a file, a compressed string, an inline payload and an unsplit item', async () => {
    const bytes = randomBytes(5 * MB + 7);
    await putStream(client, new Blob([bytes]), { pk: { S: 'get#file' } }, { ...DOCS, attribute: 'file' });
    const progress = [];
    const file = await drain(await getStream(client, { pk: { S: 'get#file' } }, { ...DOCS, attribute: 'file', onProgress: (p) => progress.push(p) }));
    assert.ok(file.bytes.equals(bytes));
    assert.ok(file.pieces > 5, `${file.pieces} pieces: yielded as the chunks came`);
    assert.deepStrictEqual(progress.at(-1), { bytesRead: bytes.length, totalBytes: bytes.length, chunksRead: progress.at(-1).chunks, chunks: progress.at(-1).chunks });

    const doc = JSON.stringify(orderHistory({ pk: 'x' }, 3 * MB, 5));
    const put = await putItem(client, { pk: 'get#doc', note: 'kept', body: doc }, { ...DOCS, format: 'plain', codec: 'deflate' });
    assert.ok(put.manifest.chunkCount >= 1);
    const text = await drain(await getStream(client, { pk: 'get#doc' }, { ...DOCS, format: 'plain', attribute: 'body' }));
    assert.equal(text.bytes.toString('utf8'), doc);
    // Kept on the parent: read from the parent alone.
    assert.equal((await drain(await getStream(client, { pk: 'get#doc' }, { ...DOCS, format: 'plain', attribute: 'note' }))).bytes.toString(), 'kept');

    const small = 'ünïcode '.repeat(20_000);
    const inline = await putItem(client, { pk: 'get#inline', body: small }, { ...DOCS, format: 'plain' });
    assert.equal(inline.manifest?.chunkCount ?? 0, 0, 'stored inline or whole');
    assert.equal((await drain(await getStream(client, { pk: 'get#inline' }, { ...DOCS, format: 'plain', attribute: 'body' }))).bytes.toString(), small);
  });

  test('no item is NOT_FOUND, no such attribute is ATTRIBUTE_NOT_FOUND, a number is ATTRIBUTE_NOT_BLOB', async () => {
    await assert.rejects(getStream(client, { pk: { S: 'get#none' } }, { ...DOCS, attribute: 'file' }), { code: 'NOT_FOUND' });
    await assert.rejects(getStream(client, { pk: { S: 'get#file' } }, { ...DOCS, attribute: 'other' }), { code: 'ATTRIBUTE_NOT_FOUND' });
    await putItem(client, { pk: 'get#number', n: 5 }, { ...DOCS, format: 'plain' });
    await assert.rejects(getStream(client, { pk: 'get#number' }, { ...DOCS, format: 'plain', attribute: 'n' }), { code: 'ATTRIBUTE_NOT_BLOB' });
  });

  test('a flipped byte in any chunk errors the stream with CHUNK_DIGEST_MISMATCH before a byte of that chunk is yielded', async () => {
    const bytes = randomBytes(3 * MB);
    const put = await putStream(client, new Blob([bytes]), { pk: { S: 'get#flip' } }, { ...DOCS, attribute: 'file' });
    const chunks = put.manifest.chunkCount;
    const stored = (await chunksOf('get#flip')).sort((a, b) => a.pk.S.localeCompare(b.pk.S));
    assert.equal(stored.length, chunks);
    for (const seq of [0, Math.floor(chunks / 2), chunks - 1]) {
      const original = stored[seq];
      const data = Buffer.from(original._d.B);
      data[data.length >> 1] ^= 0x01;
      await client.send(new PutItemCommand({ TableName: 'docs_chunks', Item: { ...original, _d: { B: data } } }));
      try {
        const pieces = [];
        const stream = await getStream(client, { pk: { S: 'get#flip' } }, { ...DOCS, attribute: 'file' });
        await assert.rejects(
          (async () => {
            for await (const piece of stream) pieces.push(piece);
          })(),
          { code: 'CHUNK_DIGEST_MISMATCH' },
        );
        const yielded = Buffer.concat(pieces);
        // Only bytes of the chunks before the damaged one came out, and they are the file's.
        const before = stored.slice(0, seq).reduce((n, c) => n + c._d.B.length, 0);
        assert.ok(yielded.length <= before, `chunk ${seq}: ${yielded.length} bytes yielded, the chunks before hold ${before}`);
        assert.ok(yielded.equals(bytes.subarray(0, yielded.length)), `chunk ${seq}: the bytes yielded are the file's`);
      } finally {
        await client.send(new PutItemCommand({ TableName: 'docs_chunks', Item: original }));
      }
    }
    assert.ok((await drain(await getStream(client, { pk: { S: 'get#flip' } }, { ...DOCS, attribute: 'file' }))).bytes.equals(bytes), 'restored, it reads whole');
  });

  test('reads start with the read window in flight, as the host does', async () => {
    // Six chunk requests out before the first answer: the core's read
    // window (the driver once started at 4, the host at 6).
    const stored = await putItem(client, blob('get#window', 4 * MB), { ...DOCS, codec: 'none' });
    assert.ok(stored.manifest.chunkCount > DEFAULT_WINDOW);
    let out = 0;
    let most = 0;
    let answered = false;
    const counting = {
      send(command, options) {
        const batch = command.constructor.name === 'BatchGetItemCommand';
        if (batch && !answered) most = Math.max(most, ++out);
        return client.send(command, options).finally(() => {
          if (batch) answered = true;
        });
      },
    };
    await getItem(counting, { pk: { S: 'get#window' } }, DOCS);
    assert.equal(most, DEFAULT_WINDOW);
    assert.equal(DEFAULT_WINDOW, 6);
    (out = 0), (most = 0), (answered = false);
    await drain(await getStream(counting, { pk: { S: 'get#window' } }, { ...DOCS, attribute: 'data' }));
    assert.equal(most, DEFAULT_WINDOW);
  });

  test('cancelling the stream, or aborting its signal, stops it', async () => {
    const key = { pk: { S: 'get#file' } };
    const stream = await getStream(client, key, { ...DOCS, attribute: 'file', window: 2 });
    const reader = stream.getReader();
    assert.ok((await reader.read()).value.length > 0);
    await reader.cancel('enough');
    assert.deepStrictEqual(await reader.read(), { done: true, value: undefined });

    const controller = new AbortController();
    const reason = new Error('navigated away');
    const aborted = await getStream(client, key, { ...DOCS, attribute: 'file', signal: controller.signal });
    let pieces = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of aborted) if (++pieces === 2) controller.abort(reason);
      })(),
      (error) => error === reason,
    );
    assert.ok(pieces >= 2);
  });

  test('a 200 MB stream with no size goes in, and streams out holding less than 32 MB of heap', { timeout: 600_000 }, async () => {
    const SIZE = 200 * MB;
    const PIECE = 1 * MB;
    const written = createHash('sha256');
    async function* file() {
      for (let at = 0; at < SIZE; at += PIECE) {
        const piece = new Uint8Array(randomBytes(PIECE));
        written.update(piece);
        yield piece;
      }
    }
    // A stream of unknown length, with no size and no limit: a stream is never held whole.
    const put = await putStream(client, file(), { pk: { S: 'get#200MB' } }, { ...DOCS, attribute: 'file' });
    assert.ok(put.manifest.chunkCount >= 500);
    // A whole-item read (getItem) refuses more than 64 MiB unless asked, naming the option.
    await assert.rejects(getItem(client, { pk: { S: 'get#200MB' } }, DOCS), (e) => e.code === 'DECOMPRESS_LIMIT' && /maxBytes/.test(e.message));
    // What the stream holds, not what it left for the collector: every
    // sample is taken right after a full collection.
    const live = () => {
      collectGarbage();
      return process.memoryUsage();
    };
    // Growth is measured from the lowest sample, not the first: buffers the
    // put above left for the collector may go while the read runs.
    const peak = { heapUsed: 0, arrayBuffers: 0, rss: 0 };
    const low = { ...live() };
    const read = createHash('sha256');
    let length = 0;
    let pieces = 0;
    for await (const piece of await getStream(client, { pk: { S: 'get#200MB' } }, { ...DOCS, attribute: 'file' })) {
      read.update(piece);
      length += piece.length;
      if (pieces++ % 16 === 0) {
        const now = live();
        for (const k of Object.keys(peak)) {
          peak[k] = Math.max(peak[k], now[k]);
          low[k] = Math.min(low[k], now[k]);
        }
      }
    }
    assert.equal(length, SIZE);
    assert.equal(read.digest('hex'), written.digest('hex'));
    const growth = Object.fromEntries(Object.keys(peak).map((k) => [k, peak[k] - low[k]]));
    const mib = (n) => `${(n / MB).toFixed(1)} MiB`;
    console.log(`getStream of 200 MiB: heap +${mib(growth.heapUsed)}, array buffers +${mib(growth.arrayBuffers)}, rss +${mib(growth.rss)} (${pieces} pieces)`);
    assert.ok(growth.heapUsed < 32 * MB, `heap grew by ${mib(growth.heapUsed)}`);
    // The bytes themselves live in array buffers, outside the heap (the
    // WebAssembly memory among them, which only grows): the read window's
    // 6 chunks in flight, each as the SDK's response body, its parsed and
    // decoded copies and the module's copy: 20-32 MiB in CI on Node 20,
    // 22 and 24. Holding the file would take 200.
    assert.ok(growth.arrayBuffers < 48 * MB, `array buffers grew by ${mib(growth.arrayBuffers)}`);
    // DynamoDB Local scans pages in time growing with the table: gc's tests below need it small again.
    // Deleting needs no limit: it never reads the payload.
    assert.equal((await deleteItem(client, { pk: { S: 'get#200MB' } }, DOCS)).chunksDeleted, put.manifest.chunkCount);
  });
});

describe('DynamoDBDocumentClient and plain values', () => {
  test('the DocumentClient works as the client, with format plain', async () => {
    const doc = DynamoDBDocumentClient.from(client);
    const item = orderHistory({ pk: 'tenant#doc', sk: 'orders' }, 3 * MB, 11);
    const put = await putItem(doc, item, { ...APP, format: 'plain' });
    const { item: back } = await getItem(doc, { pk: 'tenant#doc', sk: 'orders' }, { ...APP, format: 'plain' });
    assert.deepStrictEqual(back, item);
    const gone = await deleteItem(doc, { pk: 'tenant#doc', sk: 'orders' }, { ...APP, format: 'plain' });
    assert.deepStrictEqual({ deleted: gone.deleted, chunksDeleted: gone.chunksDeleted }, { deleted: true, chunksDeleted: put.manifest?.chunkCount ?? 0 });
    assert.equal((await getItem(doc, { pk: 'tenant#doc', sk: 'orders' }, { ...APP, format: 'plain' })).item, undefined);
  });
});

describe('putItems', () => {
  test('stores every valid item of a mixed load, many at once, and reports each bad one by its index', async () => {
    const sizes = [KB, 50 * KB, 420 * KB, 1500 * KB];
    const items = Array.from({ length: 20 }, (_, n) => blob(`bulk#${n}`, sizes[n % 4]));
    async function* load() {
      for (const [n, item] of items.entries()) {
        if (n === 5) yield { pk: { S: 'bulk#bad' }, _ds: { S: 'reserved' } };
        if (n === 12) yield { data: { S: 'no key' } };
        yield item;
      }
    }
    const seen = [];
    const result = await putItems(client, load(), { ...DOCS, inFlight: 4, onProgress: (p) => seen.push(p) });
    assert.equal(result.written, 20);
    assert.deepEqual(result.failed.map(({ index, code }) => [index, code]), [[5, 'ATTRIBUTE_RESERVED'], [13, 'KEY_MISSING']]);
    assert.deepEqual(seen.at(-1), { written: 20, failed: 2 });
    assert.ok(result.consumed.writeUnits > 0 && result.bytesWritten > 0);
    for (const item of items) assert.ok(same((await getItem(client, { pk: item.pk }, DOCS)).item.data.B, item.data.B));
    await assert.rejects(putItems(client, 42, DOCS), { code: 'INPUT_INVALID' });
    await assert.rejects(putItems(client, [], { ...DOCS, inFlight: 0 }), { code: 'OPTIONS_INVALID' });
  });
});

describe('version history', () => {
  test('keep 3: five overwrites list exactly three earlier versions, each reads back; restore makes one current; gc keeps what is kept', async () => {
    const key = { pk: { S: 'history#doc' } };
    const sizes = [900 * KB, 200 * KB, 2 * KB, 700 * KB, 1200 * KB, 500 * KB];
    const items = sizes.map((size) => blob('history#doc', size));
    const written = [];
    for (const [n, item] of items.entries()) {
      const put = await putItem(client, item, { ...DOCS, history: { keep: 3 }, note: `writer ${n}` });
      assert.ok(put.version, 'an item that keeps history is always split');
      written.push(put.version);
    }
    const listed = await listVersions(client, key, DOCS);
    assert.deepEqual(listed.retention, { keep: 3, maxAgeMs: undefined });
    assert.deepEqual(listed.versions.map((v) => v.version), [written[5], written[4], written[3], written[2]]);
    assert.deepEqual(listed.versions.map((v) => v.note), ['writer 5', 'writer 4', 'writer 3', 'writer 2']);
    assert.deepEqual(listed.versions.map((v) => v.current), [true, false, false, false]);
    for (const n of [2, 3, 4]) {
      const { item, version } = await getItem(client, key, { ...DOCS, version: written[n] });
      assert.equal(version, written[n]);
      assert.ok(same(item.data.B, items[n].data.B), `version ${n}`);
    }
    await assert.rejects(getItem(client, key, { ...DOCS, version: written[0] }), { code: 'VERSION_NOT_FOUND' });
    await assert.rejects(getItem(client, key, { ...DOCS, version: 'not-a-version' }), { code: 'OPTIONS_INVALID' });
    await assert.rejects(putItem(client, items[0], { ...DOCS, history: { keep: 101 } }), { code: 'OPTIONS_INVALID' });

    const report = await gc(client, { ...DOCS, graceMs: 0 });
    assert.ok(report.kept > 0, JSON.stringify(report));
    for (const n of [2, 3, 4]) assert.ok((await getItem(client, key, { ...DOCS, version: written[n] })).item);

    const restored = await restoreVersion(client, key, written[3], DOCS);
    assert.ok(same((await getItem(client, key, DOCS)).item.data.B, items[3].data.B));
    const after = await listVersions(client, key, DOCS);
    assert.deepEqual(after.versions.map((v) => v.version), [restored.version, written[5], written[4], written[3]]);
    assert.equal(after.versions[0].note, `restored ${written[3]}`);
    assert.equal(await listVersions(client, { pk: { S: 'history#none' } }, DOCS), undefined);
  });
});

describe('gc', () => {
  test('deletes only unreferenced chunks past the grace period; a damaged parent keeps all of its chunks; dryRun deletes nothing', async () => {
    // Orphans: chunks written by a write whose commit never happened.
    const orphan = split(blob('gc#orphan', 2 * MB), { ...DOCS, mode: 'batch' });
    for (const chunk of orphan.chunks) await client.send(new PutItemCommand({ TableName: 'docs_chunks', Item: chunk }));
    // A live item, and one whose manifest someone damaged.
    const liveItem = blob('gc#live', 2 * MB);
    const live = await putItem(client, liveItem, DOCS);
    const damaged = await putItem(client, blob('gc#damaged', 2 * MB), DOCS);
    const { Item: parent } = await client.send(new GetItemCommand({ TableName: 'docs', Key: { pk: { S: 'gc#damaged' } }, ConsistentRead: true }));
    parent._ds.M.n = { N: '-1' };
    await client.send(new PutItemCommand({ TableName: 'docs', Item: parent }));

    const dry = await gc(client, { ...DOCS, graceMs: 0, dryRun: true });
    assert.ok(dry.deleted >= orphan.chunks.length);
    assert.equal((await chunksOf('gc#orphan')).length, orphan.chunks.length, 'dryRun deleted nothing');

    const report = await gc(client, { ...DOCS, graceMs: 0 });
    assert.equal(report.chunks, report.referenced + report.kept + report.young + report.deleted + report.unreadable);
    assert.ok(report.unreadableParents.some((p) => p.key.pk.S === 'gc#damaged' && /MANIFEST/.test(p.reason)), JSON.stringify(report.unreadableParents));
    assert.equal((await chunksOf('gc#orphan')).length, 0);
    assert.equal((await chunksOf('gc#live')).length, live.manifest.chunkCount);
    assert.equal((await chunksOf('gc#damaged')).length, damaged.manifest.chunkCount);
    assert.ok(same((await getItem(client, { pk: { S: 'gc#live' } }, DOCS)).item.data.B, liveItem.data.B));

    // Everything left in the chunk table belongs to a stored parent's version (or to the damaged one).
    const again = await gc(client, { ...DOCS, graceMs: 0 });
    assert.equal(again.deleted, 0);
  });

  test('over the anchors index: one entry per 64 chunks read, every orphan chunk deleted, the live ones kept', async () => {
    // Orphans of 4 KB chunks: 70 chunks (anchors 0 and 64), and the first
    // 5 of another write (what a crash may leave: its anchor came first).
    const small = { ...DOCS, mode: 'batch', chunkItemBytes: 4096, itemLimit: 4096 };
    const long = split(blob('gcanchor#long', 280 * KB), small);
    assert.ok(long.chunks.length > 64, String(long.chunks.length));
    assert.deepEqual(long.chunks.flatMap((c, i) => (c._da ? [i] : [])), [0, 64]);
    const partial = split(blob('gcanchor#partial', 100 * KB), small).chunks.slice(0, 5);
    for (const chunk of [...long.chunks, ...partial]) await client.send(new PutItemCommand({ TableName: 'docs_chunks', Item: chunk }));
    const live = await putItem(client, blob('gcanchor#live', 1200 * KB), DOCS);
    const dry = await gc(client, { ...DOCS, graceMs: 0, dryRun: true, anchors: true });
    // Anchors are counted, not chunks (other tests' orphans may add some).
    assert.ok(dry.deleted >= 3 && dry.deleted < long.chunks.length, JSON.stringify(dry));
    assert.equal((await chunksOf('gcanchor#long')).length, long.chunks.length, 'dryRun deleted nothing');
    const report = await gc(client, { ...DOCS, graceMs: 0, anchors: true });
    assert.equal(report.chunks, report.referenced + report.kept + report.young + report.deleted + report.unreadable);
    assert.equal((await chunksOf('gcanchor#long')).length, 0);
    assert.equal((await chunksOf('gcanchor#partial')).length, 0);
    assert.equal((await chunksOf('gcanchor#live')).length, live.manifest.chunkCount);
  });

  test('in segments at once, with a rate limit and progress: the same orphans go, the live chunks stay', async () => {
    const orphans = [];
    for (const n of [1, 2, 3, 4]) {
      const orphan = split(blob(`gcseg#orphan${n}`, 1200 * KB), { ...DOCS, mode: 'batch' });
      for (const chunk of orphan.chunks) await client.send(new PutItemCommand({ TableName: 'docs_chunks', Item: chunk }));
      orphans.push(...orphan.chunks);
    }
    const live = await putItem(client, blob('gcseg#live', 1200 * KB), DOCS);
    const seen = [];
    const report = await gc(client, { ...DOCS, graceMs: 0, segments: 3, maxUnitsPerSecond: 100_000, onProgress: (p) => seen.push(p) });
    // Each orphan's anchor at least: it goes with its span, so chunks of the
    // span on a later page go unseen and uncounted (docs/FORMAT.md §9).
    assert.ok(report.deleted >= 4, JSON.stringify(report));
    assert.equal(report.chunks, report.referenced + report.kept + report.young + report.deleted + report.unreadable);
    for (const n of [1, 2, 3, 4]) assert.equal((await chunksOf(`gcseg#orphan${n}`)).length, 0);
    assert.equal((await chunksOf('gcseg#live')).length, live.manifest.chunkCount);
    assert.ok(seen.length > 0 && seen.at(-1).chunks <= report.chunks, JSON.stringify(seen));
    await assert.rejects(gc(client, { ...DOCS, segments: 0 }), { code: 'OPTIONS_INVALID' });
  });

  test("collects the orphans of a stored item whose manifest claims more than any reader's limit", async () => {
    // gc reads only a parent's version, whatever size its manifest claims
    // (the driver's gc once read it through maxBytes, 64 MiB: it called
    // such a parent unreadable and kept its orphans forever).
    const big = await putItem(client, blob('gc#huge', 1 * MB), DOCS);
    const { Item: parent } = await client.send(new GetItemCommand({ TableName: 'docs', Key: { pk: { S: 'gc#huge' } }, ConsistentRead: true }));
    parent._ds.M.c = { S: 'deflate' };
    parent._ds.M.r = { N: String(100 * 1024 * MB) };
    await client.send(new PutItemCommand({ TableName: 'docs', Item: parent }));
    const orphan = split(blob('gc#huge', 2 * MB), { ...DOCS, mode: 'batch' });
    for (const chunk of orphan.chunks) await client.send(new PutItemCommand({ TableName: 'docs_chunks', Item: chunk }));
    const report = await gc(client, { ...DOCS, graceMs: 0 });
    assert.ok(!report.unreadableParents.some((p) => p.key.pk.S === 'gc#huge'), JSON.stringify(report.unreadableParents));
    const left = await chunksOf('gc#huge');
    assert.equal(left.length, big.manifest.chunkCount, 'the orphans went, the stored version stayed');
    assert.ok(left.every((c) => c.pk.S.includes(big.version)));
  });

  test('in an item collection, gc leaves the user\'s own items alone', async () => {
    await client.send(new PutItemCommand({ TableName: 'app', Item: { pk: { S: 'tenant#gc' }, sk: { S: 'note#000001' }, _h: { S: 'mine' } } }));
    const orphan = split({ pk: { S: 'tenant#gc' }, sk: { S: 'doc' }, data: { B: new Uint8Array(randomBytes(1 * MB)) } }, { ...APP, mode: 'batch' });
    for (const chunk of orphan.chunks) await client.send(new PutItemCommand({ TableName: 'app', Item: chunk }));
    const report = await gc(client, { ...APP, graceMs: 0 });
    assert.ok(report.deleted >= orphan.chunks.length);
    const left = (await scanAll('app')).filter((i) => i.pk.S === 'tenant#gc');
    assert.deepStrictEqual(left.map((i) => i.sk.S), ['note#000001']);
  });
});

describe("the store's clock", () => {
  /** The Unix milliseconds a version id (a ULID) was stamped at: its first 10 base-32 characters. */
  const stampedAt = (version) => [...version.slice(0, 10)].reduce((ms, c) => ms * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c), 0);

  test('a writer whose clock runs two hours behind stamps its version in the store\'s time', async () => {
    const realNow = Date.now;
    const behind = 2 * 3600 * 1000;
    const before = realNow();
    Date.now = () => realNow() - behind;
    let put;
    try {
      put = await putItem(client, blob('clock#behind', 1 * MB), { ...DOCS, mode: 'batch' });
    } finally {
      Date.now = realNow;
    }
    const at = stampedAt(put.version);
    // The store's Date header has whole seconds: within 2 s of the real time, not two hours off.
    assert.ok(at >= before - 2000 && at <= realNow() + 2000, `stamped ${new Date(at).toISOString()}, now ${new Date().toISOString()}`);
    // So a gc with a short grace, running on a correct clock, sees the chunks as young, not abandoned.
    const orphan = split(blob('clock#orphan', 1 * MB), { ...DOCS, mode: 'batch', version: put.version.replace(/.$/, (c) => (c === '0' ? '1' : '0')) });
    for (const chunk of orphan.chunks) await client.send(new PutItemCommand({ TableName: 'docs_chunks', Item: chunk }));
    const report = await gc(client, { ...DOCS, graceMs: 10 * 60 * 1000, dryRun: true });
    assert.ok(report.young >= orphan.chunks.length, JSON.stringify(report));
  });
});

describe('indexes and TTL', () => {
  const INDEXED = { table: 'indexed', key: [{ name: 'pk', type: 'S' }] };
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    await client.send(
      new CreateTableCommand({
        TableName: 'indexed',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'title', AttributeType: 'S' },
          { AttributeName: 'rank', AttributeType: 'N' },
        ],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'by-title',
            KeySchema: [{ AttributeName: 'title', KeyType: 'HASH' }, { AttributeName: 'rank', KeyType: 'RANGE' }],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
    await client.send(
      new CreateTableCommand({
        TableName: 'indexed_chunks',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    for (const TableName of ['indexed', 'indexed_chunks']) {
      await client.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { Enabled: true, AttributeName: 'expiresAt' } }));
    }
  });

  /** A document: a 300-character title (the index's key), a rank, an expiry, 30 metadata fields and a body. */
  function doc(id, bytes, expiresAt) {
    const item = { pk: { S: `doc#${id}` }, title: { S: `${id}-${'t'.repeat(300)}` }, rank: { N: '7' }, expiresAt: { N: String(expiresAt) } };
    for (let i = 0; i < 30; i++) item[`meta${i}`] = { S: 'm'.repeat(150) };
    return { ...item, body: { B: new Uint8Array(randomBytes(bytes)) } };
  }

  const byTitle = async (id) =>
    (await client.send(new QueryCommand({ TableName: 'indexed', IndexName: 'by-title', KeyConditionExpression: 'title = :t', ExpressionAttributeValues: { ':t': { S: `${id}-${'t'.repeat(300)}` } } }))).Items;
  const chunksOfDoc = async (id) => (await scanAll('indexed_chunks')).filter((c) => c.pk.S.startsWith(`doc\\#${id}#`));

  test('with no keep, the index keys stay on the parent and every chunk carries the TTL (putItem and putStream)', async () => {
    const expiresAt = now() + 86_400;
    for (const [id, bytes] of [['small', 1000], ['one', 1_000_000], ['six', 6_000_000]]) {
      const put = await putItem(client, doc(id, bytes, expiresAt), INDEXED);
      if (bytes > 1000) assert.ok(!put.manifest.spilled?.includes?.('title'), `${id}: title spilled`);
      assert.equal((await byTitle(id)).length, 1, `${id}: in the title index`);
    }
    const { body, ...parent } = doc('streamed', 0, expiresAt);
    await putStream(client, Readable.from([randomBytes(2_000_000)]), parent, { ...INDEXED, attribute: 'body' });
    assert.equal((await byTitle('streamed')).length, 1, 'a streamed item is in the index');
    for (const id of ['one', 'six', 'streamed']) {
      const chunks = await chunksOfDoc(id);
      assert.ok(chunks.length >= 3, `${id}: ${chunks.length} chunks`);
      for (const chunk of chunks) assert.deepEqual(chunk.expiresAt, { N: String(expiresAt) }, `${id}: a chunk without the TTL`);
    }
    // An index key DynamoDB would refuse is refused before anything is written.
    await assert.rejects(putItem(client, { ...doc('bad', 1_000_000, expiresAt), rank: { S: 'seven' } }, INDEXED), { code: 'KEY_WRONG_TYPE' });
    assert.deepEqual(await chunksOfDoc('bad'), []);
  });

  test('an expired item whose chunks TTL deleted first reads ITEM_EXPIRED', async () => {
    await putItem(client, doc('expired', 1_000_000, now() - 60), INDEXED);
    const [chunk] = await chunksOfDoc('expired');
    await client.send(new DeleteItemCommand({ TableName: 'indexed_chunks', Key: { pk: chunk.pk } }));
    await assert.rejects(getItem(client, { pk: { S: 'doc#expired' } }, INDEXED), { code: 'ITEM_EXPIRED' });
  });

  test('indexKeys and ttl given: the table is not described (a role that may not)', async () => {
    let described = 0;
    const denied = {
      async send(command, options) {
        if (command.constructor.name.startsWith('Describe')) {
          described += 1;
          // As the SDK gives it: a 400, not worth another attempt.
          throw Object.assign(new Error('not authorized to perform: dynamodb:DescribeTable'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } });
        }
        return client.send(command, options);
      },
    };
    await assert.rejects(putItem(denied, doc('denied', 1_000_000, now() + 60), INDEXED), (e) => e.code === 'TABLE_UNSUPPORTED' && /indexKeys/.test(e.message));
    const explicit = { ...INDEXED, indexKeys: [{ name: 'title', type: 'S' }, { name: 'rank', type: 'N', sort: true }], ttl: 'expiresAt' };
    await putItem(denied, doc('explicit', 1_000_000, now() + 60), explicit);
    assert.equal(described, 1);
    assert.equal((await byTitle('explicit')).length, 1);
  });

  test('updateItem: an index key on the parent is one UpdateItem, a spilled attribute a rewrite, a lost race CONFLICT', async () => {
    const key = { pk: { S: 'doc#upd' } };
    const original = doc('upd', 2_000_000, now() + 86_400);
    await putItem(client, original, INDEXED);
    const chunks = (await chunksOfDoc('upd')).map((c) => c.pk.S).sort();

    const dry = await updateItem(client, key, { set: { rank: { N: '8' } } }, { ...INDEXED, dryRun: true });
    assert.deepEqual([dry.path, dry.applied], ['parent', false]);
    assert.equal((await byTitle('upd'))[0].rank.N, '7', 'a dry run changes nothing');

    await updateItem(client, key, { set: { reviewer: { S: 'ann' } } }, INDEXED);
    const ranked = await updateItem(client, key, { set: { rank: { N: '8' } }, remove: ['reviewer'] }, INDEXED);
    assert.deepEqual([ranked.path, ranked.applied, ranked.put], ['parent', true, undefined]);
    // The parent (about 4 KB), not the 2 MB item; DynamoDB also bills the index's writes (its
    // old entry deleted, the new one put), which the plan does not count.
    assert.ok(ranked.writeUnits <= 5, `${ranked.writeUnits} write units planned`);
    assert.ok(ranked.consumed.writeUnits >= ranked.writeUnits && ranked.consumed.writeUnits < 20, `${ranked.consumed.writeUnits} write units`);
    assert.deepEqual((await chunksOfDoc('upd')).map((c) => c.pk.S).sort(), chunks, 'no chunk touched');
    assert.equal((await byTitle('upd'))[0].rank.N, '8', 'the index sees the new rank');
    const expected = { ...original, rank: { N: '8' } };
    assert.deepEqual((await getItem(client, key, INDEXED)).item, expected);

    // The body lives in the payload: the item is written again, whole.
    const body = { B: new Uint8Array(randomBytes(1_500_000)) };
    const rewritten = await updateItem(client, key, { set: { body } }, INDEXED);
    assert.equal(rewritten.path, 'rewrite');
    assert.match(rewritten.reason, /body is in the payload/);
    assert.notEqual(rewritten.put.version, undefined);
    assert.deepEqual((await getItem(client, key, INDEXED)).item, { ...expected, body });
    assert.ok((await chunksOfDoc('upd')).every((c) => !chunks.includes(c.pk.S)), 'the old chunks are gone');

    // A writer that commits between the update's read and its write wins.
    const racing = {
      async send(command, options) {
        if (command.constructor.name === 'UpdateItemCommand') await putItem(client, { ...original, status: { S: 'other' } }, INDEXED);
        return client.send(command, options);
      },
    };
    await assert.rejects(updateItem(racing, key, { set: { rank: { N: '9' } } }, INDEXED), { code: 'CONFLICT' });
    assert.deepEqual((await getItem(client, key, INDEXED)).item, { ...original, status: { S: 'other' } });

    // A rewrite asked for, with no change: the same item as a new version.
    const before = await getItem(client, key, INDEXED);
    const again = await updateItem(client, key, {}, { ...INDEXED, rewrite: true });
    assert.deepEqual([again.path, again.reason], ['rewrite', 'a rewrite was asked for']);
    const after = await getItem(client, key, INDEXED);
    assert.deepEqual(after.item, before.item);
    assert.notEqual(after.version, before.version);
    await assert.rejects(updateItem(client, key, {}, INDEXED), { code: 'UPDATE_INVALID' });
    await assert.rejects(updateItem(client, key, { set: { pk: { S: 'x' } } }, INDEXED), { code: 'UPDATE_INVALID' });
    await assert.rejects(updateItem(client, key, { remove: 'rank' }, INDEXED), { code: 'INPUT_INVALID' });
    await assert.rejects(updateItem(client, key, { set: { rank: { S: 'eight' } } }, INDEXED), { code: 'KEY_WRONG_TYPE' });
  });
});

describe('groups', () => {
  test('updateItem of one large attribute reuses the chunks of the others, and reads back whole', async () => {
    const key = { pk: { S: 'groups#upd' } };
    const original = { ...key, body: { B: new Uint8Array(randomBytes(900 * KB)) }, attachment: { B: new Uint8Array(randomBytes(600 * KB)) }, note: { S: 'n' } };
    const put = await putItem(client, original, DOCS);
    assert.equal(put.manifest.groups, 1, 'body and attachment: a frame each');
    assert.deepEqual(put.manifest.spilled, ['attachment', 'body']);
    const before = (await chunksOf('groups#upd')).map((c) => c.pk.S);
    assert.equal(before.length, put.manifest.chunkCount);

    const attachment = { B: new Uint8Array(randomBytes(500 * KB)) };
    const updated = await updateItem(client, key, { set: { attachment } }, DOCS);
    assert.equal(updated.path, 'rewrite');
    assert.deepEqual(updated.reused, ['body']);
    const after = (await chunksOf('groups#upd')).map((c) => c.pk.S);
    // The body's 900 KB are 3 chunks, kept as they were; the attachment's are new.
    assert.equal(before.filter((k) => after.includes(k)).length, 3);
    assert.equal(after.length, 3 + 2);
    assert.deepEqual((await getItem(client, key, DOCS)).item, { ...original, attachment });
    // About 500 KB written and 600 KB deleted; rewriting the body too would add 1.8 MB more.
    assert.ok(updated.consumed.writeUnits < 1300, `${updated.consumed.writeUnits} write units`);
  });
});

describe('queryItems', () => {
  test("yields a customer's items whole from an item collection, no chunk, through every page; lazy yields parents", async () => {
    const order = (sk, bytes) => ({ pk: { S: 'CUSTOMER#9' }, sk: { S: sk }, body: { B: new Uint8Array(randomBytes(bytes)) } });
    const items = [order('ORDER#1', 1_500_000), order('ORDER#2', 2_000), order('ORDER#3', 800_000)];
    let chunks = 0;
    for (const item of items) chunks += (await putItem(client, item, APP)).manifest?.chunkCount ?? 0;
    const input = { KeyConditionExpression: 'pk = :p AND begins_with(sk, :o)', ExpressionAttributeValues: { ':p': { S: 'CUSTOMER#9' }, ':o': { S: 'ORDER' } } };
    const raw = await client.send(new QueryCommand({ TableName: 'app', ...input }));
    assert.ok(raw.Items.length > items.length, `a raw Query returns ${raw.Items.length} items, chunks included`);

    for (const Limit of [undefined, 2]) {
      const found = [];
      const iterator = queryItems(client, { ...input, Limit }, APP);
      let next;
      while (!(next = await iterator.next()).done) found.push(next.value);
      assert.deepEqual(found, items, `Limit ${Limit}`);
      assert.equal(next.value.virtualItems, 2);
      assert.equal(next.value.chunksSkipped, chunks);
    }

    const lazy = [];
    for await (const item of queryItems(client, input, { ...APP, lazy: true })) lazy.push(item);
    assert.deepEqual(lazy.map((i) => i.sk.S), ['ORDER#1', 'ORDER#2', 'ORDER#3']);
    assert.ok(lazy[0]._ds && !lazy[0].body, 'a lazy parent, as stored');

    // Breaking out stops the query; a scan (no key condition) with plain values.
    for await (const item of queryItems(client, input, APP)) {
      assert.equal(item.sk.S, 'ORDER#1');
      break;
    }
    const scanned = [];
    for await (const item of queryItems(DynamoDBDocumentClient.from(client), { FilterExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'CUSTOMER#9' } }, { ...APP, format: 'plain' })) {
      scanned.push(item);
    }
    assert.deepEqual(scanned.map((i) => [i.sk, i.body.length]), items.map((i) => [i.sk.S, i.body.B.length]));
    await assert.rejects(queryItems(client, null, APP).next(), { code: 'INPUT_INVALID' });
  });
});

describe('verify', () => {
  test('in segments at a rate: every item checked, exactly the one with a flipped chunk byte reported', async () => {
    const AUDIT = { ...APP, table: 'audit' };
    await client.send(
      new CreateTableCommand({
        TableName: 'audit',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ['pk', 'sk'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
      }),
    );
    const doc = (pk, bytes) => ({ pk: { S: pk }, sk: { S: 'doc' }, body: { B: new Uint8Array(randomBytes(bytes)) } });
    for (const item of [doc('a', 1_500_000), doc('b', 2_000), doc('c', 900_000), doc('d', 40_000)]) await putItem(client, item, AUDIT);
    const clean = await verify(client, { ...AUDIT, segments: 2 });
    assert.deepEqual([clean.items, clean.virtualItems, clean.damaged], [4, 2, []]);

    const chunk = (await client.send(new ScanCommand({ TableName: 'audit', ConsistentRead: true }))).Items.find((i) => i.pk.S === 'c' && i._d);
    const data = Buffer.from(chunk._d.B);
    data[7] ^= 0x10;
    await client.send(new PutItemCommand({ TableName: 'audit', Item: { ...chunk, _d: { B: data } } }));
    const seen = [];
    const report = await verify(client, { ...AUDIT, segments: 3, maxUnitsPerSecond: 2000, onProgress: (p) => seen.push(p) });
    assert.equal(report.items, 4);
    assert.deepEqual(report.damaged.map((d) => [d.key, d.code]), [[{ pk: { S: 'c' }, sk: { S: 'doc' } }, 'CHUNK_DIGEST_MISMATCH']]);
    assert.ok(report.consumed.readUnits > 0);
    assert.deepEqual(seen.at(-1), { items: 4, damaged: 1 });
    await assert.rejects(verify(client, { ...AUDIT, segments: 0 }), { code: 'OPTIONS_INVALID' });
  });
});

describe('options and input', () => {
  test('a missing or wrong client, retry or concurrency is OPTIONS_INVALID', async () => {
    await assert.rejects(putItem(undefined, blob('opt', 10), DOCS), { code: 'OPTIONS_INVALID' });
    await assert.rejects(getItem({}, { pk: { S: 'opt' } }, DOCS), { code: 'OPTIONS_INVALID' });
    await assert.rejects(putItem(client, blob('opt', 10), { ...DOCS, concurrency: 0 }), { code: 'OPTIONS_INVALID' });
    await assert.rejects(putItem(client, blob('opt', 10), { ...DOCS, retry: { maxAttempts: 'many' } }), { code: 'OPTIONS_INVALID' });
    await assert.rejects(gc(client, { ...DOCS, graceMs: -1 }), { code: 'OPTIONS_INVALID' });
  });

  test('a table that does not exist is TABLE_NOT_FOUND; an absent item reads as undefined and deletes as not deleted', async () => {
    await assert.rejects(getItem(client, { pk: { S: 'x' } }, { ...DOCS, table: 'missing' }), { code: 'TABLE_NOT_FOUND' });
    assert.deepStrictEqual((await getItem(client, { pk: { S: 'never' } }, DOCS)).item, undefined);
    assert.equal((await deleteItem(client, { pk: { S: 'never' } }, DOCS)).deleted, false);
  });

  test('an invalid item is refused with the core\'s code before anything is sent', async () => {
    await assert.rejects(putItem(client, { pk: { S: 'bad' }, n: { N: 'NaN' } }, DOCS), { code: 'NUMBER_INVALID' });
    await assert.rejects(putItem(client, { data: { S: 'no key' } }, DOCS), { code: 'KEY_MISSING' });
  });
});
