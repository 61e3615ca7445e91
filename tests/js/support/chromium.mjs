// What the Node tests that load pages share: Debian's headless Chromium
// driven by playwright-core (browser downloads are impossible here), and a
// static file server on 127.0.0.1 for the pages it loads.
import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  // instantiateStreaming needs this type; without it the glue falls back to a slower path and warns.
  '.wasm': 'application/wasm',
};

/**
 * Serves the files under `root` on 127.0.0.1 (GET only, no listing; a path
 * ending in `/` is its index.html). Resolves to the listening server.
 */
export function serveFiles(root) {
  const base = root.endsWith(sep) ? root : root + sep;
  const server = createServer((request, response) => {
    let pathname = decodeURIComponent(new URL(request.url, 'http://x').pathname);
    if (pathname.endsWith('/')) pathname += 'index.html';
    const path = normalize(join(base, pathname));
    const type = TYPES[extname(path)];
    if (request.method !== 'GET' || !path.startsWith(base) || !type || !existsSync(path) || !statSync(path).isFile()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    createReadStream(path).pipe(response);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * Starts headless Chromium with a throwaway profile and the flags that keep
 * it off the network. `close()` stops it and removes the profile.
 */
export async function launchChromium() {
  const profile = mkdtempSync(join(tmpdir(), 'dynaslice-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
