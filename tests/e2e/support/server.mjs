// Builds the host once per test process (debug; seconds when warm) and runs
// `dynaslice serve` on a fresh embedded store in a temporary folder, on a
// free port; reads the URL from its "dynaslice serving <url>" line.
// DYNASLICE_BIN=<path> runs that binary instead, without building.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../..', import.meta.url));
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(root, 'target');
const binary = process.env.DYNASLICE_BIN || join(targetDir, 'debug', 'dynaslice');
let built = Boolean(process.env.DYNASLICE_BIN);

/** `cargo build -p dynaslice-host` (debug), once per process; its output goes to stderr. */
export function buildHost() {
  if (built) return;
  const wasm = join(root, 'wasm', 'dist', 'web', 'dynaslice_wasm_bg.wasm');
  if (!existsSync(wasm)) throw new Error(`${wasm} is missing: run npm run build:wasm first`);
  const result = spawnSync('cargo', ['build', '-p', 'dynaslice-host'], { cwd: root, stdio: ['ignore', process.stderr, process.stderr] });
  if (result.status !== 0) throw new Error(`cargo build -p dynaslice-host failed (exit ${result.status ?? result.signal})`);
  built = true;
}

/**
 * Starts `dynaslice serve --data <fresh dir>/local.db --listen 127.0.0.1:0 ...args`.
 * Resolves once it prints its URL.
 * @param {string[]} [args] more flags (`--key-prefix`, `--max-item-bytes`, …)
 * @returns {Promise<{ url: string, startedAt: number, urlAt: number, stop: () => Promise<number | null>, log: () => string }>}
 */
export async function startServer(args = []) {
  buildHost();
  const dir = mkdtempSync(join(tmpdir(), 'dynaslice-e2e-'));
  const flags = ['serve', '--data', join(dir, 'local.db'), '--listen', '127.0.0.1:0', '--www', join(root, 'www'), '--pkg', join(root, 'wasm'), ...args];
  const startedAt = performance.now();
  const child = spawn(binary, flags, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  createInterface({ input: child.stderr }).on('line', (line) => lines.push(line));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL from dynaslice serve within 60 s:\n${lines.join('\n')}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const found = /^dynaslice serving (http:\/\/\S+?)\/?$/.exec(line.trim());
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    child.on('error', (error) => reject(error));
    exited.then((code) => reject(new Error(`dynaslice serve exited (${code}) before printing its URL:\n${lines.join('\n')}`)));
  });
  const urlAt = performance.now();
  return {
    url,
    startedAt,
    urlAt,
    log: () => lines.join('\n'),
    /** Stops the server with SIGINT (as Ctrl-C does); resolves to its exit code. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const code = await exited;
        clearTimeout(timer);
        rmSync(dir, { recursive: true, force: true });
        return code;
      }
      rmSync(dir, { recursive: true, force: true });
      return exited;
    },
  };
}

/** The `key` query parameter of the API for a string partition key `pk`. */
export function keyParam(pk) {
  return encodeURIComponent(JSON.stringify({ pk: { S: pk } }));
}

/** `GET /api/items` as sorted key strings, for before/after comparisons. */
export async function listedKeys(url, table = 'dynaslice-demo') {
  const response = await fetch(`${url}/api/items?table=${encodeURIComponent(table)}`);
  if (!response.ok) throw new Error(`GET /api/items: HTTP ${response.status} ${await response.text()}`);
  const { items } = await response.json();
  return items.map((i) => JSON.stringify(i.key)).sort();
}

/** `GET /api/items` rows exactly as served, sorted by key. */
export async function listedItems(url, table = 'dynaslice-demo') {
  const response = await fetch(`${url}/api/items?table=${encodeURIComponent(table)}`);
  if (!response.ok) throw new Error(`GET /api/items: HTTP ${response.status} ${await response.text()}`);
  const { items } = await response.json();
  return items.sort((a, b) => JSON.stringify(a.key).localeCompare(JSON.stringify(b.key)));
}
