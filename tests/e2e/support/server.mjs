// Builds the host once per test process (debug; seconds when warm) and runs
// `dynaslice serve` on a fresh embedded store in a temporary folder, on a
// free port; reads the URL and this launch's token from its
// "dynaslice serving http://127.0.0.1:PORT/#token=TOKEN" line. The API
// helpers below send the token in X-Dynaslice-Token and follow `cursor`s.
// DYNASLICE_BIN=<path> runs that binary instead, without building.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../..', import.meta.url));
export const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(root, 'target');
const binary = process.env.DYNASLICE_BIN || join(targetDir, 'debug', 'dynaslice');
let built = Boolean(process.env.DYNASLICE_BIN);

/**
 * The host's binaries (debug), once per process; cargo's output goes to
 * stderr. `cargo test --workspace --no-run` builds the binary and the
 * examples with the features `npm test`'s Rust tests already built them
 * with, so nothing is compiled twice (`cargo build -p` would unify features
 * differently and rebuild the AWS SDK).
 */
export function buildHost() {
  if (built) return;
  const wasm = join(root, 'wasm', 'dist', 'web', 'dynaslice_wasm_bg.wasm');
  if (!existsSync(wasm)) throw new Error(`${wasm} is missing: run npm run build:wasm first`);
  const result = spawnSync('cargo', ['test', '--workspace', '--no-run'], { cwd: root, stdio: ['ignore', process.stderr, process.stderr] });
  if (result.status !== 0) throw new Error(`cargo test --workspace --no-run failed (exit ${result.status ?? result.signal})`);
  built = true;
}

/** The header every API call needs (docs/API.md, "Threat model"). */
export const TOKEN_HEADER = 'x-dynaslice-token';

/** The line `dynaslice serve` prints once it listens: the URL (no slash) and the token. */
const SERVING = /^dynaslice serving (http:\/\/[^/#\s]+)\/?#token=(\S+)$/;

/**
 * Starts `dynaslice serve --data <fresh dir>/local.db --listen 127.0.0.1:0 ...args`.
 * Resolves once it prints its URL.
 * @param {string[]} [args] more flags (`--key-prefix`, `--max-item-bytes`, …)
 * @param {{ env?: Record<string, string> }} [options] more environment (`DYNASLICE_TOKEN`)
 * @returns {Promise<{ url: string, token: string, pageUrl: string, port: number, pid: number,
 *   startedAt: number, urlAt: number, stop: () => Promise<number | null>, log: () => string }>}
 */
export async function startServer(args = [], options = {}) {
  buildHost();
  const dir = mkdtempSync(join(tmpdir(), 'dynaslice-e2e-'));
  const flags = ['serve', '--data', join(dir, 'local.db'), '--listen', '127.0.0.1:0', '--www', join(root, 'www'), '--pkg', join(root, 'wasm'), ...args];
  const startedAt = performance.now();
  // DYNASLICE_TOKEN from the test runner's own environment would fix every
  // launch's token: each server gets its own unless a test asks for one.
  const env = { ...process.env, ...options.env };
  if (!options.env?.DYNASLICE_TOKEN) delete env.DYNASLICE_TOKEN;
  const child = spawn(binary, flags, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  createInterface({ input: child.stderr }).on('line', (line) => lines.push(line));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const [url, token] = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL from dynaslice serve within 60 s:\n${lines.join('\n')}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (!line.startsWith('dynaslice serving ')) return;
      clearTimeout(timer);
      const found = SERVING.exec(line.trim());
      if (found) resolve([found[1], found[2]]);
      else reject(new Error(`dynaslice serve printed a URL without a #token=: ${line}`));
    });
    child.on('error', (error) => reject(error));
    exited.then((code) => reject(new Error(`dynaslice serve exited (${code}) before printing its URL:\n${lines.join('\n')}`)));
  });
  const urlAt = performance.now();
  return {
    url,
    token,
    /** The link `npm start` shows: the page with this launch's token in its fragment. */
    pageUrl: `${url}/#token=${token}`,
    port: Number(new URL(url).port),
    pid: child.pid,
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

/**
 * `fetch(server.url + path)` with the server's token (as the page sends it).
 * @param {{ url: string, token: string }} server
 * @param {string} path `/api/...`
 * @param {RequestInit} [init]
 */
export function apiFetch(server, path, init = {}) {
  return fetch(`${server.url}${path}`, { ...init, headers: { ...init.headers, [TOKEN_HEADER]: server.token } });
}

/** `GET /api/config`, which must answer. */
export async function getConfig(server) {
  const response = await apiFetch(server, '/api/config');
  if (!response.ok) throw new Error(`GET /api/config: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * Every page of `GET /api/items` (each answer's `cursor` passed back until
 * it is null), checked as it comes: each page at most `limit` items.
 * @param {{ url: string, token: string }} server
 * @param {string} [table]
 * @param {{ limit?: number }} [options]
 * @returns {Promise<{ items: object[], pages: number }>}
 */
export async function allItemPages(server, table = 'dynaslice-demo', options = {}) {
  const items = [];
  let cursor = null;
  let pages = 0;
  do {
    const params = new URLSearchParams({ table });
    if (options.limit !== undefined) params.set('limit', String(options.limit));
    if (cursor !== null) params.set('cursor', cursor);
    const response = await apiFetch(server, `/api/items?${params}`);
    if (!response.ok) throw new Error(`GET /api/items: HTTP ${response.status} ${await response.text()}`);
    const page = await response.json();
    pages += 1;
    if (!Array.isArray(page.items) || !('cursor' in page)) throw new Error(`GET /api/items: not a page: ${JSON.stringify(page).slice(0, 200)}`);
    if (options.limit !== undefined && page.items.length > options.limit) throw new Error(`GET /api/items: ${page.items.length} items, limit ${options.limit}`);
    if (page.cursor !== null && typeof page.cursor !== 'string') throw new Error(`GET /api/items: cursor ${JSON.stringify(page.cursor)}`);
    if (page.cursor !== null && page.cursor === cursor) throw new Error('GET /api/items: the same cursor twice');
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== null);
  return { items, pages };
}

/** `GET /api/items` (every page) as sorted key strings, for before/after comparisons. */
export async function listedKeys(server, table = 'dynaslice-demo') {
  const { items } = await allItemPages(server, table);
  return items.map((i) => JSON.stringify(i.key)).sort();
}

/** `GET /api/items` rows (every page) exactly as served, sorted by key. */
export async function listedItems(server, table = 'dynaslice-demo') {
  const { items } = await allItemPages(server, table);
  return items.sort((a, b) => JSON.stringify(a.key).localeCompare(JSON.stringify(b.key)));
}
