// The web page in headless Chromium against a real `dynaslice serve`: a
// 5 MB sample through its whole life (size and plan checked against the npm
// package in Node, upload, read back, "verified", preview, inspect, delete),
// a screenshot of the plan view, and the timings the README reports. The
// stored items' list follows the API's pages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { itemSize, readRequests, split } from 'dynaslice';
import { orderHistory } from '../../www/js/sample.js';
import { artifacts, errorShown, launch, loadSample, openPage } from './support/browser.mjs';
import { apiFetch, getConfig, keyParam, listedKeys, startServer } from './support/server.mjs';
import { storeSmallItems } from './support/upload.mjs';

const MB = 1 << 20;
const LIMIT = 409_600;
const fmt = (n) => new Intl.NumberFormat('en-US').format(n);

test('a 5 MB sample: size, plan, upload, verified, preview, inspect, delete', async (t) => {
  const browser = await launch();
  // The browser is up before the server starts: the time measured is the
  // server's start plus the page's own loading, not Chromium's launch.
  const warm = await browser.newPage();
  await warm.goto('about:blank');
  const server = await startServer();
  try {
    const page = await openPage(browser, server);
    const readyMs = performance.now() - server.startedAt;
    const urlMs = server.urlAt - server.startedAt;
    t.diagnostic(`timing: dynaslice serve start → URL printed ${urlMs.toFixed(0)} ms, → page ready ${readyMs.toFixed(0)} ms`);
    console.error(`TIMING serve-start-to-page-ready-ms ${readyMs.toFixed(0)} (URL printed after ${urlMs.toFixed(0)} ms)`);
    await warm.close();

    // The launch's key left the address bar for this tab's sessionStorage.
    assert.equal(page.url(), `${server.url}/`, 'no #token= left in the address bar');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('dynaslice-token')), server.token);

    const config = await getConfig(server);
    const table = config.tables.find((x) => x.name === 'dynaslice-demo');
    assert.ok(table, 'the default table is served');
    const options = { table: table.name, key: table.key, layout: table.layout, chunkTable: table.chunkTable, anchors: table.anchors };

    const key = await page.inputValue('#key');
    assert.equal(key, 'orders-2026', 'the key field starts with a sensible key');
    await loadSample(page, 5 * MB);
    const item = { pk: { S: key }, body: { S: orderHistory(5 * MB) } };

    // The exact size, the same as the npm package says in Node.
    const size = itemSize(item);
    assert.ok(size > 5 * MB && size < 5 * MB + 5000, `sample size ${size}`);
    assert.equal(Number(await page.getAttribute('#size', 'data-bytes')), size);
    assert.equal((await page.textContent('#size')).trim(), `${fmt(size)} bytes`);
    assert.equal(Number(await page.getAttribute('#over', 'data-over-bytes')), size - LIMIT);
    assert.match(await page.textContent('#over'), new RegExp(`${fmt(size - LIMIT)} bytes over`));
    const problems = await page.$$eval('[data-testid="problem"]', (lis) => lis.map((li) => ({ code: li.dataset.code, path: li.dataset.path })));
    assert.deepEqual(problems, [{ code: 'ITEM_TOO_LARGE', path: '' }]);

    // The plan: the same split in Node, with the codec the page chose.
    const plan = await page.$eval('#plan', (el) => ({ ...el.dataset }));
    const expected = split(item, { ...options, codec: plan.codec });
    const parentBytes = itemSize(expected.parent);
    const readUnits = Math.max(1, Math.ceil(parentBytes / 4096)) + readRequests(expected.parent, options).readUnits;
    assert.equal(plan.mode, expected.requests.mode);
    assert.equal(Number(plan.chunks), expected.chunks.length);
    assert.ok(expected.chunks.length >= 2, `a 5 MB sample takes chunks (${expected.chunks.length})`);
    assert.equal(Number(plan.wcu), expected.writeUnits);
    assert.equal(Number(plan.rcu), readUnits);
    assert.equal(Number(plan.storedBytes), expected.manifest.storedBytes);
    assert.equal(Number(plan.parentBytes), parentBytes);
    assert.equal((await page.textContent('#plan-wcu')).trim(), `${fmt(expected.writeUnits)} WCU`);
    // Both modes' prices: the compressed sample fits one transaction, which
    // bills every write twice.
    assert.equal(Number(plan.wcuBatch), expected.costs.batch);
    assert.equal(Number(plan.wcuAtomic), 2 * expected.costs.batch);
    assert.equal(expected.costs.atomic, 2 * expected.costs.batch);
    assert.equal((await page.textContent('#plan-costs')).trim(), `batch ${fmt(expected.costs.batch)} WCU · atomic ${fmt(2 * expected.costs.batch)} WCU`);
    assert.equal((await page.textContent('#plan-rcu')).trim(), `${fmt(readUnits)} RCU`);
    const blocks = await page.$$eval('#plan [data-testid="chunk"]', (els) => els.map((el) => Number(el.dataset.bytes)));
    assert.deepEqual(blocks, expected.chunks.map((c) => itemSize(c)), 'one block per chunk, sized to its bytes');
    assert.ok(blocks.slice(0, -1).every((b) => b === LIMIT), 'every chunk but the last fills an item exactly');
    const requests = await page.$$eval('#plan [data-testid="request"]', (els) => els.map((el) => ({ kind: el.dataset.kind, items: Number(el.dataset.items), wcu: Number(el.dataset.wcu) })));
    const sendsExpected = { single: ['PutItem'], atomic: ['TransactWriteItems'], batch: [...(expected.requests.batchWriteItems ?? []).map(() => 'BatchWriteItem'), 'PutItem'] }[expected.requests.mode];
    assert.deepEqual(requests.map((r) => r.kind), sendsExpected);
    assert.equal(requests.reduce((sum, r) => sum + r.items, 0), expected.chunks.length + 1);
    assert.equal(requests.reduce((sum, r) => sum + r.wcu, 0), expected.writeUnits, 'the requests add up to the plan\'s WCU');

    // The codec comparison (in the worker): every row as Node computes it;
    // the recommended row is what auto picked for the plan.
    await page.waitForSelector('#codecs[data-state="done"]', { timeout: 120_000 });
    assert.equal(await page.getAttribute('#codecs', 'data-recommended'), plan.codec);
    assert.equal(await page.getAttribute(`#codecs tr[data-codec="${plan.codec}"]`, 'data-recommended'), 'true');
    for (const codec of ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd']) {
      const row = await page.$eval(`#codecs tr[data-codec="${codec}"]`, (tr) => ({ ...tr.dataset }));
      const r = split(item, { ...options, codec });
      assert.equal(Number(row.storedBytes), r.manifest.storedBytes, `${codec} stored bytes`);
      assert.equal(Number(row.chunks), r.chunks.length, `${codec} chunks`);
      assert.equal(Number(row.wcu), r.writeUnits, `${codec} WCU`);
    }

    // Upload, read back, verify.
    await page.click('#upload');
    await page.waitForSelector('#verify[data-state="verified"]', { timeout: 120_000 });
    assert.match(await page.textContent('#verify'), /^verified/);
    assert.ok(await page.getByText('verified', { exact: false }).first().isVisible());
    assert.equal(await errorShown(page), null);
    const stored = Buffer.from(await (await apiFetch(server, `/api/item?table=dynaslice-demo&key=${keyParam(key)}&attribute=body`)).arrayBuffer());
    assert.ok(stored.equals(Buffer.from(item.body.S)), 'the server holds the sample exactly');

    // The preview: the first 2 KB of the document, as text.
    await page.waitForSelector('#preview-box:not([hidden])');
    const preview = await page.textContent('#preview');
    assert.equal(preview, item.body.S.slice(0, preview.length));
    assert.ok(preview.startsWith('{"customer":') && preview.length >= 2000, `preview of ${preview.length} characters`);
    assert.match(await page.textContent('#preview-meta'), /; 1 chunk read\.$/, 'the first 2 KB come from the first chunk alone');

    // Listed, and inspect shows the manifest.
    const row = page.locator(`[data-testid="item-row"][data-key="${key}"]`);
    await row.waitFor();
    await row.getByRole('button', { name: `Inspect ${key}` }).click();
    await page.waitForSelector(`#inspect[data-key="${key}"]:not([hidden])`);
    const inspectJson = JSON.parse(await page.textContent('#inspect-json'));
    assert.equal(inspectJson.chunks.length, expected.chunks.length);
    assert.equal(inspectJson.manifest.codec, plan.codec);

    // The plan view, for people to look at.
    const shot = join(artifacts, 'plan-5mb.png');
    await page.locator('#plan-section').screenshot({ path: shot });
    const whole = join(artifacts, 'page-5mb.png');
    await page.screenshot({ path: whole, fullPage: true });
    t.diagnostic(`screenshot of the plan view: ${shot} (whole page: ${whole})`);
    console.error(`ARTIFACT ${shot}\nARTIFACT ${whole}`);

    // Delete: gone from the list and from the API.
    await row.getByRole('button', { name: `Delete ${key}` }).click();
    await row.waitFor({ state: 'detached' });
    assert.deepEqual(await listedKeys(server), []);
    const gone = await apiFetch(server, `/api/item?table=dynaslice-demo&key=${keyParam(key)}`);
    assert.equal(gone.status, 404);
    assert.equal((await gone.json()).error.code, 'NOT_FOUND');
    assert.equal(await errorShown(page), null);
    assert.deepEqual(page.problems, [], 'no page errors or console errors');
  } finally {
    await browser.close();
    assert.equal(await server.stop(), 0, `dynaslice serve stops cleanly on SIGINT:\n${server.log()}`);
  }
});

