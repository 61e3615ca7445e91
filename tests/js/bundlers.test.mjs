// Node only: the packed package inside a bundled web app. For each of Vite,
// webpack, esbuild and Rollup, a project made of the page in
// tests/js/bundlers/page/ and the fixture tests/js/bundlers/<bundler>/ (its
// package.json pins the bundler and holds the build command, all the
// configuration it needs) installs the `npm pack` tarball and builds. The
// output is served on 127.0.0.1 and loaded in headless Chromium, where the
// page splits a 1 MiB item and reassembles it: the bytes must come back
// equal, with the chunk count and item size the Node build gives. Installs
// are cached outside the clone (support/bundler-project.mjs); the bundles'
// sizes are printed as the table in BENCHMARKS.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { itemSize, split } from 'dynaslice';
import { OPTIONS, sampleItem } from './bundlers/page/sample.js';
import { install, npm, project } from './support/bundler-project.mjs';
import { CHROMIUM, launchChromium, serveFiles } from './support/chromium.mjs';

const BUNDLERS = ['vite', 'webpack', 'esbuild', 'rollup'];
const wasmDir = fileURLToPath(new URL('../../wasm/', import.meta.url));
const fixtures = fileURLToPath(new URL('./bundlers/', import.meta.url));
const page = join(fixtures, 'page');

/** Every file under `dir`, recursively. */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Bytes, and bytes after `gzip -9`, of the files, each compressed alone as a server would send it. */
function measure(files) {
  const bytes = files.map((f) => readFileSync(f));
  return { raw: bytes.reduce((n, b) => n + b.length, 0), gzip: bytes.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0) };
}

/**
 * Loads `dist/index.html` in a new tab and returns what the page published.
 * Every request the page made must have succeeded.
 */
async function load(context, dist) {
  const server = await serveFiles(dist);
  const tab = await context.newPage();
  const problems = [];
  tab.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
  tab.on('requestfailed', (r) => problems.push(`failed ${r.url()}`));
  tab.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  try {
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    await tab.waitForFunction(() => window.result !== undefined, null, { timeout: 60_000, polling: 100 });
    const result = await tab.evaluate(() => window.result);
    assert.deepEqual(problems, [], 'every request of the page succeeded');
    return result;
  } finally {
    await tab.close();
    server.close();
  }
}

const grouped = (n) => n.toLocaleString('en-US');

test('the packed package works in the bundles of Vite, webpack, esbuild and Rollup', async (t) => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium chromium-driver`);
  const work = mkdtempSync(join(tmpdir(), 'dynaslice-bundlers-'));
  const chromium = await launchChromium();
  const sizes = [];
  try {
    const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], wasmDir));
    const tarball = join(work, packed.filename);
    const packagedWasm = readFileSync(join(wasmDir, 'dist/web/dynaslice_wasm_bg.wasm'));
    const item = sampleItem();
    const expected = { chunks: split(item, OPTIONS).chunks.length, itemSize: itemSize(item, OPTIONS) };
    assert.ok(expected.chunks >= 2, `the sample must be split, into ${expected.chunks} chunks`);

    for (const name of BUNDLERS) {
      await t.test(name, async (t) => {
        const started = performance.now();
        const fixture = join(fixtures, name);
        const version = JSON.parse(readFileSync(join(fixture, 'package.json'), 'utf8')).devDependencies[name];
        const installed = install(name, fixture, tarball);
        const app = project(name, page, fixture, installed.dir);
        try {
          npm(['run', 'build'], app);
          const dist = join(app, 'dist');
          // Vite writes the page from index.html; the others bundle main.js, which it loads.
          if (!existsSync(join(dist, 'index.html'))) copyFileSync(join(page, 'index.html'), join(dist, 'index.html'));
          const files = filesUnder(dist);
          const wasm = files.filter((f) => extname(f) === '.wasm');
          assert.equal(wasm.length, 1, `one .wasm in the output: ${files.join(', ')}`);
          assert.ok(readFileSync(wasm[0]).equals(packagedWasm), `${wasm[0]} is the package's module, unchanged`);

          const result = await load(chromium.context, dist);
          assert.equal(result.error, undefined, result.error);
          assert.equal(result.pk, 'bundled');
          assert.ok(Buffer.from(result.data, 'base64').equals(item.data.B), 'the reassembled bytes are the input');
          assert.equal(result.chunks, expected.chunks, 'chunks, as the Node build splits the same item');
          assert.equal(result.itemSize, expected.itemSize, 'itemSize, as the Node build measures it');

          const js = measure(files.filter((f) => ['.js', '.mjs'].includes(extname(f))));
          sizes.push({ name: `${name} ${version}`, js, wasm: measure(wasm) });
          const took = Math.round(performance.now() - started);
          t.diagnostic(`${installed.fresh ? 'installed' : 'install cached'}, built and loaded in ${took} ms`);
        } finally {
          rmSync(app, { recursive: true, force: true });
        }
      });
    }
  } finally {
    await chromium.close();
    rmSync(work, { recursive: true, force: true });
  }

  t.diagnostic('| bundler | JS bytes | JS gzip -9 | wasm bytes | wasm gzip -9 |');
  t.diagnostic('|---|---:|---:|---:|---:|');
  for (const { name, js, wasm } of sizes) {
    t.diagnostic(`| ${name} | ${grouped(js.raw)} | ${grouped(js.gzip)} | ${grouped(wasm.raw)} | ${grouped(wasm.gzip)} |`);
  }
});
