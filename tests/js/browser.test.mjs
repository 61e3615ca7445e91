// Node only: the portable tests (tests/js/portable/) against the browser
// build, in Debian's headless Chromium driven by playwright-core. A static
// server on 127.0.0.1 serves the repository; tests/js/browser/index.html maps
// `dynaslice` to wasm/js/browser.js and node:test / node:assert/strict to
// small shims, runs every portable file and publishes its results. The run
// must pass every test Node registers from the same files: a page that runs
// fewer (or none) fails. Without /usr/bin/chromium this test fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, launchChromium, serveFiles } from './support/chromium.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('the portable tests pass in headless Chromium against the browser build', async (t) => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium chromium-driver`);
  const files = readdirSync(join(root, 'tests/js/portable')).filter((f) => f.endsWith('.test.mjs')).sort();
  assert.ok(files.length >= 5, `portable test files: ${files}`);
  const expected = JSON.parse(execFileSync(process.execPath, ['tests/js/browser/list-tests.mjs', ...files], { cwd: root, encoding: 'utf8' }));
  assert.ok(expected.length >= 50, `Node registers ${expected.length} portable tests`);

  const server = await serveFiles(root);
  const chromium = await launchChromium();
  const { context } = chromium;
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const logs = [];
    page.on('console', (message) => logs.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => logs.push(`pageerror: ${error.message}`));
    const query = files.map((f) => `file=${encodeURIComponent(f)}`).join('&');
    const { port } = server.address();
    await page.goto(`http://127.0.0.1:${port}/tests/js/browser/index.html?${query}`);
    await page.waitForFunction(() => window.__dynasliceResults !== undefined, null, { timeout: 600_000, polling: 250 });
    const results = await page.evaluate(() => window.__dynasliceResults);
    t.diagnostic(`Chromium ${context.browser()?.version() ?? ''}: ${results.passed} passed, ${results.failed} failed, ${results.todo} todo`);
    for (const line of logs.filter((l) => !l.startsWith('log:'))) t.diagnostic(line);

    const failures = results.failures.map((f) => `${f.file}: ${f.name}\n${f.error}`).join('\n\n');
    assert.equal(results.failed, 0, failures);
    assert.deepEqual(results.files, files);
    const key = (r) => `${r.file} :: ${r.name}`;
    const ran = results.results.map((r) => ({ key: key(r), todo: r.status === 'todo' }));
    assert.deepEqual(ran, expected.map((e) => ({ key: key(e), todo: e.todo })), 'the page ran exactly the tests Node registers');
    assert.equal(results.passed, expected.filter((e) => !e.todo).length);
    assert.equal(results.todo, expected.filter((e) => e.todo).length);
  } finally {
    await chromium.close();
    server.close();
  }
});
