// The upload verification mounted by a backend of its own
// (host/examples/mounted_upload.rs): bearer tokens map to users, each user
// may write and read only keys under `<user>/`. Without a token 401,
// another user's key 403, with the token an item split by the npm package
// commits and reads back exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { split } from 'dynaslice';
import { orderHistory } from '../../www/js/sample.js';
import { buildHost, root } from './support/server.mjs';
import { chunkData, encodeUpload } from './support/upload.mjs';

const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(root, 'target');
const USERS = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' };

/** Builds and starts the example; resolves to its base URL and a stop function. */
async function startExample() {
  buildHost(); // the examples too
  const users = Object.entries(USERS).map(([user, token]) => `${user}:${token}`).join(',');
  const { DYNASLICE_ENDPOINT: _, ...env } = process.env; // the embedded store
  const child = spawn(join(targetDir, 'debug', 'examples', 'mounted_upload'), [], {
    env: { ...env, DYNASLICE_USERS: users },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('the example printed no URL in 60 s')), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const found = /listening on (http:\/\/\S+)/.exec(line);
      if (found) {
        clearTimeout(timer);
        resolveUrl(found[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`the example exited (${code})`)));
  });
  return { url, stop: () => child.kill('SIGKILL') };
}

test('a backend mounts the upload router behind its own bearer tokens and key scope', async () => {
  const example = await startExample();
  try {
    const item = { pk: { S: 'alice/report' }, body: { S: orderHistory(1 << 20) } };
    const result = split(item, { table: 'docs', key: [{ name: 'pk', type: 'S' }], codec: 'none' });
    assert.ok(result.chunks.length >= 3, 'the item is split');
    const body = encodeUpload(result.parent, chunkData(result));
    const post = (token, payload = body) =>
      fetch(`${example.url}/upload?table=docs`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: payload,
      });
    const read = (token, pk) =>
      fetch(`${example.url}/items/${encodeURIComponent(pk)}`, { headers: { authorization: `Bearer ${token}` } });

    // Refused on the header alone: a short body, since the server answers
    // without reading one (a long one may meet a closed connection).
    assert.equal((await post(undefined, 'x')).status, 401);
    assert.equal((await post('not-a-token-at-all', 'x')).status, 401);
    const bob = await post(USERS.bob);
    assert.equal(bob.status, 403);
    assert.equal((await bob.json()).error.code, 'KEY_OUT_OF_SCOPE');
    assert.equal((await read(USERS.alice, 'alice/report')).status, 404, 'nothing was stored by the refusals');

    const alice = await post(USERS.alice);
    const answer = await alice.json();
    assert.equal(alice.status, 200, JSON.stringify(answer));
    assert.equal(answer.manifest.chunks, result.chunks.length);
    const back = await read(USERS.alice, 'alice/report');
    assert.equal(back.status, 200);
    assert.deepEqual(await back.json(), item);
    assert.equal((await read(USERS.bob, 'alice/report')).status, 403);
  } finally {
    example.stop();
  }
});
