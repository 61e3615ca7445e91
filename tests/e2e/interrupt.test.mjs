// Interrupting an upload leaves no visible partial item: the page closed
// part-way through a 20 MB upload, and a raw upload from Node cut off
// half-way through its body. Afterwards the item is not listed, GET gives
// 404, and the same key then uploads normally.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { split } from 'dynaslice';
import { orderHistory } from '../../www/js/sample.js';
import { launch, loadSample, openPage } from './support/browser.mjs';
import { slowProxy } from './support/proxy.mjs';
import { apiFetch, getConfig, keyParam, listedKeys, startServer, TOKEN_HEADER } from './support/server.mjs';
import { encodeUpload, postUpload } from './support/upload.mjs';

const MB = 1 << 20;
const TABLE = 'dynaslice-demo';

async function assertAbsent(server, key) {
  // Give the server time to finish whatever it does with the cut request.
  await sleep(500);
  assert.deepEqual(await listedKeys(server), [], 'no item is listed');
  const response = await apiFetch(server, `/api/item?table=${TABLE}&key=${keyParam(key)}`);
  assert.equal(response.status, 404, await response.clone().text());
  assert.equal((await response.json()).error.code, 'NOT_FOUND');
  const inspect = await apiFetch(server, `/api/inspect?table=${TABLE}&key=${keyParam(key)}`);
  assert.equal(inspect.status, 404);
}

test('closing the page part-way through a 20 MB upload leaves no item', async (t) => {
  // 8 MB/s from the browser: the 20 MB body (codec none, so kernel socket
  // buffers cannot hold all of it) takes ~2.5 s instead of ~50 ms. The page
  // is opened at the proxy's address, which the server must allow.
  const proxy = await slowProxy(8 * MB);
  const server = await startServer(['--allow-host', proxy.host]).catch(async (error) => {
    await proxy.close();
    throw error;
  });
  proxy.forwardTo(server.url);
  const browser = await launch();
  const key = 'orders-interrupted';
  try {
    const page = await openPage(browser, { url: proxy.url, token: server.token });
    await page.selectOption('#codec', 'none');
    await loadSample(page, 20 * MB, key);
    assert.equal(await page.getAttribute('#plan', 'data-codec'), 'none');
    await page.click('#upload');
    await page.waitForFunction(() => document.querySelector('#progress').value >= 0.3, null, { timeout: 60_000, polling: 20 });
    const progress = await page.$eval('#progress', (p) => p.value);
    const forwarded = proxy.forwarded();
    await page.close();
    t.diagnostic(`closed the page at ${(progress * 100).toFixed(0)} % (the server had received ${(forwarded / MB).toFixed(1)} MB)`);
    assert.ok(progress < 1, 'closed before the upload completed');
    await assertAbsent(server, key);

    // The server is not left in a bad state: the same upload now succeeds.
    const again = await openPage(browser, server);
    await again.selectOption('#codec', 'none');
    await loadSample(again, 20 * MB, key);
    await again.click('#upload');
    await again.waitForSelector('#verify[data-state="verified"]', { timeout: 300_000 });
    assert.deepEqual(await listedKeys(server), [JSON.stringify({ pk: { S: key } })]);
  } finally {
    await browser.close();
    await proxy.close();
    await server.stop();
  }
});

test('a raw upload cut off half-way through its body leaves no item', async () => {
  const server = await startServer();
  const key = 'orders-cut';
  try {
    const config = await getConfig(server);
    const table = config.tables.find((x) => x.name === TABLE);
    const item = { pk: { S: key }, body: { S: orderHistory(5 * MB) } };
    const r = split(item, { table: TABLE, key: table.key, layout: table.layout, chunkTable: table.chunkTable, codec: 'none' });
    const body = encodeUpload(r.parent, r.chunks.map((c) => c._d.B));
    const { hostname, port } = new URL(server.url);

    // Declare the whole length, send half, wait, then drop the connection.
    const answered = await new Promise((resolve, reject) => {
      const req = request({ host: hostname, port, method: 'POST', path: `/api/upload?table=${TABLE}`, headers: { 'content-type': 'application/octet-stream', 'content-length': body.length, [TOKEN_HEADER]: server.token } });
      req.on('response', (response) => resolve(`answered ${response.statusCode} before the body was complete`));
      req.on('error', () => resolve(null));
      req.write(body.subarray(0, Math.floor(body.length / 2)), async () => {
        await sleep(500);
        req.destroy();
        resolve(null);
      });
      req.on('timeout', () => reject(new Error('timeout')));
    });
    assert.equal(answered, null);
    await assertAbsent(server, key);

    // The complete body afterwards is stored.
    const whole = await postUpload(server, TABLE, encodeUpload(r.parent, r.chunks.map((c) => c._d.B)));
    // The cut request never reached the commit, so its version id is unused.
    assert.equal(whole.status, 200, JSON.stringify(whole.body));
    assert.deepEqual(await listedKeys(server), [JSON.stringify({ pk: { S: key } })]);
  } finally {
    await server.stop();
  }
});
