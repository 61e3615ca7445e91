// Payloads in S3 (docs/FORMAT.md §5a) through both implementations, against
// Amazon's DynamoDB Local and a real S3 server (SeaweedFS): the npm
// package's driver (`dynaslice/dynamodb` with its `s3` option and
// @aws-sdk/client-s3) and the Rust host (the `dynaslice` CLI with
// `--s3-endpoint`). What either writes, the other reads back exactly.
//
// 1. Round trips of 1 KB to 200 MB: driver `putStream` → driver `getItem`
//    and `getStream`, and host `get --out`; host `put --file` → driver
//    `getItem`/`getStream`. Each payload is one object under the table's
//    prefix, and no multipart upload is left open.
// 2. A payload of unknown length (a stream with no size) goes to S3 once it
//    passes the threshold (a short one stays in DynamoDB), and so does an
//    item written whole (driver `putItem`, host `put --json`).
// 3. Overwrites and deletes by the other side remove the replaced object.
// 4. Hostile manifests: another item's manifest copied onto a parent reads
//    as OBJECT_FOREIGN, and deleting the forged item leaves the victim's
//    object. A changed object reads as OBJECT_MISSING. Without the `s3`
//    option an S3 item reads as OBJECT_STORE_NOT_CONFIGURED.
// 5. `gcObjects`: an orphan object and a stale upload go; a foreign key and
//    a foreign upload under the prefix, and every live object, stay.
//
// Every comparison is with the data generated here. Needs Java, the `weed`
// binary (scripts/setup.mjs) and the host binary (as server.mjs builds it).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateTableCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { deleteItem, gcObjects, getItem, getStream, putItem, putStream } from 'dynaslice/dynamodb';
import { startDynamoDBLocal } from '../js/support/dynamodb-local.mjs';
import { startSeaweedFS } from '../js/support/seaweedfs.mjs';
import { buildHost, targetDir } from './support/server.mjs';

const KB = 1024;
const MB = 1024 * KB;
const BUCKET = 'media';
const TABLE = 'docs';
const PREFIX = `dynaslice/${TABLE}/`;
/** Low enough that even the 1 KB payload goes to S3. */
const THRESHOLD = 1024;
const binary = process.env.DYNASLICE_BIN || join(targetDir, 'debug', 'dynaslice');

let dynamo;
let weed;
let client;
let s3;
let dir;

before(async () => {
  buildHost();
  dir = mkdtempSync(join(tmpdir(), 'dynaslice-objects-'));
  [dynamo, weed] = await Promise.all([startDynamoDBLocal(), startSeaweedFS()]);
  client = dynamo.client();
  s3 = weed.client();
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  for (const name of [TABLE, `${TABLE}_chunks`]) {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
  }
});

