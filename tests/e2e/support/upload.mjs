// Upload bodies for `POST /api/upload` built in Node (docs/API.md), from the
// npm package's own split, so tests can tamper with any part of them.
import { request } from 'node:http';
import { itemToWire } from '../../../www/js/wire.js';

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

/** Posts an upload; resolves to `{ status, body }` (body parsed as JSON). */
export async function postUpload(url, table, body) {
  const response = await fetch(`${url}/api/upload?table=${encodeURIComponent(table)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body,
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { raw: text };
  }
  return { status: response.status, body: json };
}

/** The chunks' `_d` bytes of a split result, in order. */
export function chunkData(result) {
  return result.chunks.map((c) => c._d.B);
}

/**
 * Posts `body` over raw HTTP with chunked transfer encoding (no declared
 * length), 1 MB at a time. Resolves to the answer `{ status, body }`, or
 * `{ status: 0, error }` when the connection was cut before one came.
 */
export function rawUpload(url, table, body) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const req = request({ host: hostname, port, method: 'POST', path: `/api/upload?table=${encodeURIComponent(table)}`, headers: { 'content-type': 'application/octet-stream' } });
    req.on('response', (response) => {
      const parts = [];
      response.on('data', (part) => parts.push(part));
      response.on('end', () => {
        const text = Buffer.concat(parts).toString();
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = { raw: text };
        }
        resolve({ status: response.statusCode, body: json });
      });
    });
    req.on('error', (error) => setTimeout(() => resolve({ status: 0, error: error.code ?? error.message }), 1000));
    let offset = 0;
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
    next();
  });
}
