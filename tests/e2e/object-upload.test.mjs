// Uploads straight to S3 (docs/API.md, "Uploads straight to S3") against a
// real `dynaslice serve` and a real S3 server (SeaweedFS), as a browser
// would make them but from Node, so every part can be forged: the server
// grants a presigned PUT inside the caller's key scope with the frame's
// length and CRC-32 signed in, the client PUTs the frame to S3 itself, and
// the commit checks the object (length, frame, digest) before the parent
// naming it is written.
//
// - A 30 MB file goes through and reads back byte for byte, from one object
//   at the granted key; the grant is used once.
// - A grant or commit body over 4 MiB: 413 BODY_TOO_LARGE.
// - Refused, with nothing committed and no object left: a key outside the
//   caller's scope (no URL at all), a body with another checksum, a body
//   longer than granted, an object that is not a frame, a frame whose digest
//   does not match its bytes.
// - The embedded store (`--s3-bucket` with no endpoint, as `npm start` runs
//   it) is served on a port of its own: CORS for the page's origin only,
//   requests signed with this launch's key (the placeholder key refused);
//   a 12 MB upload through it from Node, and a 20 MB one from the page in
//   Chromium, read back byte for byte.
// - In Chromium, the page uploads a 100 MB file straight to S3 (the bucket's
//   CORS lets the page's origin PUT) and reads it back identical; from the
//   page, another user's scope, a wrong checksum and a larger body are
//   refused, and nothing is committed.
//
// Every expected byte comes from the data generated here; the CRC-32 from
// Node's zlib. Needs the `weed` binary (scripts/setup.mjs) and the host.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { ListMultipartUploadsCommand, ListObjectsV2Command, PutBucketCorsCommand, S3Client } from '@aws-sdk/client-s3';
import { chunkData, split } from 'dynaslice';
import { itemToWire } from '../../www/js/wire.js';
import { startSeaweedFS } from '../js/support/seaweedfs.mjs';
import { launch, openPage } from './support/browser.mjs';
import { apiFetch, getConfig, keyParam, startServer } from './support/server.mjs';

const KB = 1 << 10;
const MB = 1 << 20;
const BUCKET = 'media';
const TABLE = 'dynaslice-demo';
const SCOPE = 'alice/';

let weed;
let s3;
let server;

before(async () => {
  weed = await startSeaweedFS();
  s3 = weed.client();
  server = await startServer(['--s3-bucket', BUCKET, '--s3-endpoint', weed.endpoint, '--key-prefix', SCOPE, '--max-item-bytes', String(160 * MB)]);
  // What a deployment sets on its bucket: the page's origin may PUT.
  const rule = { AllowedOrigins: [server.url], AllowedMethods: ['PUT'], AllowedHeaders: ['*'], ExposeHeaders: ['ETag'] };
  await s3.send(new PutBucketCorsCommand({ Bucket: BUCKET, CORSConfiguration: { CORSRules: [rule] } }));
});

after(async () => {
  await server?.stop();
  s3?.destroy();
  await weed?.stop();
});

/** The frame and the parent (no manifest) of `bytes` as the binary attribute `data` of `pk`, split with the npm package. */
function frameOf(pk, bytes) {
  const result = split({ pk: { S: pk }, name: { S: 'clip.bin' }, data: { B: bytes } }, { table: TABLE, key: [{ name: 'pk', type: 'S' }], codec: 'none' });
  const { _ds: _, ...parent } = result.parent;
  return { parent, frame: Buffer.concat(result.chunks.map((c) => chunkData(c))) };
}

const b64crc = (bytes) => {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc32(bytes));
  return out.toString('base64');
};

