// The streaming splitter: Splitter and splitStream over Blobs, ReadableStreams
// and async iterables; bounded output; the same result as reading it whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Splitter, itemSize, reassemble, split, splitStream } from 'dynaslice';
import { randomBytes, throwsDynaslice } from '../support/check.mjs';

const table = { table: 'files', key: [{ name: 'pk', type: 'S' }] };
const item = { pk: { S: 'upload#1' }, name: { S: 'scan.pdf' } };

/** An async iterable yielding `bytes` in pieces of `size`. */
async function* pieces(bytes, size) {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

test('a Blob streams into chunks that reassemble to the item, with progress', async () => {
  const payload = randomBytes(1_500_000);
  const chunks = [];
  const progress = [];
  const result = await splitStream(new Blob([payload]), item, {
    ...table,
    attribute: 'data',
    onChunk: (chunk) => chunks.push(chunk),
    onProgress: (p) => progress.push(p),
  });
  assert.equal(result.requests.mode, 'batch');
  assert.equal(result.manifest.chunkCount, chunks.length);
  assert.equal(chunks.length, 4, '1.5 MB of random bytes fill four 400 KB chunks');
  for (const chunk of chunks) assert.ok(itemSize(chunk) <= 409_600);
  const last = progress.at(-1);
  assert.deepEqual(last, { bytesRead: payload.length, totalBytes: payload.length, chunks: 4 });
  assert.ok(progress.every((p, i) => i === 0 || p.bytesRead >= progress[i - 1].bytesRead), 'progress only grows');
  const back = reassemble(result.parent, chunks.reverse(), table);
  assert.deepEqual(back.name, item.name);
  assert.deepEqual(back.data.B, payload);
});

test('uncompressed streaming stores exactly what split stores for the same item', async () => {
  const payload = randomBytes(900_000);
  const version = '01KAHVBV000000000000000007';
  const chunks = [];
  const streamed = await splitStream(pieces(payload, 100_000), item, {
    ...table,
    attribute: 'data',
    size: payload.length,
    version,
    onChunk: (chunk) => chunks.push(chunk),
  });
  const whole = split({ ...item, data: { B: payload } }, { ...table, codec: 'none', version, mode: 'batch' });
  assert.deepEqual(streamed.parent, whole.parent);
  assert.deepEqual(chunks, whole.chunks);
  assert.deepEqual(streamed.requests.commit, whole.requests.commit);
  assert.deepEqual(streamed.requests.abort, whole.requests.abort);
});

test('compressed streams from a ReadableStream reassemble, and compress', async () => {
  const text = new TextEncoder().encode('{"sku":"café-42","qty":3,"note":"fragile"}\n'.repeat(40_000));
  for (const codec of ['deflate', 'zlib', 'gzip']) {
    const chunks = [];
    const source = new Blob([text]).stream();
    const result = await splitStream(source, item, {
      ...table,
      attribute: 'data',
      size: text.length,
      codec,
      onChunk: (chunk) => chunks.push(chunk),
    });
    assert.equal(result.manifest.codec, codec);
    assert.ok(result.manifest.storedBytes < text.length / 10, `${codec} compresses repetitive text`);
    assert.deepEqual(reassemble(result.parent, chunks, table).data.B, text, codec);
  }
});

test('each chunk is handed out as soon as it is full, not at the end', () => {
  const splitter = new Splitter(item, { ...table, attribute: 'data', size: 2_000_000 });
  try {
    let handedOut = 0;
    const piece = randomBytes(65_536);
    for (let sent = 0; sent + piece.length <= 1_900_000; sent += piece.length) {
      const ready = splitter.push(piece);
      assert.ok(ready.length <= 1, 'a 64 KiB piece completes at most one chunk');
      handedOut += ready.length;
      // Everything received but the chunk being filled has been handed out.
      assert.ok(splitter.received - handedOut * 409_500 < 409_600);
    }
    assert.equal(handedOut, 4);
  } finally {
    splitter.free();
  }
});

test('lengths that lie, unstreamable codecs and reuse are typed errors', () => {
  const splitter = new Splitter(item, { ...table, attribute: 'data', size: 10 });
  throwsDynaslice(() => splitter.push(new Uint8Array(11)), 'STREAM_LENGTH_MISMATCH');
  splitter.push(new Uint8Array(4));
  throwsDynaslice(() => splitter.finish(), 'STREAM_LENGTH_MISMATCH');
  throwsDynaslice(() => splitter.finish(), 'SPLITTER_FINISHED');
  splitter.free();
  throwsDynaslice(() => new Splitter(item, { ...table, attribute: 'data', size: 10, codec: 'zstd' }), 'OPTIONS_INVALID');
  throwsDynaslice(() => new Splitter(item, { ...table, attribute: 'data', size: '10' }), 'OPTIONS_INVALID', /option size must be the payload's exact length/);
  throwsDynaslice(() => new Splitter(item, { ...table, attribute: 'name', size: 10 }), 'OPTIONS_INVALID');
});
