// Splitter and splitStream, beyond stream.test.mjs: piece sizes, the
// finish() requests, expectations, options, back-pressure and bad sources.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemSize, reassemble, split, Splitter, splitStream } from 'dynaslice';
import { batchEntries, randomBytes, shuffled, throwsDynaslice, writeUnitsOf } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const VERSION = '01HF7YAT00000000000000001A';
const head = { pk: { S: 'doc' }, title: { S: 'report' } };
const data = randomBytes(1_000_000);
const stream = { ...table, attribute: 'data', size: data.length, version: VERSION };

/** Pushes `bytes` in pieces of `piece` bytes; returns every chunk and the finish() result. */
function pushAll(splitter, bytes, piece) {
  const chunks = [];
  for (let at = 0; at < bytes.length; at += piece) chunks.push(...splitter.push(bytes.subarray(at, at + piece)));
  const result = splitter.finish();
  return { early: chunks, result, chunks: [...chunks, ...result.chunks] };
}

test('Splitter stores exactly what split stores with codec none, whatever the piece size', () => {
  const reference = split({ ...head, data: { B: data } }, { ...table, codec: 'none', version: VERSION });
  for (const piece of [1_000_000, 65_536, 4099]) {
    const splitter = new Splitter(head, stream);
    const { early, result, chunks } = pushAll(splitter, data, piece);
    splitter.free();
    assert.equal(early.length, 2, 'full chunks come out of push() as soon as they are complete');
    assert.deepEqual(chunks, reference.chunks, `pieces of ${piece}`);
    assert.deepEqual(result.parent, reference.parent);
    assert.deepEqual(result.manifest, reference.manifest);
    assert.deepEqual(reassemble(result.parent, shuffled(chunks), table), { ...head, data: { B: data } });
  }
});

test('Splitter.finish: the commit, the abort of every chunk, and the write units of all of them', () => {
  const splitter = new Splitter(head, stream);
  assert.equal(splitter.received, 0);
  const { result, chunks } = pushAll(splitter, data, 300_000);
  const { requests } = result;
  assert.equal(requests.mode, 'batch');
  assert.deepEqual(requests.batchWriteItems ?? [], [], 'the chunks were handed out as they came');
  assert.deepEqual(requests.commit, {
    TableName: 'docs',
    Item: result.parent,
    ConditionExpression: 'attribute_not_exists(#k)',
    ExpressionAttributeNames: { '#k': 'pk' },
  });
  assert.deepEqual(batchEntries(requests.abort, 'docs_chunks'), chunks.map((c) => ({ DeleteRequest: { Key: { pk: c.pk } } })));
  assert.deepEqual(requests.cleanup, []);
  assert.equal(result.writeUnits, [...chunks, result.parent].reduce((total, item) => total + writeUnitsOf(item), 0));
  chunks.slice(0, -1).forEach((c, seq) => assert.equal(itemSize(c), seq % 64 === 0 ? 409_600 : 409_589));
  splitter.free();
});

test('Splitter: received counts bytes; finishing twice or pushing after is SPLITTER_FINISHED', () => {
  const splitter = new Splitter(head, { ...stream, size: 10 });
  splitter.push(new Uint8Array(4));
  assert.equal(splitter.received, 4);
  splitter.push(new Uint8Array(6));
  assert.equal(splitter.received, 10);
  const result = splitter.finish();
  assert.equal(result.manifest.rawBytes > 10, true);
  assert.deepEqual(reassemble(result.parent, result.chunks, table).data.B, new Uint8Array(10));
  throwsDynaslice(() => splitter.finish(), 'SPLITTER_FINISHED');
  throwsDynaslice(() => splitter.push(new Uint8Array(1)), 'SPLITTER_FINISHED');
  splitter.free();
});

test('Splitter: fewer or more bytes than size is STREAM_LENGTH_MISMATCH', () => {
  const short = new Splitter(head, { ...stream, size: 10 });
  short.push(new Uint8Array(9));
  throwsDynaslice(() => short.finish(), 'STREAM_LENGTH_MISMATCH', /10/);
  short.free();
  const long = new Splitter(head, { ...stream, size: 10 });
  throwsDynaslice(() => long.push(new Uint8Array(11)), 'STREAM_LENGTH_MISMATCH', /11/);
  long.free();
});

test('Splitter: expect a stored parent makes the commit conditional and cleans its chunks', () => {
  const old = split({ ...head, data: { B: randomBytes(900_000) } }, table);
  const splitter = new Splitter(head, { ...stream, expect: old.parent });
  const { result } = pushAll(splitter, data, 500_000);
  splitter.free();
  assert.equal(result.requests.commit.ConditionExpression, '#m.#v = :v AND attribute_not_exists(#m.#u)');
  assert.deepEqual(result.requests.commit.ExpressionAttributeValues, { ':v': { S: old.manifest.version } });
  assert.deepEqual(batchEntries(result.requests.cleanup, 'docs_chunks'), old.chunks.map((c) => ({ DeleteRequest: { Key: { pk: c.pk } } })));
});