test('a file: stored as a binary attribute, verified byte for byte, previewed as hex', async () => {
  const browser = await launch();
  const server = await startServer();
  try {
    const page = await openPage(browser, server);
    const key = 'file-1';
    // Half noise, half text: a codec helps, but not much.
    const data = Buffer.concat([randomBytes(MB), Buffer.from('dynaslice '.repeat(MB / 10))]);
    await page.fill('#key', key);
    await page.setInputFiles('#file', { name: 'mixed.bin', mimeType: 'application/octet-stream', buffer: data });
    await page.waitForSelector('#plan[data-state="ready"]');
    const item = { pk: { S: key }, fileName: { S: 'mixed.bin' }, data: { B: new Uint8Array(data) } };
    assert.equal(Number(await page.getAttribute('#size', 'data-bytes')), itemSize(item));
    await page.click('#upload');
    await page.waitForSelector('#verify[data-state="verified"]', { timeout: 60_000 });
    const stored = Buffer.from(await (await apiFetch(server, `/api/item?table=dynaslice-demo&key=${keyParam(key)}&attribute=data`)).arrayBuffer());
    assert.ok(stored.equals(data));
    await page.waitForSelector('#preview-box:not([hidden])');
    assert.match(await page.textContent('#preview'), /^000000 {2}([0-9a-f]{2} ){15}[0-9a-f]{2}\n/);
    assert.deepEqual(page.problems, []);
  } finally {
    await browser.close();
    await server.stop();
  }
});