async function post(path, body, at = server) {
  const response = await apiFetch(at, `/api/upload/${path}?table=${TABLE}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function grant(parent, frame, claim = {}, at = server) {
  return post('object', { parent: itemToWire(parent), attribute: 'data', size: claim.size ?? frame.length, crc32: claim.crc32 ?? b64crc(frame) }, at);
}

/** The presigned PUT, sent as a browser sends it: every signed header but those the browser sets itself. */
async function putObject(granted, body) {
  const headers = Object.fromEntries(Object.entries(granted.headers).filter(([name]) => !['content-length', 'host'].includes(name.toLowerCase())));
  try {
    const response = await fetch(granted.url, { method: granted.method, headers, body });
    return response.status;
  } catch (error) {
    // A server may refuse a body longer than declared by closing the connection.
    return `failed: ${error.cause?.code ?? error.message}`;
  }
}

async function objectKeys() {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (page.Contents ?? []).map((o) => o.Key).sort();
}

async function stored(pk, at = server) {
  const response = await apiFetch(at, `/api/item?table=${TABLE}&key=${keyParam(pk)}&attribute=data`);
  return response.status === 200 ? Buffer.from(await response.arrayBuffer()) : response.status;
}

describe('uploads straight to S3', () => {
  test('a 30 MB file: granted, PUT to S3, checked, committed, read back byte for byte', async () => {
    const bytes = randomBytes(30 * MB);
    const { parent, frame } = frameOf(`${SCOPE}clip`, bytes);
    const granted = await grant(parent, frame);
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    assert.ok(granted.body.key.startsWith(`dynaslice/${TABLE}/`), granted.body.key);
    // The length, the checksum and the condition are in the signature.
    const signed = new URL(granted.body.url).searchParams.get('X-Amz-SignedHeaders').split(';');
    for (const header of ['content-length', 'if-none-match', 'x-amz-checksum-crc32']) assert.ok(signed.includes(header), `${header} in ${signed}`);
    assert.equal(await putObject(granted.body, frame), 200);
    const committed = await post('object/commit', { version: granted.body.version });
    assert.equal(committed.status, 200, JSON.stringify(committed.body));
    assert.ok((await stored(`${SCOPE}clip`)).equals(bytes), 'the item reads back whole');
    assert.deepEqual(await objectKeys(), [granted.body.key], 'one object, at the granted key');
    const again = await post('object/commit', { version: granted.body.version });
    assert.equal(again.status, 404, 'a grant is used once');
    // The URL cannot replace the committed object: If-None-Match holds.
    assert.equal(await putObject(granted.body, frame), 412);
    assert.ok((await stored(`${SCOPE}clip`)).equals(bytes), 'a replayed commit changes nothing');
  });

  test('another user’s key scope gets no URL', async () => {
    const { parent, frame } = frameOf('bob/clip', randomBytes(MB));
    const granted = await grant(parent, frame);
    assert.equal(granted.status, 403, JSON.stringify(granted.body));
    assert.equal(granted.body.error.code, 'KEY_OUT_OF_SCOPE');
    assert.equal(granted.body.url, undefined);
  });

  test('a grant or commit body over 4 MiB is refused before it is read whole', async () => {
    const padding = 'x'.repeat(4 * MB + 1);
    for (const path of ['object', 'object/commit']) {
      const refused = await post(path, { parent: { pk: { S: `${SCOPE}big` } }, attribute: 'data', size: 1, crc32: 'AAAAAA==', padding });
      assert.equal(refused.status, 413, `${path}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error.code, 'BODY_TOO_LARGE');
    }
  });

  describe('refused, nothing committed, no object left', () => {
    /** Grant for `frame`, PUT `body` instead, commit: the commit's answer, the PUT's status. */
    async function attempt(pk, frame, body, claim) {
      const before = await objectKeys();
      const granted = await grant({ pk: { S: pk }, name: { S: 'clip.bin' } }, frame, claim);
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      const put = await putObject(granted.body, body);
      const committed = await post('object/commit', { version: granted.body.version });
      assert.equal(await stored(pk), 404, 'nothing committed');
      assert.deepEqual(await objectKeys(), before, 'no object left');
      const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
      assert.deepEqual(uploads.Uploads ?? [], []);
      return { put, committed };
    }

    test('a body with another checksum: S3 refuses it', async () => {
      const { frame } = frameOf(`${SCOPE}forged`, randomBytes(2 * MB));
      const other = Buffer.from(frame);
      other[other.length - 100] ^= 1;
      const { put, committed } = await attempt(`${SCOPE}forged`, frame, other);
      assert.equal(put, 400, 'S3 checks the signed CRC-32');
      assert.equal(committed.body.error.code, 'OBJECT_MISSING');
    });

    test('a body longer than granted: S3 refuses it', async () => {
      const { frame } = frameOf(`${SCOPE}longer`, randomBytes(2 * MB));
      const longer = Buffer.concat([frame, randomBytes(MB)]);
      const { put, committed } = await attempt(`${SCOPE}longer`, frame, longer, { crc32: b64crc(longer) });
      assert.notEqual(put, 200);
      assert.equal(committed.body.error.code, 'OBJECT_MISSING');
    });

    test('an object that is not a frame: stored by S3, refused and deleted by the commit', async () => {
      const junk = randomBytes(MB);
      const { put, committed } = await attempt(`${SCOPE}junk`, junk, junk);
      assert.equal(put, 200);
      assert.equal(committed.status, 400);
      assert.equal(committed.body.error.code, 'FRAME_BAD_MAGIC');
    });

    test('a frame whose bytes do not match its digest: refused and deleted', async () => {
      const { frame } = frameOf(`${SCOPE}damaged`, randomBytes(3 * MB));
      const damaged = Buffer.from(frame);
      damaged[damaged.length - 1000] ^= 0x40;
      const { put, committed } = await attempt(`${SCOPE}damaged`, damaged, damaged);
      assert.equal(put, 200);
      assert.equal(committed.status, 400);
      assert.match(committed.body.error.code, /^(DIGEST_MISMATCH|FRAME_MISMATCH)$/);
    });
  });
});

