// Node only: the npm package as users get it. `npm pack` in wasm/, the
// tarball's exact file list, then a clean project outside the repository
// installs the tarball and loads it as ESM, as CommonJS and (with initSync)
// through its browser entry, each in its own Node process; then, with the
// AWS SDK installed beside it, the driver dynaslice/dynamodb.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const wasmDir = fileURLToPath(new URL('../../wasm/', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const quiet = { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] };
/**
 * The SDK version the repository tests with. The clean project resolves its
 * dependencies afresh (a user's install would), so they come from the
 * registry, or from npm's cache when it holds them (`--prefer-offline`):
 * never `--offline`, which passes only where an earlier install left them.
 */
const sdkVersion = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url))).devDependencies['@aws-sdk/client-dynamodb'];

/** A sample item and the size every entry must agree on. */
const SAMPLE = "{ pk: { S: 'order#1' }, total: { N: '1299.95' }, tags: { SS: ['a', 'b'] }, blob: { B: new Uint8Array(100) } }";
const SAMPLE_SIZE = 2 + 7 + 5 + 4 + 4 + 2 + 4 + 100;

test('npm pack ships exactly the built package, and a clean project can use it', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'dynaslice-pack-'));
  try {
    const [packed] = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', work], { ...quiet, cwd: wasmDir }));
    const files = packed.files.map((f) => f.path).sort();
    for (const f of packed.files) t.diagnostic(`${f.path}  ${f.size} bytes`);
    t.diagnostic(`${packed.filename}: ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`);

    const js = readdirSync(join(wasmDir, 'js'), { recursive: true }).filter((f) => /\.(m|c)?js$/.test(f)).map((f) => `js/${f}`);
    const expected = [
      'LICENSE-APACHE',
      'LICENSE-MIT',
      'README.md',
      'dist/node/dynaslice_wasm.js',
      'dist/node/package.json',
      'dist/web/dynaslice_wasm.js',
      'dist/web/dynaslice_wasm_bg.wasm',
      'dist/policy.js',
      'index.d.ts',
      'dynamodb.d.ts',
      ...js,
      'package.json',
    ].sort();
    assert.deepEqual(files, expected);
    assert.ok(js.includes('js/node.mjs') && js.includes('js/node.cjs') && js.includes('js/browser.js'));
    assert.ok(js.includes('js/dynamodb.js') && js.includes('js/dynamodb/send.js') && js.includes('js/dynamodb/s3.js'));
    for (const f of packed.files.filter((f) => f.path.endsWith('.wasm'))) {
      assert.ok(f.size > 50_000 && f.size < 2_000_000, `${f.path}: ${f.size} bytes`);
    }

    // A project outside the repository: nothing resolves through the workspace.
    const project = join(work, 'app');
    execFileSync('mkdir', [project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, version: '1.0.0' }));
    execFileSync(npm, ['install', join(work, packed.filename), '--prefer-offline', '--no-audit', '--no-fund'], { ...quiet, cwd: project });

    const node = (args, code) => execFileSync(process.execPath, [...args, '-e', code], { ...quiet, cwd: project }).trim();
    const sizes = `const item = ${SAMPLE};
      const table = { table: 't', key: [{ name: 'pk', type: 'S' }] };
      const random = new Uint8Array(65536 * 7);
      for (let at = 0; at < random.length; at += 65536) crypto.getRandomValues(random.subarray(at, at + 65536));
      const big = { pk: { S: 'x' }, data: { B: random } };
      const { parent, chunks, manifest, capacity } = d.split(big, table);
      const back = d.reassemble(parent, chunks, table);
      const stored = chunks.reduce((n, c) => n + d.chunkData(c).length, 0) === manifest.storedBytes;
      console.log(JSON.stringify([d.itemSize(item), chunks.length, back.data.B.length, typeof d.NumberValue, typeof d.splitStream,
        d.MAX_ITEM_BYTES, capacity[0].items.length, d.readCapacity(parent, table).chunkReadUnits, d.carriesVersion(parent, manifest.version), stored]));`;
    const esm = node(['--input-type=module'], `import * as d from 'dynaslice';\nconst where = import.meta.resolve('dynaslice');\nif (!where.includes('/app/node_modules/dynaslice/')) throw new Error(where);\n${sizes}`);
    const cjs = node([], `const d = require('dynaslice');\nconst where = require.resolve('dynaslice');\nif (!where.includes('/app/node_modules/dynaslice/')) throw new Error(where);\n${sizes}`);
    const browser = node(['--input-type=module', '--conditions=browser'], `import * as d from 'dynaslice';
      import { readFileSync } from 'node:fs';
      const where = import.meta.resolve('dynaslice');
      if (!where.endsWith('/js/browser.js')) throw new Error(where);
      d.initSync(readFileSync(new URL('../dist/web/dynaslice_wasm_bg.wasm', where)));
      ${sizes}`);
    // Two chunks, of 409,600 and about 49,000 bytes: 100 and 13 read units;
    // batch mode (the default): the first request is one BatchWriteItem of both.
    const expectedOut = JSON.stringify([SAMPLE_SIZE, 2, 65536 * 7, 'function', 'function', 409_600, 2, 113, true, true]);
    assert.equal(esm, expectedOut, 'ESM');
    assert.equal(cjs, expectedOut, 'CommonJS');
    assert.equal(browser, expectedOut, 'the browser entry, loaded with initSync');

    // The driver: its peer dependency is not installed with the package (the
    // main entry above worked without it); once the app installs it, the
    // subpath loads from ESM and CommonJS (require of an ES module).
    assert.ok(!existsSync(join(project, 'node_modules', '@aws-sdk', 'client-dynamodb')), 'the SDK is not bundled or installed');
    execFileSync(npm, ['install', `@aws-sdk/client-dynamodb@${sdkVersion}`, '--prefer-offline', '--no-audit', '--no-fund'], { ...quiet, cwd: project });
    const exportsOf = 'console.log(Object.keys(driver).sort().join())';
    const names = 'DEFAULT_CONCURRENCY,DEFAULT_GRACE_MS,DEFAULT_RETRY,DEFAULT_WINDOW,deleteItem,gc,gcObjects,getItem,getStream,listVersions,putItem,putItems,putStream,queryItems,restoreVersion,updateItem,verify';
    assert.equal(node(['--input-type=module'], `import * as driver from 'dynaslice/dynamodb';\n${exportsOf}`), names, 'ESM');
    assert.equal(node([], `const driver = require('dynaslice/dynamodb');\n${exportsOf}`), names, 'CommonJS');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
