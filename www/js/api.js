// The calls of `dynaslice serve`'s HTTP API (docs/API.md), each failing with
// a ServerError (the server's code) or a NetworkError, never a raw response.
// Every call carries this launch's token (token.js) in `X-Dynaslice-Token`;
// without one, nothing is sent.

import { NetworkError, ServerError, tokenNeeded } from './errors.js';
import { token } from './token.js';

const TOKEN_HEADER = 'x-dynaslice-token';

/** The token to send, or the error that says how to get one. */
function requireToken() {
  const key = token();
  if (!key) throw tokenNeeded();
  return key;
}

/** The `key` query parameter: the key attributes in DynamoDB JSON. */
function query(table, key, extra = {}) {
  const params = new URLSearchParams({ table, key: JSON.stringify(key), ...extra });
  return params.toString();
}

/** The error a failed response carries (JSON `{ error: { code, message } }` or not). */
async function failure(response) {
  let code = `HTTP_${response.status}`;
  let message = response.statusText;
  try {
    const body = await response.json();
    if (body?.error?.code) ({ code, message } = body.error);
  } catch {
    // Not JSON (a proxy's page, an empty body): the status says enough.
  }
  return new ServerError(response.status, code, message);
}

async function call(path, init = {}) {
  const headers = { ...init.headers, [TOKEN_HEADER]: requireToken() };
  let response;
  try {
    response = await fetch(path, { cache: 'no-store', ...init, headers });
  } catch (error) {
    throw new NetworkError(error?.message);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

/** `GET /api/config`: allowed tables, key prefix, size limits. */
export async function getConfig() {
  return (await call('/api/config')).json();
}

/**
 * `GET /api/items`: the stored items of `table` (chunks not listed), every
 * page of them: each answer's `cursor` is passed back until it is null.
 */
export async function listItems(table) {
  const items = [];
  let cursor = null;
  do {
    const params = new URLSearchParams({ table });
    if (cursor !== null) params.set('cursor', cursor);
    const page = await (await call(`/api/items?${params}`)).json();
    items.push(...page.items);
    cursor = page.cursor ?? null;
  } while (cursor !== null);
  return items;
}

/** `GET /api/item` with `attribute`: the raw bytes of one string or binary attribute. */
export async function getAttributeBytes(table, key, attribute) {
  const response = await call(`/api/item?${query(table, key, { attribute })}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** `GET /api/item`: the whole item, reassembled by the server (DynamoDB JSON, binaries in base64). */
export async function getItem(table, key) {
  return (await call(`/api/item?${query(table, key)}`)).json();
}

/** `GET /api/preview`: bytes `start..end` of the item's content, and what the headers say. */
export async function preview(table, key, start, end) {
  const response = await call(`/api/preview?${query(table, key, { start: String(start), end: String(end) })}`);
  return {
    bytes: new Uint8Array(await response.arrayBuffer()),
    total: Number(response.headers.get('x-dynaslice-total')),
    attribute: response.headers.get('x-dynaslice-attribute'),
    chunksRead: Number(response.headers.get('x-dynaslice-chunks-read')),
  };
}

/** `GET /api/inspect`: parent, manifest, chunk keys and sizes, RCU and WCU. */
export async function inspect(table, key) {
  return (await call(`/api/inspect?${query(table, key)}`)).json();
}

/** `DELETE /api/item`: the parent, then its chunks. */
export async function deleteItem(table, key) {
  return (await call(`/api/item?${query(table, key)}`, { method: 'DELETE' })).json();
}

/**
 * `POST /api/upload` with XMLHttpRequest, whose `upload.onprogress` reports
 * the bytes sent (fetch cannot). Returns `{ done, abort }`: `done` resolves
 * to the server's answer.
 * @param {string} table
 * @param {Blob} body
 * @param {(sent: number, total: number) => void} onProgress
 */
export function upload(table, body, onProgress) {
  const key = requireToken();
  const xhr = new XMLHttpRequest();
  const done = new Promise((resolve, reject) => {
    xhr.open('POST', `/api/upload?${new URLSearchParams({ table })}`);
    // The server refuses any other type (no form or simple request can send it).
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    xhr.setRequestHeader(TOKEN_HEADER, key);
    xhr.responseType = 'json';
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : body.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(xhr.response);
        return;
      }
      const error = xhr.response?.error;
      reject(new ServerError(xhr.status, error?.code ?? `HTTP_${xhr.status}`, error?.message ?? xhr.statusText));
    };
    xhr.onerror = () => reject(new NetworkError('upload failed'));
    xhr.onabort = () => reject(Object.assign(new Error('upload cancelled'), { code: 'UPLOAD_CANCELLED' }));
    xhr.send(body);
  });
  return { done, abort: () => xhr.abort() };
}

/** A JSON `POST` of `body` to the upload router's `path`. */
async function postJson(path, table, body) {
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  return (await call(`/api/upload/${path}?${new URLSearchParams({ table })}`, init)).json();
}

/**
 * `POST /api/upload/object`: a presigned PUT for a frame of `size` bytes
 * with CRC-32 `crc32` (base64), holding the binary `attribute` of the item
 * `parent` (its key and small attributes, binaries in base64):
 * `{ url, method, headers, version, key, expiresInSeconds }`.
 */
export function grantObject(table, grant) {
  return postJson('object', table, grant);
}

/** `POST /api/upload/object/commit`: the server checks the object stored for `version`, then commits it. */
export function commitObject(table, version) {
  return postJson('object/commit', table, { version });
}

/**
 * The granted PUT, straight to S3 (no token: it is not the API's), with
 * XMLHttpRequest for its progress and the signed headers the browser may
 * set (it sets Content-Length and Host itself, from the body and the URL).
 * Returns `{ done, abort }`.
 */
export function putObject(granted, body, onProgress) {
  const xhr = new XMLHttpRequest();
  const done = new Promise((resolve, reject) => {
    xhr.open(granted.method, granted.url);
    for (const [name, value] of Object.entries(granted.headers)) {
      if (!['content-length', 'host'].includes(name.toLowerCase())) xhr.setRequestHeader(name, value);
    }
    xhr.upload.onprogress = (event) => onProgress(event.loaded, body.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve();
      else {
        const code = /<Code>([^<]+)<\/Code>/.exec(xhr.responseText ?? '')?.[1] ?? `HTTP_${xhr.status}`;
        reject(new ServerError(xhr.status, 'S3_ERROR', `S3 refused the upload: ${code}`));
      }
    };
    xhr.onerror = () => reject(new NetworkError('the upload to S3 failed (is the bucket’s CORS set for this page?)'));
    xhr.onabort = () => reject(Object.assign(new Error('upload cancelled'), { code: 'UPLOAD_CANCELLED' }));
    xhr.send(body);
  });
  return { done, abort: () => xhr.abort() };
}
