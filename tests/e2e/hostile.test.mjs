// The host against the web pages a user happens to open (docs/API.md,
// "Threat model"). A hostile page, served by a second local server under
// another name (http://evil.example:PORT, which Chromium resolves to
// 127.0.0.1), tries what issue 12 found open: a simple cross-site upload, the
// same in `no-cors` mode, a <form> post of a real upload body, DELETE,
// reading /api/items, and the raw DynamoDB API on every port the host's
// process listens on. A rebound DNS name, a foreign Origin and a missing or
// wrong token are tried from Node. Each attempt's outcome is recorded (what
// the page saw, and the status the browser's network layer got, preflights
// included); afterwards the table is byte-for-byte what it was, and the
// host's own page still lists the items and uploads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { split } from 'dynaslice';
import { orderHistory } from '../../www/js/sample.js';
import { uploadBody } from '../../www/js/wire.js';
import { errorShown, launch, loadSample, openPage } from './support/browser.mjs';
import { apiFetch, getConfig, keyParam, listedItems, root, startServer, TOKEN_HEADER } from './support/server.mjs';
import { encodeUpload, postUpload } from './support/upload.mjs';

const MB = 1 << 20;
const TABLE = 'dynaslice-demo';
const VICTIM = 'victim-small';
const PLANTED = 'planted=by-a-hostile-page';
const ATTACKER_NAME = 'evil.example';
const REBOUND_NAME = 'rebind.attacker.example';

/**
 * The upload every hostile attempt sends: a valid DSU1 body that overwrites
 * VICTIM (the closing control posts it with the token and it is stored).
 * Its header JSON is under 128 bytes, so the length's four bytes are ASCII
 * and NULs, and it ends with "\r\n" (JSON whitespace): a text/plain <form>
 * sends `name=value\r\n`, so a field named up to the "=" inside PLANTED
 * makes a form's body exactly these bytes.
 */
function hostileUpload() {
  const header = `{"parent":{"pk":{"S":"${VICTIM}"},"x":{"S":"${PLANTED}"}},"chunks":[]}\r\n`;
  assert.ok(header.length < 128);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  const body = Buffer.concat([Buffer.from('DSU1', 'latin1'), length, Buffer.from(header, 'latin1')]);
  const equals = 8 + header.indexOf('=');
  return {
    body,
    formName: body.subarray(0, equals).toString('latin1'),
    formValue: body.subarray(equals + 1, body.length - 2).toString('latin1'),
  };
}

/**
 * The TCP ports process `pid` listens on, from /proc: its socket inodes
 * (/proc/PID/fd) matched against the LISTEN rows (state 0A) of
 * /proc/PID/net/tcp and tcp6.
 */