test('Splitter refuses bad options and items', () => {
  const cases = [
    [{ ...stream, attribute: undefined }, 'OPTIONS_INVALID', /attribute/],
    [{ ...stream, size: -1 }, 'OPTIONS_INVALID', /size must be the payload's exact length in bytes .* or left out/],
    [{ ...stream, size: 1.5 }, 'OPTIONS_INVALID', /size/],
    [{ ...stream, codec: 'zstd' }, 'OPTIONS_INVALID', /codec/],
    [{ ...stream, codec: 'snappy' }, 'OPTIONS_INVALID', /codec/],
    [{ ...stream, codec: 'zlib', level: 11 }, 'CODEC_LEVEL_UNSUPPORTED', /11/],
    [{ ...stream, maxRawBytes: 1000 }, 'VIRTUAL_ITEM_TOO_LARGE', /the option maxRawBytes raises it/],
    [{ ...stream, version: 'x' }, 'OPTIONS_INVALID', /version/],
    [{ ...stream, table: undefined }, 'OPTIONS_INVALID', /table/],
  ];
  for (const [options, code, message] of cases) throwsDynaslice(() => new Splitter(head, options), code, message);
  throwsDynaslice(() => new Splitter({ ...head, data: { S: 'here' } }, stream), 'OPTIONS_INVALID', /streamed attribute/);
  throwsDynaslice(() => new Splitter({ title: { S: 'no key' } }, stream), 'KEY_MISSING');
  throwsDynaslice(() => new Splitter({ pk: 'plain' }, stream), 'INPUT_INVALID');
  const plain = new Splitter({ pk: 'doc', title: 'report' }, { ...stream, format: 'plain', size: 3 });
  plain.push(Uint8Array.of(1, 2, 3));
  const result = plain.finish();
  plain.free();
  assert.deepEqual(result.parent.title, { S: 'report' });
});

test('splitStream reads a ReadableStream (size given) and awaits onChunk before reading on', async () => {
  let pulled = 0;
  let busy = false;
  const source = new ReadableStream({
    pull(controller) {
      assert.equal(busy, false, 'no read while onChunk is pending');
      if (pulled >= data.length) return controller.close();
      controller.enqueue(data.slice(pulled, pulled + 100_000));
      pulled += 100_000;
    },
  }, { highWaterMark: 0 });
  const seen = [];
  const result = await splitStream(source, head, {
    ...stream,
    onChunk: async (chunk) => {
      busy = true;
      await new Promise((resolve) => setTimeout(resolve, 0));
      seen.push(chunk);
      busy = false;
    },
  });
  assert.equal(seen.length, 3);
  assert.deepEqual(reassemble(result.parent, seen, table), { ...head, data: { B: data } });
});

test('splitStream reads an async iterable of Uint8Array', async () => {
  async function* pieces() {
    for (let at = 0; at < data.length; at += 250_000) yield data.subarray(at, at + 250_000);
  }
  const seen = [];
  const result = await splitStream(pieces(), head, { ...stream, codec: 'gzip', onChunk: (c) => seen.push(c) });
  assert.equal(result.manifest.codec, 'gzip');
  assert.deepEqual(reassemble(result.parent, seen, table).data.B, data);
});

test('splitStream of a stream without a size: the length is learned at the end', async () => {
  for (const length of [0, 1000, data.length]) {
    const bytes = data.subarray(0, length);
    const unsized = new ReadableStream({
      start(c) {
        for (let at = 0; at < bytes.length; at += 300_000) c.enqueue(bytes.slice(at, at + 300_000));
        c.close();
      },
    });
    const seen = [];
    const progress = [];
    const result = await splitStream(unsized, head, { ...table, attribute: 'data', version: VERSION, onChunk: (c) => seen.push(c), onProgress: (p) => progress.push(p) });
    assert.deepEqual(reassemble(result.parent, shuffled(seen), table).data.B, bytes, `${length} bytes`);
    // docs/FORMAT.md: a version 2 value stream, 11 bytes before the payload.
    assert.equal(result.manifest.rawBytes, length + 11);
    assert.deepEqual(progress.at(-1), { bytesRead: length, totalBytes: length, chunks: seen.length });
  }
  // With a limit, a stream that passes it is refused as it does.
  const endless = new ReadableStream({ pull(c) { c.enqueue(new Uint8Array(65_536)); } });
  await assert.rejects(splitStream(endless, head, { ...table, attribute: 'data', maxRawBytes: 1_000_000 }), { name: 'DynasliceError', code: 'VIRTUAL_ITEM_TOO_LARGE' });
});

test('splitStream rejects pieces that are not bytes, a lying size, and what onChunk throws', async () => {
  const strings = new ReadableStream({ start(c) { c.enqueue('abc'); c.close(); } });
  await assert.rejects(splitStream(strings, head, { ...stream, size: 3 }), { name: 'TypeError' });
  async function* words() { yield 'abc'; }
  await assert.rejects(splitStream(words(), head, { ...stream, size: 3 }), { name: 'TypeError' });
  await assert.rejects(splitStream(42, head, { ...stream, size: 3 }), { name: 'TypeError' });
  await assert.rejects(splitStream(new Blob([Uint8Array.of(1, 2)]), head, { ...stream, size: 3 }), { name: 'DynasliceError', code: 'STREAM_LENGTH_MISMATCH' });
  const failure = new Error('upload failed');
  await assert.rejects(splitStream(new Blob([data]), head, { ...table, attribute: 'data', onChunk: () => { throw failure; } }), (error) => error === failure);
  assert.equal(itemSize(head), 2 + 3 + 5 + 6);
});