test('/api/config names the store the page uploads to', async () => {
  const config = await getConfig(server);
  assert.deepEqual(config.tables.find((t) => t.name === TABLE).s3, { bucket: BUCKET, thresholdBytes: MB });
});

describe('the embedded store, served beside the page (as npm start runs it)', () => {
  let local;
  before(async () => {
    local = await startServer(['--s3-bucket', BUCKET]);
  });
  after(async () => {
    await local?.stop();
  });

  test('on a port of its own, for the page’s origin only, signed with this launch’s key: a 12 MB upload goes through', async () => {
    assert.deepEqual((await getConfig(local)).tables.find((t) => t.name === TABLE).s3, { bucket: BUCKET, thresholdBytes: MB });
    const bytes = randomBytes(12 * MB);
    const { parent, frame } = frameOf('clip', bytes);
    const granted = await grant(parent, frame, {}, local);
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    const url = new URL(granted.body.url);
    assert.equal(url.hostname, '127.0.0.1');
    assert.notEqual(url.port, String(local.port), 'a port of its own');
    // CORS: the page's origin may PUT; another origin gets no grant of access.
    const preflight = (origin) =>
      fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'if-none-match,x-amz-checksum-crc32' } });
    const own = await preflight(local.url);
    assert.equal(own.headers.get('access-control-allow-origin'), local.url);
    assert.match(own.headers.get('access-control-allow-methods') ?? '', /PUT/);
    const foreign = await preflight('http://evil.example');
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    // Unsigned, or signed with the placeholder key every local server knows: refused.
    assert.equal((await fetch(`${url.origin}/${BUCKET}/${granted.body.key}`, { method: 'PUT', body: 'forged' })).status, 403);
    const placeholder = new S3Client({ endpoint: url.origin, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'dynaslice', secretAccessKey: 'dynaslice' } });
    await assert.rejects(placeholder.send(new ListObjectsV2Command({ Bucket: BUCKET })), (error) => error.$metadata?.httpStatusCode === 403);
    placeholder.destroy();
    assert.equal(await putObject(granted.body, frame), 200);
    const committed = await post('object/commit', { version: granted.body.version }, local);
    assert.equal(committed.status, 200, JSON.stringify(committed.body));
    assert.ok((await stored('clip', local)).equals(bytes), 'read back byte for byte');
    // The URL cannot replace the committed object with other bytes: refused
    // (412 or 400), or the connection closed on the body once the refusal went
    // (s3s answers before reading it).
    const replay = await putObject(granted.body, randomBytes(frame.length));
    assert.ok(replay === 412 || replay === 400 || /^failed: (EPIPE|ECONNRESET|UND_ERR_SOCKET)$/.test(replay), String(replay));
    assert.ok((await stored('clip', local)).equals(bytes), 'the object is unchanged');
  });

  test('in Chromium, the page sends a 20 MB file straight to it, or through the server when it cannot reach it, and reads each back identical', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dynaslice-s3-local-'));
    const browser = await launch();
    try {
      const page = await openPage(browser, local);
      const data = randomBytes(20 * MB);
      const file = join(dir, 'local.bin');
      writeFileSync(file, data);
      await page.fill('#key', 'local');
      await page.setInputFiles('#file', file);
      await page.waitForSelector('#plan[data-state="ready"]', { timeout: 120_000 });
      await page.click('#upload');
      await page.waitForSelector('#verify[data-state="verified"]', { timeout: 300_000 });
      assert.equal(await page.getAttribute('body', 'data-route'), 's3', 'the page sent the frame to the embedded S3 store');
      assert.ok((await stored('local', local)).equals(data), 'read back identical');
      assert.deepEqual(page.problems, [], 'no error in the page');

      // A browser that cannot reach the store (a forwarded port, a proxy):
      // the page sends the item through the server instead, and says so.
      const probe = frameOf('probe', randomBytes(600 * KB));
      const probed = await grant(probe.parent, probe.frame, {}, local);
      assert.equal(probed.status, 200, JSON.stringify(probed.body));
      const s3Origin = new URL(probed.body.url).origin;
      let refused = 0;
      await page.route(
        (url) => url.origin === s3Origin,
        (route) => {
          refused += 1;
          return route.abort('connectionrefused');
        },
      );
      const other = randomBytes(6 * MB);
      const otherFile = join(dir, 'other.bin');
      writeFileSync(otherFile, other);
      await page.fill('#key', 'unreachable');
      await page.setInputFiles('#file', otherFile);
      await page.waitForSelector('#plan[data-state="ready"]', { timeout: 120_000 });
      await page.click('#upload');
      await page.waitForSelector('#verify[data-state="verified"]', { timeout: 300_000 });
      assert.ok(refused > 0, 'the page tried the store first');
      assert.equal(await page.getAttribute('body', 'data-route'), 'server', 'the server path after the store did not answer');
      assert.ok((await stored('unreachable', local)).equals(other), 'read back identical');
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the page, in Chromium', () => {
  test('a 100 MB file goes straight to S3 and reads back identical; forged uploads are refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dynaslice-s3-page-'));
    const browser = await launch();
    try {
      const page = await openPage(browser, server);
      const data = randomBytes(100 * MB);
      const file = join(dir, 'film.bin');
      writeFileSync(file, data);
      const before = await objectKeys();
      await page.fill('#key', `${SCOPE}film`);
      await page.setInputFiles('#file', file);
      await page.waitForSelector('#plan[data-state="ready"]', { timeout: 120_000 });
      await page.click('#upload');
      await page.waitForSelector('#verify[data-state="verified"]', { timeout: 300_000 });
      assert.equal(await page.getAttribute('body', 'data-route'), 's3', 'the page sent the frame to S3, not to the server');
      assert.ok((await stored(`${SCOPE}film`)).equals(data), 'read back identical');
      const added = (await objectKeys()).filter((k) => !before.includes(k));
      assert.equal(added.length, 1, 'one object');
      await page.waitForSelector('#preview-box:not([hidden])');
      assert.deepEqual(page.problems, [], 'the page’s own upload, read back and preview: no error');

      // Forged from the page itself, with its own API module.
      const frame = randomBytes(MB);
      const refusals = await page.evaluate(
        async ({ scope, frame, crc, other }) => {
          const api = await import('/js/api.js');
          const bytes = (numbers) => new Blob([new Uint8Array(numbers)]);
          const code = async (run) => {
            try {
              await run();
              return 'accepted';
            } catch (error) {
              return error.code ?? String(error);
            }
          };
          const grant = (pk, size, crc32) =>
            api.grantObject('dynaslice-demo', { parent: { pk: { S: pk } }, attribute: 'data', size, crc32 });
          const out = {};
          out.scope = await code(() => grant('bob/film', frame.length, crc));
          // A wrong checksum: granted for one frame, another of its length sent.
          const wrong = await grant(`${scope}wrong`, frame.length, crc);
          out.wrongPut = await code(() => api.putObject(wrong, bytes(other), () => {}).done);
          out.wrongCommit = await code(() => api.commitObject('dynaslice-demo', wrong.version));
          // A larger body than granted.
          const larger = await grant(`${scope}larger`, frame.length, crc);
          out.largerPut = await code(() => api.putObject(larger, bytes([...frame, ...frame]), () => {}).done);
          out.largerCommit = await code(() => api.commitObject('dynaslice-demo', larger.version));
          return out;
        },
        { scope: SCOPE, frame: [...frame], crc: b64crc(frame), other: [...randomBytes(MB)] },
      );
      assert.deepEqual(refusals, {
        scope: 'KEY_OUT_OF_SCOPE',
        wrongPut: 'S3_ERROR',
        wrongCommit: 'OBJECT_MISSING',
        largerPut: refusals.largerPut === 'NETWORK' ? 'NETWORK' : 'S3_ERROR',
        largerCommit: 'OBJECT_MISSING',
      });
      assert.equal(await stored(`${SCOPE}wrong`), 404);
      assert.equal(await stored(`${SCOPE}larger`), 404);
      assert.deepEqual((await objectKeys()).filter((k) => !before.includes(k)), added, 'no object of a refused upload');
      // The browser logs each refused request, and nothing else.
      assert.ok(page.problems.every((p) => /status of 4\d\d/.test(p)), page.problems.join('\n'));
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