function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let link;
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed while we looked
    }
    const socket = /^socket:\[(\d+)\]$/.exec(link);
    if (socket) inodes.add(socket[1]);
  }
  const ports = new Set();
  for (const file of ['tcp', 'tcp6']) {
    const path = `/proc/${pid}/net/${file}`;
    if (!existsSync(path)) continue;
    for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
      const columns = line.trim().split(/\s+/);
      if (columns.length < 10 || columns[3] !== '0A' || !inodes.has(columns[9])) continue;
      ports.add(parseInt(columns[1].split(':').pop(), 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** One HTTP request from Node with exactly these headers (`host` included); `{ status, headers, text, code }`. */
function rawRequest(port, { method = 'GET', path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, setHost: !('host' in headers) });
    req.on('response', (response) => {
      const parts = [];
      response.on('data', (part) => parts.push(part));
      response.on('end', () => {
        const text = Buffer.concat(parts).toString();
        let code = null;
        try {
          code = JSON.parse(text)?.error?.code ?? null;
        } catch {
          // not JSON
        }
        resolve({ status: response.statusCode, headers: response.headers, text, code });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Every item (all pages of /api/items), and a SHA-256 of the bytes GET /api/item answers for each. */
async function snapshot(server) {
  const rows = await listedItems(server);
  const items = [];
  for (const row of rows) {
    const response = await apiFetch(server, `/api/item?table=${TABLE}&key=${encodeURIComponent(JSON.stringify(row.key))}`);
    assert.equal(response.status, 200);
    items.push({ key: row.key, sha256: createHash('sha256').update(Buffer.from(await response.arrayBuffer())).digest('hex') });
  }
  return { rows, items };
}

/**
 * The Content-Security-Policy the host must send, by directive: the hash
 * is of the page's one inline script, its import map, as the browser
 * hashes it (the element's text exactly).
 */
function expectedPolicy() {
  const html = readFileSync(join(root, 'www', 'index.html'), 'utf8');
  const maps = [...html.matchAll(/<script type="importmap">([\s\S]*?)<\/script>/g)];
  assert.equal(maps.length, 1, 'one inline import map');
  assert.equal([...html.matchAll(/<script(?![^>]*\bsrc=)(?![^>]*type="importmap")[^>]*>/g)].length, 0, 'no other inline script');
  const hash = createHash('sha256').update(maps[0][1]).digest('base64');
  return parsePolicy(
    `default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'sha256-${hash}'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; ` +
      "worker-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
  );
}

function parsePolicy(text) {
  const policy = {};
  for (const directive of text.split(';').map((d) => d.trim()).filter(Boolean)) {
    const [name, ...sources] = directive.split(/\s+/);
    policy[name.toLowerCase()] = sources.sort();
  }
  return policy;
}

/** The headers every answer carries (static files, API answers and refusals alike). */
function assertSecurityHeaders(what, headers, policy) {
  assert.equal(headers['x-content-type-options'], 'nosniff', `${what}: X-Content-Type-Options`);
  assert.equal(headers['cross-origin-resource-policy'], 'same-origin', `${what}: Cross-Origin-Resource-Policy`);
  assert.equal(headers['referrer-policy'], 'no-referrer', `${what}: Referrer-Policy`);
  assert.equal(headers['x-frame-options']?.toUpperCase(), 'DENY', `${what}: X-Frame-Options`);
  assert.ok(headers['content-security-policy'], `${what}: a Content-Security-Policy`);
  assert.deepEqual(parsePolicy(headers['content-security-policy']), policy, `${what}: the Content-Security-Policy`);
  assert.deepEqual(Object.keys(headers).filter((name) => name.startsWith('access-control-')), [], `${what}: no CORS header`);
}

/**
 * What Chromium's network layer saw for `page`'s requests to `port`: method,
 * URL, the headers it sent (Origin, Sec-Fetch-Site), the status and headers
 * of the answer, even when CORS then hid it from the script, and preflights,
 * which the page's own events do not show.
 */
async function networkRecorder(page, port) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  const requests = new Map();
  const entry = (id) => {
    if (!requests.has(id)) requests.set(id, { id });
    return requests.get(id);
  };
  cdp.on('Network.requestWillBeSent', (e) => Object.assign(entry(e.requestId), { method: e.request.method, url: e.request.url }));
  cdp.on('Network.requestWillBeSentExtraInfo', (e) => Object.assign(entry(e.requestId), { sent: Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k.toLowerCase(), v])) }));
  cdp.on('Network.responseReceivedExtraInfo', (e) =>
    Object.assign(entry(e.requestId), { status: e.statusCode, headers: Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k.toLowerCase(), v])) }),
  );
  cdp.on('Network.loadingFailed', (e) => Object.assign(entry(e.requestId), { failed: e.corsErrorStatus?.corsError ?? e.errorText }));
  cdp.on('Network.loadingFinished', (e) => Object.assign(entry(e.requestId), { finished: true }));
  const toHost = () => [...requests.values()].filter((r) => r.url && new URL(r.url).port === String(port));
  return {
    /** The ids seen so far: pass to `since` after an attempt. */
    mark: () => new Set(requests.keys()),
    /** The requests to the host after `mark`, once each has an outcome and no new one came for 300 ms. */
    async since(mark, { expect = 1 } = {}) {
      const deadline = Date.now() + 15_000;
      let count = -1;
      for (;;) {
        const fresh = toHost().filter((r) => !mark.has(r.id));
        const open = fresh.some((r) => !r.failed && !r.finished && r.status === undefined);
        if (fresh.length >= expect && !open && fresh.length === count) return fresh;
        if (Date.now() > deadline) return fresh;
        count = fresh.length;
        await sleep(300);
      }
    },
    all: toHost,
  };
}

