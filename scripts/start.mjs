#!/usr/bin/env node
// `npm start`: the main job. After `prestart` (scripts/setup.mjs: npm
// packages, Rust targets, wasm-bindgen), builds what is missing or stale:
// the npm package's WebAssembly (scripts/build-wasm.mjs, as `npm test` does)
// and the host (cargo, release), then runs `dynaslice serve` on the embedded
// stores (table data in .dynaslice/local.db, payloads of 1 MiB or more in the
// embedded S3 store's bucket `dynaslice`, .dynaslice/s3) and prints the page's URL, with this
// launch's key in its fragment (`#token=`). Ctrl-C stops it cleanly.
//
// Arguments after `--` go to `dynaslice serve`:
//   npm start -- --listen 127.0.0.1:8080 --key-prefix demo-
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();

function say(line) {
  console.error(`dynaslice: ${line}`);
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    say(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal ?? result.error?.code})`);
    process.exit(1);
  }
}

/** The newest modification time of the files under `path` (a file or a folder). */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const entry of readdirSync(path)) {
    if (entry === 'target' || entry === 'fuzz' || entry === 'node_modules') continue;
    latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

// The WebAssembly package: rebuilt when any input is newer than its output.
const built = ['wasm/dist/web/dynaslice_wasm_bg.wasm', 'wasm/dist/web/dynaslice_wasm.js', 'wasm/dist/node/dynaslice_wasm.js'].map((p) => join(root, p));
const inputs = ['core/src', 'core/Cargo.toml', 'wasm/src', 'wasm/Cargo.toml', 'Cargo.toml', 'Cargo.lock', 'scripts/build-wasm.mjs'];
const oldestOutput = Math.min(...built.map((p) => (existsSync(p) ? statSync(p).mtimeMs : 0)));
if (oldestOutput < Math.max(...inputs.map((p) => newest(join(root, p))))) {
  say(oldestOutput === 0 ? 'building the npm package (WebAssembly)…' : 'the npm package is older than its sources: rebuilding it…');
  run(process.execPath, [join(root, 'scripts', 'build-wasm.mjs')]);
}

// The host: cargo decides what is stale (a second or two when nothing is).
say('building the host (cargo build --release; the first build takes a few minutes)…');
run('cargo', ['build', '--release', '-p', 'dynaslice-host']);

const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(root, 'target');
const binary = join(targetDir, 'release', 'dynaslice');
mkdirSync(join(root, '.dynaslice'), { recursive: true });
// Large payloads go to the embedded S3 store (objects under .dynaslice/s3),
// which the server offers the page on a port of its own: a file of 1 MiB or
// more goes from the browser straight to it. Only the embedded store gets a
// bucket by default: with `--aws` or `--s3-endpoint` (or their variables)
// name yours with `--s3-bucket` (or DYNASLICE_S3_BUCKET).
const extra = process.argv.slice(2);
const given = (flag) => extra.some((a) => a === flag || a.startsWith(`${flag}=`));
const elsewhere = given('--aws') || given('--s3-endpoint') || process.env.DYNASLICE_S3_ENDPOINT;
const s3 = given('--s3-bucket') || process.env.DYNASLICE_S3_BUCKET || elsewhere ? [] : ['--s3-bucket', 'dynaslice'];
const args = ['serve', '--data', join(root, '.dynaslice', 'local.db'), ...s3, ...extra];
say(`starting ${binary} ${args.join(' ')}`);
const server = spawn(binary, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });

// The server prints `dynaslice serving http://127.0.0.1:PORT/#token=TOKEN`:
// the whole URL, fragment included, is the link to open. The token is this
// launch's secret (docs/API.md, "Threat model"): the page needs it for every
// API call, and no other web page can learn it.
createInterface({ input: server.stdout }).on('line', (line) => {
  console.log(line);
  const url = /^dynaslice serving (\S+)/.exec(line)?.[1];
  if (url) {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`\n  Open ${url} in your browser.  (ready ${seconds} s after npm start; Ctrl-C stops it)`);
    if (url.includes('#token=')) console.log('  The link carries this launch\'s key: share it only with people who may read and change the data.');
    else say('the server printed no #token= in its URL: the page will not be able to use the API');
    console.log('');
  }
});

// Ctrl-C reaches the whole process group, the server included; forward it
// anyway (a `kill` of this process alone must stop the server too) and wait
// for the server to finish its requests and close the store.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    server.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal);
    // A server that does not stop in 10 s is killed: Ctrl-C always ends `npm start`.
    setTimeout(() => server.kill('SIGKILL'), 10_000).unref();
  });
}

server.on('error', (error) => {
  say(`could not start ${binary}: ${error.message}`);
  process.exit(1);
});
server.on('exit', (code, signal) => {
  if (stopping) {
    say('stopped.');
    process.exit(0);
  }
  say(`the server exited (${signal ?? `exit ${code}`})`);
  process.exit(code === 0 ? 0 : 1);
});
