// Adversarial uploads against `dynaslice serve`, as any holder of the token
// (or a buggy client) could send them: declared chunk counts from 1 to a
// million, lengths that lie, headers at the limit, bodies that stall, and
// 50 uploads at once. Each is refused with its code, in bounded time, and
// the server's peak memory (VmHWM, reset before each attempt) stays a small
// multiple of the body it was sent. The numbers are printed for the notes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { split } from 'dynaslice';
import { listedItems, startServer, TOKEN_HEADER } from './support/server.mjs';
import { itemToWire } from '../../www/js/wire.js';
import { encodeUpload, chunkData, postUpload } from './support/upload.mjs';

const MB = 1 << 20;
const TABLE = 'dynaslice-demo';

/** The server's resident and peak memory, in bytes. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Resets the peak to the current resident size (Linux: clear_refs 5). */
function resetPeak(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/**
 * Posts `parts` (Buffers) as one upload body with a declared length, waiting
 * `pause` ms after each part; resolves to `{ status, code, ms }` (status 0
 * when the connection was cut before an answer).
 */
function send(server, parts, { pause = 0, length, contentType = 'application/octet-stream' } = {}) {
  const started = performance.now();
  const total = length ?? parts.reduce((n, p) => n + p.length, 0);
  return new Promise((resolve) => {
    const req = request({
      host: '127.0.0.1',
      port: server.port,
      // A connection of its own: a refused body closes it.
      agent: false,
      method: 'POST',
      path: `/api/upload?table=${TABLE}`,
      headers: { 'content-type': contentType, 'content-length': total, [TOKEN_HEADER]: server.token },
    });
    let done = false;
    const finish = (answer) => {
      if (done) return;
      done = true;
      resolve({ ...answer, ms: Math.round(performance.now() - started) });
    };
    req.on('response', (response) => {
      const chunks = [];
      response.on('data', (c) => chunks.push(c));
      response.on('end', () => {
        let code;
        try {
          code = JSON.parse(Buffer.concat(chunks).toString()).error?.code;
        } catch {
          code = undefined;
        }
        finish({ status: response.statusCode, code });
        req.destroy();
      });
    });
    req.on('error', (error) => finish({ status: 0, code: error.code }));
    (async () => {
      for (const part of parts) {
        if (done) return;
        req.write(part);
        if (pause) await new Promise((r) => setTimeout(r, pause));
      }
      if (!done && length === undefined) req.end();
    })();
  });
}

/** `DSU1` | header length | header JSON, for a header object as given. */
function head({ parent, chunks }) {
  const json = Buffer.from(JSON.stringify({ parent: itemToWire(parent), chunks }));
  const prefix = Buffer.alloc(8);
  prefix.write('DSU1', 0, 'latin1');
  prefix.writeUInt32LE(json.length, 4);
  return Buffer.concat([prefix, json]);
}

test('adversarial uploads are refused with a code, in bounded memory and time', async () => {
  const server = await startServer(['--body-idle-timeout', '2s', '--max-uploads', '4']);
  const rows = [];
  try {
    // A real split item for the attacks that need a manifest.
    const item = { pk: { S: 'victim' }, body: { B: new Uint8Array(3 * MB).map((_, i) => (i * 7919) % 251) } };
    const good = split(item, { table: TABLE, key: [{ name: 'pk', type: 'S' }], codec: 'none' });
    const data = chunkData(good);
    assert.ok(data.length >= 7, `${data.length} chunks`);
    const lengths = data.map((d) => d.length);

    /** Runs one attack, measuring the server's peak memory above its resident size before. */
    async function attack(name, parts, expected, options) {
      resetPeak(server.pid);
      const before = memory(server.pid).rss;
      const answer = await send(server, parts, options);
      const after = memory(server.pid);
      const body = options?.length ?? parts.reduce((n, p) => n + p.length, 0);
      const row = { attack: name, body, status: answer.status, code: answer.code, ms: answer.ms, peakAboveMB: +((after.peak - before) / MB).toFixed(1) };
      rows.push(row);
      assert.deepEqual([answer.status, answer.code], expected, `${name}: ${JSON.stringify(row)}`);
      return row;
    }

    // Declared chunk counts from 1 to 10^6 for an item that is not split:
    // refused before a byte of chunk data is read.
    for (const count of [1, 1000, 20_000, 1_000_000]) {
      const header = head({ parent: { pk: { S: `plain-${count}` }, x: { S: 'planted' } }, chunks: new Array(count).fill(1) });
      const row = await attack(`${count} one-byte chunks, no manifest`, [header, Buffer.alloc(count)], [400, 'CHUNKS_UNEXPECTED']);
      // A small multiple of the body, whatever it declares.
      assert.ok(row.peakAboveMB * MB <= 12 * row.body + 24 * MB, JSON.stringify(row));
    }
    // A million chunks declared against a manifest of a few: refused on the count.
    const million = head({ parent: good.parent, chunks: new Array(1_000_000).fill(1) });
    await attack('10^6 chunks declared, manifest says 8', [million, Buffer.alloc(1_000_000)], [400, 'CHUNK_COUNT_MISMATCH']);
    // Lengths that lie: one byte short, and a length the manifest never had.
    const short = lengths.map((n, i) => (i === 0 ? n - 1 : n));
    await attack('chunk 0 declared one byte short', [head({ parent: good.parent, chunks: short }), ...data], [400, 'CHUNK_LENGTH_MISMATCH']);
    const huge = lengths.map((n, i) => (i === 1 ? 2 ** 40 : n));
    await attack('chunk 1 declared 1 TiB', [head({ parent: good.parent, chunks: huge }), ...data], [400, 'CHUNK_LENGTH_MISMATCH']);
    // A body shorter than its header declares, sent in full: incomplete.
    await attack('body ends before its chunks', [head({ parent: good.parent, chunks: lengths }), ...data.slice(0, -1)], [400, 'BODY_INCOMPLETE']);
    // Headers at the limit: 2 MiB exactly is read (and the parent, over the
    // item limit, refused as too large: 413), one byte more is refused unread.
    const padding = (n) => head({ parent: { pk: { S: 'pad' }, p: { S: 'x'.repeat(n) } }, chunks: [] });
    const exact = padding(0);
    const atLimit = padding((2 << 20) - (exact.length - 8));
    assert.equal(atLimit.length - 8, 2 << 20);
    await attack('header of exactly 2 MiB', [atLimit], [413, 'ITEM_TOO_LARGE']);
    const over = padding((2 << 20) - (exact.length - 8) + 1);
    await attack('header of 2 MiB + 1', [over], [400, 'UPLOAD_MALFORMED']);
    // A declared length over the body limit: refused before reading.
    await attack('Content-Length over the limit', [Buffer.from('DSU1')], [413, 'BODY_TOO_LARGE'], { length: 1 << 30 });
    // The wrong content type: refused before reading.
    await attack('text/plain body', [encodeUpload(good.parent, data)], [415, 'CONTENT_TYPE_UNSUPPORTED'], { contentType: 'text/plain' });
    // A slow body: the first bytes, then nothing; cut off by the idle timeout (2 s here).
    const slow = await attack('body stalls after 100 bytes', [encodeUpload(good.parent, data).subarray(0, 100)], [408, 'BODY_TIMEOUT'], { length: 4 * MB });
    assert.ok(slow.ms >= 1900 && slow.ms < 10_000, `${slow.ms} ms`);

    // 50 uploads at once, each stalling: 4 are read (and time out), the
    // other 46 are refused at once with 503.
    resetPeak(server.pid);
    const before = memory(server.pid).rss;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => send(server, [Buffer.from('DSU1')], { length: 4 * MB })),
    );
    const peak = memory(server.pid).peak;
    const counts = {};
    for (const a of answers) counts[`${a.status} ${a.code}`] = (counts[`${a.status} ${a.code}`] ?? 0) + 1;
    rows.push({ attack: '50 concurrent stalled uploads', body: 50 * 4, status: JSON.stringify(counts), code: '', ms: Math.round(performance.now() - started), peakAboveMB: +((peak - before) / MB).toFixed(1) });
    assert.deepEqual(counts, { '503 SERVER_BUSY': 46, '408 BODY_TIMEOUT': 4 });

    // Nothing of it was stored, and a good upload still goes through.
    assert.deepEqual(await listedItems(server), []);
    const ok = await postUpload(server, TABLE, encodeUpload(good.parent, data));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual((await listedItems(server)).map((i) => i.key.pk.S), ['victim']);
  } finally {
    console.log('attack | body bytes | status | code | ms | peak RSS above resident (MB)');
    for (const r of rows) console.log(`${r.attack} | ${r.body} | ${r.status} | ${r.code} | ${r.ms} | ${r.peakAboveMB}`);
    await server.stop();
  }
});