test('a hostile page, a rebound name and a foreign origin change nothing; the host\'s page keeps working', async (t) => {
  const server = await startServer();
  const attacker = { echoes: [] };
  const attackerServer = createServer((req, res) => {
    const parts = [];
    req.on('data', (part) => parts.push(part));
    req.on('end', () => {
      if (req.url === '/echo') {
        attacker.echoes.push(Buffer.concat(parts));
        res.writeHead(204).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>a page the user happens to open</title><iframe name="sink"></iframe>');
    });
  });
  await new Promise((resolve) => attackerServer.listen(0, '127.0.0.1', resolve));
  const attackerPort = attackerServer.address().port;
  const attackerOrigin = `http://${ATTACKER_NAME}:${attackerPort}`;
  const browser = await launch([`--host-resolver-rules=MAP ${ATTACKER_NAME} 127.0.0.1, MAP ${REBOUND_NAME} 127.0.0.1`]);
  const outcomes = [];
  const record = (attempt, pageSaw, hostAnswered) => outcomes.push({ attempt, pageSaw, hostAnswered });
  try {
    const config = await getConfig(server);
    const table = config.tables.find((x) => x.name === TABLE);
    const options = { table: table.name, key: table.key, layout: table.layout, chunkTable: table.chunkTable };

    // Two items stored with the token: a small one (the victim of every
    // overwrite) and a 1 MB one in chunks.
    const small = await postUpload(server, TABLE, encodeUpload({ pk: { S: VICTIM }, note: { S: 'the original' } }, []));
    assert.equal(small.status, 200, JSON.stringify(small.body));
    const big = split({ pk: { S: 'victim-chunked' }, body: { S: orderHistory(MB) } }, { ...options, codec: 'none' });
    assert.ok(big.chunks.length >= 2);
    const stored = await postUpload(server, TABLE, uploadBody(big.parent, big.chunks));
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    const before = await snapshot(server);
    assert.deepEqual(before.rows.map((r) => r.key.pk.S), ['victim-chunked', VICTIM]);

    const hostile = hostileUpload();
    const target = `http://127.0.0.1:${server.port}`;
    const uploadUrl = `${target}/api/upload?table=${TABLE}`;

    await t.test('the host process listens on exactly one TCP port, its own', () => {
      // The reader of /proc works: it finds the attacker's server in this process.
      assert.ok(listeningPorts(process.pid).includes(attackerPort), 'listeningPorts finds this process\'s own server');
      const ports = listeningPorts(server.pid);
      record(`ports the host process (pid ${server.pid}) listens on`, '-', ports.join(', '));
      assert.deepEqual(ports, [server.port], 'no listening socket for the embedded store');
    });

    const page = await browser.newPage();
    const network = await networkRecorder(page, server.port);
    await page.goto(`${attackerOrigin}/`);

    /** Runs `attempt` in the hostile page; returns what the script saw and the host's answers. */
    async function fromPage(name, attempt, arg, expect = 1) {
      const mark = network.mark();
      const pageSaw = await page.evaluate(attempt, arg);
      const seen = await network.since(mark, { expect });
      const hostAnswered = seen.map((r) => `${r.method} ${r.status ?? `never answered (${r.failed})`}`).join('; ');
      record(name, pageSaw, hostAnswered || 'no request');
      return { pageSaw, seen };
    }
    const sentCrossSite = (r) => {
      assert.equal(r.sent?.origin, attackerOrigin, `${r.method} ${r.url}: the browser sent the attacker's Origin`);
      assert.equal(r.sent?.['sec-fetch-site'], 'cross-site', `${r.method} ${r.url}: Sec-Fetch-Site`);
    };

    await t.test('a simple cross-site fetch POST (text/plain) of an upload', async () => {
      const { pageSaw, seen } = await fromPage(
        'fetch POST /api/upload, text/plain, cors',
        async ({ url, bytes }) => {
          try {
            const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: new Uint8Array(bytes) });
            return `read ${response.status}: ${await response.text()}`;
          } catch (error) {
            return `rejected: ${error.name}`;
          }
        },
        { url: uploadUrl, bytes: [...hostile.body] },
      );
      assert.equal(pageSaw, 'rejected: TypeError');
      const post = seen.find((r) => r.method === 'POST');
      sentCrossSite(post);
      assert.equal(post.status, 403, 'the host refused it');
    });

    await t.test('the same upload in no-cors mode', async () => {
      const { pageSaw, seen } = await fromPage(
        'fetch POST /api/upload, text/plain, no-cors',
        async ({ url, bytes }) => {
          try {
            const response = await fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: new Uint8Array(bytes) });
            return `resolved: ${response.type} response, status ${response.status}`;
          } catch (error) {
            return `rejected: ${error.name}`;
          }
        },
        { url: uploadUrl, bytes: [...hostile.body] },
      );
      // Nothing readable either way: no-cors shows at most an opaque answer,
      // and Cross-Origin-Resource-Policy makes the browser drop even that.
      // The host's status says what happened to the write.
      assert.ok(pageSaw === 'rejected: TypeError' || pageSaw === 'resolved: opaque response, status 0', pageSaw);
      const post = seen.find((r) => r.method === 'POST');
      sentCrossSite(post);
      assert.equal(post.status, 403, 'the host refused it');
    });

    await t.test('a <form> POST whose body is the upload, byte for byte', async () => {
      const submit = ({ action, name, value }) => {
        const form = document.createElement('form');
        Object.assign(form, { method: 'post', enctype: 'text/plain', action, target: 'sink' });
        const field = document.createElement('input');
        Object.assign(field, { type: 'hidden', name, value });
        form.append(field);
        document.body.append(form);
        form.submit();
        return 'submitted';
      };
      // Control: posted to the attacker's own server, the form's body is the upload exactly.
      await page.evaluate(submit, { action: `${attackerOrigin}/echo`, name: hostile.formName, value: hostile.formValue });
      for (let i = 0; i < 50 && attacker.echoes.length === 0; i += 1) await sleep(100);
      assert.equal(attacker.echoes.length, 1);
      assert.ok(attacker.echoes[0].equals(hostile.body), `the form sends the upload's bytes: ${JSON.stringify(attacker.echoes[0].toString('latin1'))}`);
      const { seen } = await fromPage('<form> POST /api/upload, text/plain body = the upload', submit, { action: uploadUrl, name: hostile.formName, value: hostile.formValue });
      const post = seen.find((r) => r.method === 'POST');
      assert.ok(post, 'the browser sent the form');
      sentCrossSite(post);
      assert.equal(post.status, 403, 'the host refused it');
    });

    await t.test('a cross-site DELETE', async () => {
      const { pageSaw, seen } = await fromPage(
        'fetch DELETE /api/item',
        async (url) => {
          try {
            const response = await fetch(url, { method: 'DELETE' });
            return `read ${response.status}`;
          } catch (error) {
            return `rejected: ${error.name}`;
          }
        },
        `${target}/api/item?table=${TABLE}&key=${keyParam(VICTIM)}`,
        2,
      );
      assert.equal(pageSaw, 'rejected: TypeError');
      const preflight = seen.find((r) => r.method === 'OPTIONS');
      assert.ok(preflight?.status, 'the preflight reached the host');
      assert.deepEqual(Object.keys(preflight.headers).filter((h) => h.startsWith('access-control-')), [], 'the preflight got no CORS header');
      const del = seen.find((r) => r.method === 'DELETE');
      assert.ok(!del || del.status === undefined || del.status === 403, `the DELETE itself: ${JSON.stringify(del)}`);
    });

    await t.test('reading /api/items from another site', async () => {
      const { pageSaw, seen } = await fromPage(
        'fetch GET /api/items, read the body',
        async (url) => {
          try {
            const response = await fetch(url);
            return `read ${response.status}: ${(await response.text()).slice(0, 80)}`;
          } catch (error) {
            return `rejected: ${error.name}`;
          }
        },
        `${target}/api/items?table=${TABLE}`,
      );
      assert.equal(pageSaw, 'rejected: TypeError');
      const get = seen.find((r) => r.method === 'GET');
      sentCrossSite(get);
      assert.equal(get.status, 403, 'the host refused it');
    });

    await t.test('the DynamoDB API on every port the host process listens on', async () => {
      for (const port of listeningPorts(server.pid)) {
        const { pageSaw, seen } = await fromPage(
          `fetch POST 127.0.0.1:${port}/ X-Amz-Target ListTables, made-up SigV4`,
          async (url) => {
            try {
              const response = await fetch(url, {
                method: 'POST',
                headers: {
                  'content-type': 'application/x-amz-json-1.0',
                  'x-amz-target': 'DynamoDB_20120810.ListTables',
                  'x-amz-date': '20260101T000000Z',
                  authorization:
                    'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=' + '0'.repeat(64),
                },
                body: '{}',
              });
              return `read ${response.status}: ${(await response.text()).slice(0, 80)}`;
            } catch (error) {
              return `rejected: ${error.name}`;
            }
          },
          `http://127.0.0.1:${port}/`,
          2,
        );
        assert.equal(pageSaw, 'rejected: TypeError');
        assert.ok(!seen.some((r) => r.method === 'POST' && r.status !== undefined), 'the POST itself never went out');
        for (const r of seen) if (r.headers) assert.deepEqual(Object.keys(r.headers).filter((h) => h.startsWith('access-control-')), [], `${r.method}: no CORS header`);
        // From Node, without a browser's preflight: still no DynamoDB behind that port.
        const direct = await rawRequest(port, { method: 'POST', path: '/', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables', authorization: 'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00' }, body: '{}' });
        record(`Node: POST 127.0.0.1:${port}/ X-Amz-Target ListTables`, '-', `${direct.status} ${direct.code ?? ''}`.trim());
        assert.doesNotMatch(direct.text, /TableNames/, 'no ListTables answer');
      }
    });

    await t.test('a rebound name in the browser: the host serves nothing under it', async () => {
      const mark = network.mark();
      const response = await page.goto(`http://${REBOUND_NAME}:${server.port}/`);
      const seen = await network.since(mark);
      record(`navigate to http://${REBOUND_NAME}:PORT/`, `status ${response.status()}`, seen.map((r) => `${r.method} ${r.status}`).join('; '));
      assert.equal(response.status(), 421);
      assert.equal(JSON.parse(await response.text()).error.code, 'HOST_NOT_ALLOWED');
    });

    assert.deepEqual(network.all().filter((r) => r.headers && Object.keys(r.headers).some((h) => h.startsWith('access-control-'))), [], 'no answer to the hostile page carried a CORS header');
    await page.close();

    const policy = expectedPolicy();
    const items = `/api/items?table=${TABLE}`;
    const host = `127.0.0.1:${server.port}`;
    /** A request from Node; records it and checks status, code and the security headers. */
    async function fromNode(name, request, status, code) {
      const answer = await rawRequest(server.port, request);
      record(`Node: ${name}`, '-', `${answer.status} ${answer.code ?? ''}`.trim());
      assert.equal(answer.status, status, `${name}: ${answer.text.slice(0, 300)}`);
      if (code) assert.equal(answer.code, code, `${name}: ${answer.text.slice(0, 300)}`);
      assertSecurityHeaders(name, answer.headers, policy);
      return answer;
    }

    await t.test('from Node: a rebound Host, a foreign Origin, Sec-Fetch-Site, tokens, content type', async () => {
      const token = { [TOKEN_HEADER]: server.token };
      await fromNode(`GET /api/items, Host: ${REBOUND_NAME}:PORT, with the token`, { path: items, headers: { host: `${REBOUND_NAME}:${server.port}`, ...token } }, 421, 'HOST_NOT_ALLOWED');
      await fromNode(`GET /, Host: ${REBOUND_NAME}:PORT`, { path: '/', headers: { host: `${REBOUND_NAME}:${server.port}` } }, 421, 'HOST_NOT_ALLOWED');
      await fromNode('GET /api/items, Host: 127.0.0.1 on another port', { path: items, headers: { host: `127.0.0.1:${server.port + 1}`, ...token } }, 421, 'HOST_NOT_ALLOWED');
      await fromNode('GET /api/items, Origin: https://evil.example, with the token', { path: items, headers: { origin: 'https://evil.example', ...token } }, 403, 'CROSS_ORIGIN_REFUSED');
      await fromNode(
        'POST /api/upload octet-stream, Origin: https://evil.example, with the token',
        { method: 'POST', path: `/api/upload?table=${TABLE}`, headers: { origin: 'https://evil.example', 'content-type': 'application/octet-stream', ...token }, body: hostile.body },
        403,
        'CROSS_ORIGIN_REFUSED',
      );
      await fromNode('GET /api/items, Origin: http://127.0.0.1:PORT+1, with the token', { path: items, headers: { origin: `http://127.0.0.1:${server.port + 1}`, ...token } }, 403, 'CROSS_ORIGIN_REFUSED');
      await fromNode('GET /api/items, Sec-Fetch-Site: cross-site, with the token', { path: items, headers: { 'sec-fetch-site': 'cross-site', ...token } }, 403, 'CROSS_ORIGIN_REFUSED');
      await fromNode('GET /api/items, Sec-Fetch-Site: same-site, with the token', { path: items, headers: { 'sec-fetch-site': 'same-site', ...token } }, 403, 'CROSS_ORIGIN_REFUSED');
      await fromNode('GET /api/items, no token', { path: items }, 401, 'TOKEN_REQUIRED');
      await fromNode('GET /api/items, a wrong token', { path: items, headers: { [TOKEN_HEADER]: `${server.token.slice(0, -1)}${server.token.endsWith('A') ? 'B' : 'A'}` } }, 401, 'TOKEN_INVALID');
      await fromNode('DELETE /api/item, no token', { method: 'DELETE', path: `/api/item?table=${TABLE}&key=${keyParam(VICTIM)}` }, 401, 'TOKEN_REQUIRED');
      await fromNode(
        'POST /api/upload text/plain, same origin, with the token',
        { method: 'POST', path: `/api/upload?table=${TABLE}`, headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'content-type': 'text/plain', ...token }, body: hostile.body },
        415,
        'CONTENT_TYPE_UNSUPPORTED',
      );
      const preflight = await fromNode(
        'OPTIONS /api/upload preflight from https://evil.example',
        { method: 'OPTIONS', path: `/api/upload?table=${TABLE}`, headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': `content-type,${TOKEN_HEADER}` } },
        403,
        'CROSS_ORIGIN_REFUSED',
      );
      assert.equal(preflight.headers['access-control-allow-origin'], undefined);
      // The same requests as the page sends them are answered, with the same headers.
      await fromNode('GET /api/items as the page sends it', { path: items, headers: { origin: `http://${host}`, 'sec-fetch-site': 'same-origin', ...token } }, 200);
      await fromNode('GET /api/config, Host: localhost:PORT', { path: '/api/config', headers: { host: `localhost:${server.port}`, ...token } }, 200);
      await fromNode('GET / (the page)', { path: '/' }, 200);
      await fromNode('GET /js/app.js', { path: '/js/app.js' }, 200);
    });

    await t.test('the table is byte for byte what it was', async () => {
      assert.deepEqual(await snapshot(server), before);
    });

    await t.test('the host\'s own page, at its link, still lists the items and uploads', async () => {
      const own = await openPage(browser, server);
      assert.equal(await own.getAttribute('#items', 'data-count'), '2');
      assert.deepEqual(await own.$$eval('[data-testid="item-row"]', (rows) => rows.map((row) => row.dataset.key)), ['victim-chunked', VICTIM]);
      await loadSample(own, MB, 'uploaded-after-the-attacks');
      await own.click('#upload');
      await own.waitForSelector('#verify[data-state="verified"]', { timeout: 120_000 });
      assert.equal(await errorShown(own), null);
      assert.deepEqual(own.problems, [], 'no page error, console error or CSP violation');
      record('the host\'s page at its link: list, upload, read back', 'verified', '200');
    });

    await t.test('control: the hostile body, sent with the token, is a real overwrite', async () => {
      const answer = await postUpload(server, TABLE, hostile.body);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const item = await (await apiFetch(server, `/api/item?table=${TABLE}&key=${keyParam(VICTIM)}`)).json();
      assert.equal(item.x?.S, PLANTED, 'so every refusal above is what kept it out');
    });
  } finally {
    const width = Math.max('attempt'.length, ...outcomes.map((o) => o.attempt.length));
    const pageWidth = Math.max('the page saw'.length, ...outcomes.map((o) => String(o.pageSaw).length));
    const lines = [
      `${'attempt'.padEnd(width)} | ${'the page saw'.padEnd(pageWidth)} | the host answered`,
      `${'-'.repeat(width)}-|-${'-'.repeat(pageWidth)}-|-${'-'.repeat(17)}`,
      ...outcomes.map((o) => `${o.attempt.padEnd(width)} | ${String(o.pageSaw).padEnd(pageWidth)} | ${o.hostAnswered}`),
    ];
    console.log(`HOSTILE attempts (host on 127.0.0.1:${server.port}, attacker page at ${attackerOrigin})\n${lines.join('\n')}`);
    await browser.close();
    await new Promise((resolve) => attackerServer.close(resolve));
    await server.stop();
  }
});