after(async () => {
  client?.destroy();
  s3?.destroy();
  await Promise.all([dynamo?.stop(), weed?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The driver's options for the table, payloads of THRESHOLD bytes or more in S3. */
function options(extra = {}) {
  return {
    table: TABLE,
    key: [{ name: 'pk', type: 'S' }],
    indexKeys: [],
    ttl: null,
    maxBytes: 256 * MB,
    s3: { client: s3, bucket: BUCKET, thresholdBytes: THRESHOLD },
    ...extra,
  };
}

/** Runs the host against both servers; resolves to its exit code, stdout and stderr, never a panic. */
function host(args) {
  const { DYNASLICE_ENDPOINT: _, DYNASLICE_DATA: __, DYNASLICE_S3_BUCKET: ___, ...env } = process.env;
  const flags = ['--endpoint', dynamo.endpoint, '--s3-bucket', BUCKET, '--s3-endpoint', weed.endpoint, '--s3-threshold', String(THRESHOLD)];
  const child = spawn(binary, [...flags, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout = [];
  let stderr = '';
  child.stdout.on('data', (data) => stdout.push(data));
  child.stderr.setEncoding('utf8').on('data', (data) => (stderr += data));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (/panicked|backtrace/.test(stderr)) reject(new Error(`dynaslice ${args.join(' ')} panicked: ${stderr}`));
      else resolve({ code: code ?? signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr });
    });
  });
}

async function hostOk(args) {
  const run = await host(args);
  assert.equal(run.code, 0, `dynaslice ${args.join(' ')} failed (${run.code}): ${run.stderr}${run.stdout.slice(0, 2000)}`);
  return run;
}

async function hostPutFile(pk, bytes, flags = []) {
  const file = join(dir, `in-${Math.random().toString(36).slice(2)}.bin`);
  writeFileSync(file, bytes);
  try {
    return await hostOk(['put', '-t', TABLE, '-k', `pk=${pk}`, '--file', file, ...flags]);
  } finally {
    rmSync(file);
  }
}

async function hostGetFile(pk) {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.bin`);
  await hostOk(['get', '-t', TABLE, '-k', `pk=${pk}`, '--out', out]);
  const bytes = readFileSync(out);
  rmSync(out);
  return bytes;
}

/** Every object key under the table's prefix. */
async function objectKeys() {
  const keys = [];
  let ContinuationToken;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: PREFIX, ContinuationToken }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key));
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
  return keys.sort();
}

async function openUploads() {
  const page = await s3.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: PREFIX }));
  return (page.Uploads ?? []).map((u) => u.Key);
}

/** Object keys of the item `pk` (its prefix: the key percent-encoded as FORMAT §5a says; here plain). */
async function objectsOf(pk) {
  return (await objectKeys()).filter((k) => k.startsWith(`${PREFIX}${pk}/`));
}

const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');

async function streamBytes(stream) {
  const parts = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts);
}

/** Random bytes, or text that compresses, of `size`. */
function payload(size, compressible) {
  if (!compressible) return randomBytes(size);
  const line = Buffer.from(`dynaslice ${size} the quick brown fox jumps over the lazy dog ${randomBytes(4).toString('hex')}\n`);
  return Buffer.alloc(size, line);
}

async function driverGetBytes(pk) {
  const { item } = await getItem(client, { pk: { S: pk } }, options());
  assert.ok(item, `no item ${pk}`);
  return Buffer.from(item.data.B);
}

const SIZES = [
  ['1 KB', KB, false],
  ['300 KB', 300 * KB, true],
  ['3 MB', 3 * MB, false],
  ['20 MB', 20 * MB, true],
  ['200 MB', 200 * MB, false],
];

describe('round trips', () => {
  for (const [name, size, compressible] of SIZES) {
    test(`${name}: driver putStream → driver and host read it byte for byte`, async () => {
      const pk = `driver-${size}`;
      const bytes = payload(size, compressible);
      const codec = size >= 100 * MB ? 'none' : undefined;
      const put = await putStream(client, new Blob([bytes]), { pk: { S: pk } }, options({ attribute: 'data', codec }));
      assert.equal(put.manifest.object?.bucket, BUCKET, 'the payload is in S3');
      assert.deepEqual(await objectsOf(pk), [put.manifest.object.key], 'one object, at the key the manifest names');
      assert.equal(sha(await streamBytes(await getStream(client, { pk: { S: pk } }, options({ attribute: 'data' })))), sha(bytes));
      if (size < 100 * MB) assert.ok((await driverGetBytes(pk)).equals(bytes), 'getItem');
      assert.equal(sha(await hostGetFile(pk)), sha(bytes), 'host get --out');
      assert.deepEqual(await openUploads(), []);
    });

    test(`${name}: host put --file → driver reads it byte for byte`, async () => {
      const pk = `host-${size}`;
      const bytes = payload(size, compressible);
      await hostPutFile(pk, bytes, size >= 100 * MB ? ['--codec', 'none'] : []);
      assert.equal((await objectsOf(pk)).length, 1, 'one object');
      assert.equal(sha(await streamBytes(await getStream(client, { pk: { S: pk } }, options({ attribute: 'data' })))), sha(bytes));
      if (size < 100 * MB) assert.ok((await driverGetBytes(pk)).equals(bytes), 'getItem');
    });
  }

  test('a stream of unknown length goes to S3 once it passes the threshold, and reads back', async () => {
    const unsized = (bytes) => new ReadableStream({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 256 * KB) controller.enqueue(new Uint8Array(bytes.subarray(at, at + 256 * KB)));
        controller.close();
      },
    });
    const bytes = payload(6 * MB + 123, false);
    const put = await putStream(client, unsized(bytes), { pk: { S: 'unknown-length' } }, options({ attribute: 'data' }));
    assert.ok(put.manifest.object, 'in S3');
    assert.ok((await hostGetFile('unknown-length')).equals(bytes));
    // One that ends below the threshold is held, then stays in DynamoDB.
    const short = payload(700, false); // THRESHOLD is 1 KiB here
    const small = await putStream(client, unsized(short), { pk: { S: 'unknown-short' } }, options({ attribute: 'data' }));
    assert.equal(small.manifest?.object, undefined, 'not in S3');
    assert.deepEqual(await objectsOf('unknown-short'), []);
    assert.ok((await hostGetFile('unknown-short')).equals(short));
  });
});

describe('items written whole', () => {
  test('driver putItem and host put --json send an item over the threshold to S3 in one frame; the other side reads it', async () => {
    const a = randomBytes(3 * MB);
    const b = payload(2 * MB, true);
    const item = { pk: { S: 'whole-driver' }, a: { B: a }, b: { B: b }, title: { S: 'two large attributes' } };
    const put = await putItem(client, item, options());
    assert.equal(put.manifest.object?.bucket, BUCKET, 'in S3');
    assert.equal(put.manifest.chunkCount, 0, 'no chunk');
    assert.deepEqual(await objectsOf('whole-driver'), [put.manifest.object.key]);
    const got = JSON.parse((await hostOk(['get', '-t', TABLE, '-k', 'pk=whole-driver'])).stdout);
    assert.equal(got.a.B, a.toString('base64'));
    assert.equal(got.b.B, b.toString('base64'));
    assert.equal(got.title.S, item.title.S);

    const text = randomBytes(1536 * KB).toString('hex');
    const doc = join(dir, 'whole.json');
    writeFileSync(doc, JSON.stringify({ body: { S: text }, n: { N: '7' } }));
    await hostOk(['put', '-t', TABLE, '-k', 'pk=whole-host', '--json', `@${doc}`]);
    rmSync(doc);
    assert.equal((await objectsOf('whole-host')).length, 1, 'one object');
    const { item: back } = await getItem(client, { pk: { S: 'whole-host' } }, options());
    assert.equal(back.body.S, text);
    assert.equal(back.n.N, '7');
    // The driver overwrites the host's item: its object goes.
    const replaced = (await objectsOf('whole-host'))[0];
    await putItem(client, { pk: { S: 'whole-host' }, body: { S: text.slice(1) } }, options());
    const now = await objectsOf('whole-host');
    assert.equal(now.length, 1);
    assert.notEqual(now[0], replaced);
    assert.deepEqual(await openUploads(), []);
  });
});

describe('overwrites and deletes by the other side', () => {
  test('a host overwrite of a driver item removes the replaced object; a driver delete removes the host object', async () => {
    const first = payload(2 * MB, false);
    const put = await putStream(client, new Blob([first]), { pk: { S: 'life' } }, options({ attribute: 'data' }));
    const second = payload(3 * MB, false);
    await hostPutFile('life', second);
    const keys = await objectsOf('life');
    assert.equal(keys.length, 1);
    assert.notEqual(keys[0], put.manifest.object.key, 'the replaced version’s object is gone');
    assert.ok((await driverGetBytes('life')).equals(second));
    const deleted = await deleteItem(client, { pk: { S: 'life' } }, options());
    assert.equal(deleted.deleted, true);
    assert.equal(deleted.objectDeleted, true);
    assert.deepEqual(await objectsOf('life'), []);
    assert.equal((await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'life' } } }))).Item, undefined);
  });

  test('a driver overwrite of a host item removes the replaced object; host rm removes the driver object', async () => {
    await hostPutFile('life2', payload(2 * MB, false));
    const [old] = await objectsOf('life2');
    const next = payload(KB * 5, false);
    const put = await putStream(client, new Blob([next]), { pk: { S: 'life2' } }, options({ attribute: 'data' }));
    assert.deepEqual(await objectsOf('life2'), [put.manifest.object.key]);
    assert.notEqual(put.manifest.object.key, old);
    await hostOk(['rm', '-t', TABLE, '-k', 'pk=life2']);
    assert.deepEqual(await objectsOf('life2'), []);
  });
});

describe('hostile data', () => {
  test('another item’s manifest on a parent is OBJECT_FOREIGN, and deleting it keeps the victim’s object', async () => {
    const victim = payload(2 * MB, false);
    const put = await putStream(client, new Blob([victim]), { pk: { S: 'victim' } }, options({ attribute: 'data' }));
    const { Item } = await client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: 'victim' } }, ConsistentRead: true }));
    await client.send(new PutItemCommand({ TableName: TABLE, Item: { ...Item, pk: { S: 'forged' } } }));
    await assert.rejects(getItem(client, { pk: { S: 'forged' } }, options()), { code: 'OBJECT_FOREIGN' });
    const refused = await host(['get', '-t', TABLE, '-k', 'pk=forged', '--out', join(dir, 'forged.bin')]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /OBJECT_FOREIGN/);
    await deleteItem(client, { pk: { S: 'forged' } }, options());
    assert.deepEqual(await objectsOf('victim'), [put.manifest.object.key]);
    assert.ok((await driverGetBytes('victim')).equals(victim));
  });

  test('a changed object is OBJECT_MISSING; without the s3 option an S3 item is OBJECT_STORE_NOT_CONFIGURED', async () => {
    const put = await putStream(client, new Blob([payload(2 * MB, false)]), { pk: { S: 'changed' } }, options({ attribute: 'data' }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: put.manifest.object.key, Body: payload(2 * MB, false) }));
    await assert.rejects(getItem(client, { pk: { S: 'changed' } }, options()), { code: 'OBJECT_MISSING' });
    const { s3: _, ...without } = options();
    await assert.rejects(getItem(client, { pk: { S: 'changed' } }, without), { code: 'OBJECT_STORE_NOT_CONFIGURED' });
  });

  test('an s3 option without a client, or with a bucket S3 refuses, is OPTIONS_INVALID', async () => {
    await assert.rejects(getItem(client, { pk: { S: 'x' } }, options({ s3: { bucket: BUCKET } })), { code: 'OPTIONS_INVALID' });
    await assert.rejects(getItem(client, { pk: { S: 'x' } }, options({ s3: { client: s3, bucket: 'No_Such' } })), { code: 'OPTIONS_INVALID' });
  });
});

describe('gcObjects', () => {
  test('deletes orphans and stale uploads past the grace; keeps live objects and foreign keys', async () => {
    const live = payload(2 * MB, false);
    await putStream(client, new Blob([live]), { pk: { S: 'kept' } }, options({ attribute: 'data' }));
    // An orphan: the key of a version no parent names (as a crashed writer leaves).
    const [liveKey] = await objectsOf('kept');
    const orphan = liveKey.slice(0, -1) + (liveKey.endsWith('0') ? '1' : '0');
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: orphan, Body: payload(KB, false) }));
    const foreign = `${PREFIX}not an item key`;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: foreign, Body: payload(KB, false) }));
    // Uploads: one at a key a writer would use, one at a key naming no item.
    const stale = liveKey.slice(0, -1) + (liveKey.endsWith('2') ? '3' : '2');
    await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: stale }));
    const foreignUpload = `${PREFIX}kept/stale`;
    await s3.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: foreignUpload }));
    const before = await objectKeys();

    const young = await gcObjects(client, options());
    assert.equal(young.deleted, 0, 'within the hour nothing goes');
    assert.deepEqual(await objectKeys(), before);

    const report = await gcObjects(client, options({ graceMs: 0 }));
    const after = await objectKeys();
    assert.ok(!after.includes(orphan), 'the orphan is gone');
    assert.ok(after.includes(foreign), 'a key naming no item is never touched');
    assert.ok(after.includes(liveKey), 'the live object stays');
    assert.equal(report.uploadsListed, true);
    assert.equal(report.uploadsAborted, 1);
    assert.deepEqual(await openUploads(), [foreignUpload], 'the stale upload is aborted, the foreign one kept');
    assert.ok((await driverGetBytes('kept')).equals(live));
    // Every item written above still reads (none of their objects went).
    assert.equal(after.length, before.length - 1);
  });
});
