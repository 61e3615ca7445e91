// Upload bodies for `POST /api/upload` built in Node (docs/API.md), from the
// npm package's own split, so tests can tamper with any part of them.
import { request } from 'node:http';
import { itemToWire } from '../../../www/js/wire.js';
import { TOKEN_HEADER } from './server.mjs';

/**
 * `DSU1` | header length (u32 LE) | header JSON | chunk data...
 * @param {object} parent the parent as `split` returned it (or tampered)
 * @param {Uint8Array[]} data each chunk's `_d` bytes, in sequence order
 * @param {{ lengths?: number[] }} [lie] header chunk lengths other than the data's
 */
export function encodeUpload(parent, data, lie = {}) {
  const header = Buffer.from(JSON.stringify({ parent: itemToWire(parent), chunks: lie.lengths ?? data.map((d) => d.length) }));
  const head = Buffer.alloc(8);
  head.write('DSU1', 0, 'latin1');
  head.writeUInt32LE(header.length, 4);
  return Buffer.concat([head, header, ...data.map((d) => Buffer.from(d.buffer, d.byteOffset, d.length))]);
}

/**
 * Posts an upload with the server's token, as the page does; resolves to
 * `{ status, body }` (body parsed as JSON).
 * @param {{ url: string, token: string }} server
 * @param {string} table
 * @param {Blob | Uint8Array} body
 */
export async function postUpload(server, table, body) {
  const response = await fetch(`${server.url}/api/upload?table=${encodeURIComponent(table)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', [TOKEN_HEADER]: server.token },
    body,
  });
  return { status: response.status, body: parseAnswer(await response.text()) };
}

/** An answer's JSON, or `{ raw }` when it is not JSON. */
function parseAnswer(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { raw: text };
  }
}

/** The chunks' `_d` bytes of a split result, in order. */
export function chunkData(result) {
  return result.chunks.map((c) => c._d.B);
}

/**
 * Posts `body` over raw HTTP, 1 MB at a time: with chunked transfer
 * encoding (no declared length), or with `declareLength` its
 * Content-Length and `Expect: 100-continue`, sending the body only once the
 * server asks for it (a server that refuses from the headers answers
 * without reading a byte). Resolves to the answer `{ status, body, bodySent }`,
 * or `{ status: 0, error }` when the connection was cut before one came.
 * @param {{ url: string, token: string }} server
 * @param {string} table
 * @param {Buffer} body
 * @param {{ declareLength?: boolean }} [options]
 */
export function rawUpload(server, table, body, { declareLength = false } = {}) {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve) => {
    const req = request({ host: hostname, port, method: 'POST', path: `/api/upload?table=${encodeURIComponent(table)}`, headers: { 'content-type': 'application/octet-stream', [TOKEN_HEADER]: server.token, ...(declareLength ? { 'content-length': body.length, expect: '100-continue' } : {}) } });
    req.on('response', (response) => {
      const parts = [];
      response.on('data', (part) => parts.push(part));
      // A server that refuses early closes the connection after its answer:
      // the answer is complete even if 'end' never comes.
      const done = () => resolve({ status: response.statusCode, body: parseAnswer(Buffer.concat(parts).toString()), bodySent: offset });
      response.on('end', done);
      response.on('close', done);
    });
    let offset = 0;
    req.on('error', (error) => setTimeout(() => resolve({ status: 0, error: error.code ?? error.message }), 1000));
    const next = () => {
      while (offset < body.length) {
        const part = body.subarray(offset, offset + (1 << 20));
        offset += part.length;
        if (!req.write(part)) {
          req.once('drain', next);
          return;
        }
      }
      req.end();
    };
    if (declareLength) req.on('continue', next);
    else next();
  });
}

/**
 * Stores one small item (not split: its parent alone, `"chunks": []`) per
 * partition key in `keys`, with the token; fails on any refusal.
 * @param {{ url: string, token: string }} server
 * @param {string[]} keys
 * @param {string} [table]
 */
export async function storeSmallItems(server, keys, table = 'dynaslice-demo') {
  for (const pk of keys) {
    const answer = await postUpload(server, table, encodeUpload({ pk: { S: pk }, note: { S: `small item ${pk}` } }, []));
    if (answer.status !== 200) throw new Error(`storing ${pk}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}