test('timing: a 20 MB document uploaded and verified through the page', async (t) => {
  const browser = await launch();
  const server = await startServer();
  try {
    const page = await openPage(browser, server);
    const key = 'orders-20mb';
    const chosen = performance.now();
    await loadSample(page, 20 * MB, key);
    const planned = performance.now();
    await page.click('#upload');
    await page.waitForSelector('#verify[data-state="verified"]', { timeout: 300_000 });
    const verified = performance.now();
    const plan = await page.$eval('#plan', (el) => ({ ...el.dataset }));
    const line =
      `20 MB sample (${plan.codec}, ${plan.mode}, ${plan.chunks} chunks): upload + read back + verify ${(verified - planned).toFixed(0)} ms; ` +
      `from choosing the sample (generate, measure, split) ${(verified - chosen).toFixed(0)} ms`;
    t.diagnostic(line);
    console.error(`TIMING ${line}`);
    assert.deepEqual(await listedKeys(server), [JSON.stringify({ pk: { S: key } })]);
    assert.deepEqual(page.problems, []);
  } finally {
    await browser.close();
    await server.stop();
  }
});

test('the stored items: every page of the list, also after a reload', async () => {
  const server = await startServer();
  const browser = await launch();
  try {
    // More than the API's default page of 100.
    const keys = Array.from({ length: 123 }, (_, i) => `listed-${String(i).padStart(3, '0')}`);
    await storeSmallItems(server, keys);
    const page = await openPage(browser, server);
    const shown = async () => page.$$eval('[data-testid="item-row"]', (rows) => rows.map((row) => row.dataset.key));
    assert.equal(await page.getAttribute('#items', 'data-count'), '123');
    assert.deepEqual(await shown(), keys, 'every item once, in key order');
    assert.equal((await page.textContent('#items-status')).trim(), '123 items in dynaslice-demo.');
    // The token now lives in the tab's sessionStorage: a reload needs no link.
    await page.reload();
    await page.waitForSelector('body[data-state="ready"]', { timeout: 30_000 });
    assert.deepEqual(await shown(), keys);
    assert.deepEqual(page.problems, []);
  } finally {
    await browser.close();
    await server.stop();
  }
});
