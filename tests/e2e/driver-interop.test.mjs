// The two implementations of one stored format, against Amazon's DynamoDB
// Local: the Rust host (the `dynaslice` CLI) and the npm package's driver
// (`dynaslice/dynamodb`). What either writes, the other reads back exactly.
//
// In both layouts (a chunk table; the item collection, here under a number
// partition key), with keys holding `#`, `\` and non-ASCII text:
// 1. host `put` → driver `getItem`, and driver `putItem` / `putStream` →
//    host `get`: binary files of 1 KB, 300 KB, 3 MB and 20 MB (random bytes,
//    and compressible text so the codecs compress), and DynamoDB JSON
//    documents of the same sizes (nested maps and lists, numbers beyond
//    JavaScript's precision, unicode, empty values, string, number and
//    binary sets, nested binaries).
// 2. Every codec and both write modes, each way; the stored parent must name
//    the codec asked for.
// 3. An overwrite by the other side: the new item reads back whole (nothing
//    of the old one), and no chunk of the replaced version remains.
// 4. A delete by the other side: the table holds exactly what it held
//    before the item was written.
//
// Every comparison is with the data generated here, never with what the
// code under test reports. Needs Java (tests/js/support/dynamodb-local.mjs)
// and the host binary (built as tests/e2e/support/server.mjs builds it;
// DYNASLICE_BIN=<path> runs that binary instead). One server for the file.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { CreateTableCommand, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { itemSize } from 'dynaslice';
import { deleteItem, getItem, putItem, putStream } from 'dynaslice/dynamodb';
import { startDynamoDBLocal } from '../js/support/dynamodb-local.mjs';
import { prng } from '../js/support/documents.mjs';
import { buildHost, targetDir } from './support/server.mjs';

const KB = 1024;
const MB = 1024 * KB;
const ITEM_LIMIT = 409_600;
const SIZES = [
  ['1 KB', KB],
  ['300 KB', 300 * KB],
  ['3 MB', 3 * MB],
  ['20 MB', 20 * MB],
];
const CODECS = ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd'];
/** The codecs that compress as bytes arrive (docs/FORMAT.md §7, "Streaming"). */
const STREAM_CODECS = ['none', 'deflate', 'zlib', 'gzip'];

// As tests/e2e/support/server.mjs finds the host.
const binary = process.env.DYNASLICE_BIN || join(targetDir, 'debug', 'dynaslice');

let server;
let client;
let dir;

// ---------------------------------------------------------------------------
// Tables: each layout has a table for the round trips and one for overwrites
// and deletes, whose scans must stay small.

const LAYOUTS = [
  {
    name: 'chunk table',
    tables: { main: 'docs', life: 'life' },
    options: (table) => ({ table, key: [{ name: 'pk', type: 'S' }] }),
    chunkTable: (table) => `${table}_chunks`,
    key: (id) => ({ pk: { S: `files/Zoë#${id}` } }),
    async create(table) {
      await createTable(table, [['pk', 'S']]);
      await createTable(`${table}_chunks`, [['pk', 'S']]);
    },
  },
  {
    name: 'item collection',
    tables: { main: 'app', life: 'life_app' },
    options: (table) => ({
      table,
      key: [
        { name: 'tenant', type: 'N' },
        { name: 'doc', type: 'S' },
      ],
      layout: 'collection',
    }),
    chunkTable: (table) => table,
    key: (id) => ({ tenant: { N: '42' }, doc: { S: `inbox\\${id}#ü` } }),
    async create(table) {
      await createTable(table, [
        ['tenant', 'N'],
        ['doc', 'S'],
      ]);
    },
  },
];

before(async () => {
  buildHost();
  dir = mkdtempSync(join(tmpdir(), 'dynaslice-interop-'));
  server = await startDynamoDBLocal();
  client = server.client();
  for (const layout of LAYOUTS) for (const table of Object.values(layout.tables)) await layout.create(table);
});

after(async () => {
  client?.destroy();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function createTable(name, key) {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: key.map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
      KeySchema: key.map(([AttributeName], i) => ({ AttributeName, KeyType: i === 0 ? 'HASH' : 'RANGE' })),
    }),
  );
}

// ---------------------------------------------------------------------------
// The host

/**
 * Runs `dynaslice --endpoint <DynamoDB Local> ...args`; resolves to its exit
 * code, stdout (bytes) and stderr. Whatever happens, never a panic.
 */
function host(args) {
  const { DYNASLICE_ENDPOINT: _, DYNASLICE_DATA: __, ...env } = process.env;
  const child = spawn(binary, ['--endpoint', server.endpoint, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout = [];
  let stderr = '';
  child.stdout.on('data', (data) => stdout.push(data));
  child.stderr.setEncoding('utf8').on('data', (data) => (stderr += data));
  return new Promise((resolveRun, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (/panicked|backtrace/.test(stderr)) reject(new Error(`dynaslice ${args.join(' ')} panicked: ${stderr}`));
      else resolveRun({ code: code ?? signal, stdout: Buffer.concat(stdout), stderr });
    });
  });
}

/** Runs the host and asserts it succeeded. */
async function hostOk(args) {
  const run = await host(args);
  assert.equal(run.code, 0, `dynaslice ${args.join(' ')} failed (${run.code}): ${run.stderr}${run.stdout.toString('utf8').slice(0, 2000)}`);
  return run;
}

/** `-k name=value` for every key attribute, in the table's order. */
function keyArgs(options, key) {
  return options.key.flatMap(({ name }) => ['-k', `${name}=${Object.values(key[name])[0]}`]);
}

/** `dynaslice get` without `--out`: the item, as the DynamoDB JSON it prints. */
async function hostGetItem(options, key) {
  const run = await hostOk(['get', '-t', options.table, ...keyArgs(options, key)]);
  return fromHostJson(JSON.parse(run.stdout.toString('utf8')));
}

/** `dynaslice get --out`: the bytes of binary attribute `attribute`. */
async function hostGetFile(options, key, attribute = 'data') {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.bin`);
  await hostOk(['get', '-t', options.table, ...keyArgs(options, key), '--attribute', attribute, '--out', out, '--json']);
  const bytes = readFileSync(out);
  rmSync(out);
  return bytes;
}

/** `dynaslice put --json @file` (every codec; not streamed); resolves to its JSON report. */
async function hostPutItem(options, item, flags = []) {
  const file = join(dir, `item-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(toHostJson(item)));
  try {
    const run = await hostOk(['put', '-t', options.table, ...keyArgs(options, item), '--json', `@${file}`, '--output', 'json', ...flags]);
    return JSON.parse(run.stdout.toString('utf8'));
  } finally {
    rmSync(file);
  }
}

// ---------------------------------------------------------------------------
// Data

const LOG_WORDS = ['GET', 'PUT', 'POST', '/api/items', '/api/upload', 'status=200', 'status=404', 'user=zoë', 'user=åsa', 'latency_ms=', 'bytes=', 'cache=hit', 'cache=miss', 'region=eu-central-1'];

/** `size` bytes of log-like text: deflate makes it about 3.5 times smaller, snappy 2 times. */
function compressibleBytes(size, seed) {
  const rnd = prng(seed);
  const word = () => LOG_WORDS[Math.floor(rnd() * LOG_WORDS.length)];
  const out = Buffer.alloc(size, '\n');
  let at = 0;
  while (at < size) {
    const line = `2026-03-${String(1 + Math.floor(rnd() * 28)).padStart(2, '0')}T${Math.floor(rnd() * 86_400_000)} ${word()} ${word()} ${Math.floor(rnd() * 1e6).toString(36)} ${word()}${Math.floor(rnd() * 5000)}\n`;
    const written = out.write(line, at);
    if (written === 0) break; // a multi-byte character at the very end: the rest stays '\n'
    at += written;
  }
  return out;
}

const payloads = new Map();

/** The bytes of `kind` ('random' or 'compressible') and `size`, and a file holding them; made once. */
function payload(kind, size) {
  const id = `${kind}-${size}`;
  if (!payloads.has(id)) {
    const bytes = kind === 'random' ? randomBytes(size) : compressibleBytes(size, size);
    const file = join(dir, `${id}.bin`);
    writeFileSync(file, bytes);
    payloads.set(id, { bytes, file });
  }
  return payloads.get(id);
}

const CITIES = ['Zürich', 'München', 'Kraków', 'Göteborg', 'Ljubljana', '東京', 'Αθήνα', 'São Paulo'];
const PRODUCTS = ['espresso machine', 'Wörterbuch', '🎧 headphones', 'cast-iron pan', 'e-reader', 'thermos'];
const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'returned'];
const SENTENCES = [
  'Arrived two days early, well packed.',
  'Die Verpackung war beschädigt, der Inhalt zum Glück nicht.',
  'Très bon rapport qualité-prix, je recommande à 100 %.',
  'Działa bez zarzutu od pierwszego dnia.',
  '配送が早くて助かりました。',
  'Η ποιότητα είναι εξαιρετική για την τιμή.',
  'Five stars ★★★★★ — would buy again 👍',
  'The manual says "do not immerse", so I did not.',
];

/**
 * A DynamoDB JSON document (no key) of at least `bytes` bytes by DynamoDB's
 * count. Numbers are written as DynamoDB spells them, so attributes kept on
 * the parent (which DynamoDB stores and respells) compare as text too.
 */
function documentItem(bytes, seed) {
  const rnd = prng(seed);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const bytesOf = (n) => Uint8Array.from({ length: n }, () => Math.floor(rnd() * 256));
  const order = (i) => {
    const lines = Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, j) => ({
      M: {
        sku: { S: `SKU-${(seed * 7919 + i * 31 + j).toString(36).toUpperCase()}` },
        name: { S: pick(PRODUCTS) },
        qty: { N: String(1 + Math.floor(rnd() * 3)) },
        unitPrice: { N: String(Math.round(rnd() * 50_000) / 100) },
      },
    }));
    return {
      M: {
        id: { S: `ord-${seed}-${String(i).padStart(6, '0')}` },
        placedAt: { S: new Date(Date.UTC(2026, 0, 1) + Math.floor(rnd() * 3e10)).toISOString() },
        status: { S: pick(STATUSES) },
        total: { N: String(Math.round(rnd() * 1e7) / 100) },
        lines: { L: lines },
        shipping: { M: { city: { S: pick(CITIES) }, postcode: { S: String(10_000 + Math.floor(rnd() * 89_999)) }, express: { BOOL: rnd() < 0.2 } } },
        note: rnd() < 0.7 ? { NULL: true } : { S: `Bitte beim Nachbarn abgeben (${pick(CITIES)}) — merci! 📦` },
        tags: { SS: [...new Set(['web', pick(['promo', 'repeat', 'first']), `q${1 + Math.floor(rnd() * 4)}`])] },
        weights: { NS: [...new Set([String(Math.floor(rnd() * 100)), String(Math.round(rnd() * 1e4) / 1e3), '-1'])] },
        sig: { B: bytesOf(8) },
        review: { S: Array.from({ length: 8 + Math.floor(rnd() * 16) }, () => pick(SENTENCES)).join(' ') },
      },
    };
  };
  const item = {
    kind: { S: 'order-history' },
    'naïve name #1': { S: 'Zoë Ångström — 🚀 ∑ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u0000 end' },
    owner: {
      M: {
        since: { N: '2019' },
        vip: { BOOL: true },
        manager: { NULL: true },
        nickname: { S: '' },
        avatar: { B: new Uint8Array(0) },
        prefs: { M: {} },
        history: { L: [] },
      },
    },
    tags: { SS: ['web', 'ünïcödé', '🚀', 'a#b\\c'] },
    scores: { NS: ['12345678901234567890123456789012345678', '-0.000001', '3', '1000', '-99.5', '3.14159265358979323846264338327950288'] },
    digests: { BS: [bytesOf(16), bytesOf(32), Uint8Array.of(0)] },
    thumbnail: { B: bytesOf(64) },
    orders: { L: [] },
  };
  const orders = item.orders.L;
  let size = itemSize(item);
  while (size < bytes) {
    // Grow by batches, each measured alone (a list element costs 1 byte plus
    // its value), smaller near the goal: an order is about 1.5 KB, so the
    // document ends at most one order over.
    const length = Math.min(256, Math.max(1, Math.floor((bytes - size) / (4 * KB))));
    const batch = Array.from({ length }, (_, i) => order(orders.length + i));
    size += itemSize({ x: { L: batch } }) - itemSize({ x: { L: [] } });
    orders.push(...batch);
  }
  return item;
}

const documents = new Map();

/** The document of at least `size` bytes (made once), under `key`. */
function documentWith(key, size) {
  if (!documents.has(size)) documents.set(size, documentItem(size, size % 1_000_003));
  return { ...key, ...documents.get(size) };
}

// ---------------------------------------------------------------------------
// DynamoDB JSON: the host's (binaries in base64) and the comparison

/** A DynamoDB JSON item with binaries as base64 text, as the host reads it. */
function toHostJson(item) {
  const value = (v) => {
    const [[type, inner]] = Object.entries(v);
    if (type === 'B') return { B: Buffer.from(inner).toString('base64') };
    if (type === 'BS') return { BS: inner.map((b) => Buffer.from(b).toString('base64')) };
    if (type === 'L') return { L: inner.map(value) };
    if (type === 'M') return { M: toHostJson(inner) };
    return v;
  };
  return Object.fromEntries(Object.entries(item).map(([name, v]) => [name, value(v)]));
}

/** The host's DynamoDB JSON with its base64 binaries as bytes. */
function fromHostJson(item) {
  const bytes = (text) => {
    assert.equal(typeof text, 'string', 'the host prints binaries as base64 text');
    return new Uint8Array(Buffer.from(text, 'base64'));
  };
  const value = (v) => {
    const [[type, inner]] = Object.entries(v);
    if (type === 'B') return { B: bytes(inner) };
    if (type === 'BS') return { BS: inner.map(bytes) };
    if (type === 'L') return { L: inner.map(value) };
    if (type === 'M') return { M: fromHostJson(inner) };
    return v;
  };
  return Object.fromEntries(Object.entries(item).map(([name, v]) => [name, value(v)]));
}

/**
 * An item normalised for comparison: every binary a Buffer (it must be a
 * Uint8Array), set members sorted (DynamoDB keeps no set order), numbers
 * and strings exactly as given.
 */
function normalItem(item) {
  const bytes = (b) => {
    if (!(b instanceof Uint8Array)) assert.fail(`a binary is a Uint8Array, not ${Object.prototype.toString.call(b)}`);
    return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  };
  const value = (v) => {
    const entries = Object.entries(v);
    if (entries.length !== 1) assert.fail(`one type per value, not ${entries.map(([type]) => type).join(', ')}`);
    const [[type, inner]] = entries;
    switch (type) {
      case 'B':
        return { B: bytes(inner) };
      case 'BS':
        return { BS: inner.map(bytes).sort(Buffer.compare) };
      case 'SS':
      case 'NS':
        return { [type]: [...inner].sort() };
      case 'L':
        return { L: inner.map(value) };
      case 'M':
        return { M: normalItem(inner) };
      default:
        return { [type]: inner };
    }
  };
  return Object.fromEntries(Object.entries(item).map(([name, v]) => [name, value(v)]));
}

/** Where `a` and `b` first differ, briefly (a 20 MB diff helps nobody). */
function firstDifference(a, b, path = '') {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) {
    if (a.length !== b.length) return `${path}: ${a.length} bytes, expected ${b.length}`;
    const at = a.findIndex((byte, i) => byte !== b[i]);
    return `${path}: byte ${at} is ${a[at]}, expected ${b[at]}`;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    return `${path}: ${JSON.stringify(a)?.slice(0, 100)}, expected ${JSON.stringify(b)?.slice(0, 100)}`;
  }
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  for (const name of names) {
    if (!(name in a)) return `${path}.${name}: missing`;
    if (!(name in b)) return `${path}.${name}: not expected`;
    if (!isDeepStrictEqual(a[name], b[name])) return firstDifference(a[name], b[name], `${path}.${name}`);
  }
  return `${path}: differs`;
}

/** `actual` is exactly `expected` (both DynamoDB JSON, binaries as Uint8Array). */
function assertSameItem(actual, expected, what) {
  assert.ok(actual, `${what}: an item was read`);
  const got = normalItem(actual);
  const want = normalItem(expected);
  if (!isDeepStrictEqual(got, want)) assert.fail(`${what}: ${firstDifference(got, want)}`);
}

/** `actual` bytes are exactly `expected`. */
function assertSameBytes(actual, expected, what) {
  const got = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  if (!got.equals(expected)) assert.fail(`${what}: ${firstDifference(got, expected)}`);
}

// ---------------------------------------------------------------------------
// What is stored

/** The stored parent, read directly. */
async function storedParent(options, key) {
  const { Item } = await client.send(new GetItemCommand({ TableName: options.table, Key: key, ConsistentRead: true }));
  return Item;
}

/**
 * How the item with `key` is stored, read directly: split exactly when it
 * is over DynamoDB's limit (docs/FORMAT.md §7), a streamed value always into
 * chunks (§7, "Streaming"); in at least `minChunks` chunks; in the codec
 * asked for. Returns the manifest (`_ds`), if any.
 */
async function assertStored(options, key, { itemBytes, streamed = false, minChunks = 0, codec }) {
  const parent = await storedParent(options, key);
  assert.ok(parent, 'the parent is stored');
  const manifest = parent._ds?.M;
  if (streamed) assert.ok(Number(manifest?.n?.N) >= 1, `a streamed value is stored in chunks: ${JSON.stringify(manifest?.n)}`);
  else assert.equal(manifest !== undefined, itemBytes > ITEM_LIMIT, `split exactly when over ${ITEM_LIMIT} bytes (item: ${itemBytes})`);
  if (minChunks > 0) assert.ok(Number(manifest?.n?.N) >= minChunks, `at least ${minChunks} chunks, stored: ${JSON.stringify(manifest?.n)}`);
  if (codec !== undefined) assert.equal(manifest?.c?.S, codec, 'the stored codec is the one asked for');
  return manifest;
}

/** The fewest chunks `bytes` of random bytes (which do not compress) can take, when over the limit. */
const randomChunks = (bytes) => (bytes > ITEM_LIMIT ? Math.ceil(bytes / ITEM_LIMIT) : 0);

/** Every item key in `tables` (a Scan of each), as sorted JSON text. */
async function storedKeys(tables) {
  const keys = [];
  for (const table of new Set(tables)) {
    let ExclusiveStartKey;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey, ConsistentRead: true, ProjectionExpression: '#a, #b, #c', ExpressionAttributeNames: { '#a': 'pk', '#b': 'tenant', '#c': 'doc' } }));
      for (const item of page.Items) keys.push(`${table} ${JSON.stringify(item)}`);
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
  }
  return keys.sort();
}

/** Keys of the chunks of `version` (their key text holds `#<version>#`, docs/FORMAT.md §6). */
async function chunksOf(layout, table, version) {
  const keys = await storedKeys([layout.chunkTable(table)]);
  return keys.filter((k) => k.includes(`#${version}#`));
}

// ---------------------------------------------------------------------------

for (const layout of LAYOUTS) {
  const options = layout.options(layout.tables.main);

  describe(`${layout.name}: host put → driver getItem`, () => {
    for (const [label, size] of SIZES) {
      for (const kind of ['random', 'compressible']) {
        // The host streams a file, deciding the codec on its first megabyte;
        // the compressible ones go to an attribute with a non-ASCII name.
        test(`a ${label} file of ${kind} bytes`, async () => {
          const { bytes, file } = payload(kind, size);
          const attribute = kind === 'random' ? 'data' : 'påyload';
          const key = layout.key(`host-file-${kind}-${label}`);
          await hostOk(['put', '-t', options.table, ...keyArgs(options, key), '--file', file, '--attribute', attribute, '--output', 'json']);
          await assertStored(options, key, { itemBytes: size, streamed: true, minChunks: kind === 'random' ? randomChunks(size) : 0 });
          const { item } = await getItem(client, key, options);
          assertSameItem(item, { ...key, [attribute]: { B: bytes } }, `${kind} ${label}`);
        });
      }
      test(`a ${label} JSON document`, async () => {
        const key = layout.key(`host-json-${label}`);
        const item = documentWith(key, size);
        await hostPutItem(options, item);
        await assertStored(options, key, { itemBytes: itemSize(item) });
        const { item: read } = await getItem(client, key, options);
        assertSameItem(read, item, `document ${label}`);
      });
    }
  });

  describe(`${layout.name}: driver → host get`, () => {
    for (const [label, size] of SIZES) {
      for (const kind of ['random', 'compressible']) {
        test(`putItem: ${label} of ${kind} bytes`, async () => {
          const { bytes } = payload(kind, size);
          const key = layout.key(`driver-item-${kind}-${label}`);
          await putItem(client, { ...key, data: { B: bytes } }, options);
          await assertStored(options, key, { itemBytes: size, minChunks: kind === 'random' ? randomChunks(size) : 0 });
          assertSameBytes(await hostGetFile(options, key), bytes, `${kind} ${label}`);
        });
        test(`putStream: ${label} of ${kind} bytes from a file`, async () => {
          const { bytes, file } = payload(kind, size);
          const key = layout.key(`driver-stream-${kind}-${label}`);
          const codec = kind === 'random' ? 'none' : 'deflate';
          await putStream(client, createReadStream(file), key, { ...options, attribute: 'blob', size, codec });
          await assertStored(options, key, { itemBytes: size, streamed: true, minChunks: kind === 'random' ? randomChunks(size) : 0, codec });
          assertSameBytes(await hostGetFile(options, key, 'blob'), bytes, `${kind} ${label}`);
        });
      }
      test(`putItem: a ${label} JSON document`, async () => {
        const key = layout.key(`driver-json-${label}`);
        const item = documentWith(key, size);
        await putItem(client, item, options);
        await assertStored(options, key, { itemBytes: itemSize(item) });
        assertSameItem(await hostGetItem(options, key), item, `document ${label}`);
      });
    }
  });

  describe(`${layout.name}: every codec and mode, 3 MB of compressible bytes`, () => {
    const size = 3 * MB;
    for (const codec of CODECS) {
      test(`host put --codec ${codec} → driver getItem`, async () => {
        const { bytes } = payload('compressible', size);
        const key = layout.key(`host-codec-${codec}`);
        const item = { ...key, data: { B: bytes }, codec: { S: codec } };
        await hostPutItem(options, item, ['--codec', codec]);
        await assertStored(options, key, { itemBytes: itemSize(item), minChunks: 2, codec });
        assertSameItem((await getItem(client, key, options)).item, item, codec);
      });
      test(`driver putItem codec ${codec} → host get`, async () => {
        const { bytes } = payload('compressible', size);
        const key = layout.key(`driver-codec-${codec}`);
        const item = { ...key, data: { B: bytes }, codec: { S: codec } };
        await putItem(client, item, { ...options, codec });
        await assertStored(options, key, { itemBytes: itemSize(item), minChunks: 2, codec });
        assertSameItem(await hostGetItem(options, key), item, codec);
      });
    }
    for (const codec of STREAM_CODECS) {
      test(`host put --file --codec ${codec} (streamed) → driver getItem`, async () => {
        const { bytes, file } = payload('compressible', size);
        const key = layout.key(`host-stream-codec-${codec}`);
        await hostOk(['put', '-t', options.table, ...keyArgs(options, key), '--file', file, '--codec', codec, '--output', 'json']);
        await assertStored(options, key, { itemBytes: size, streamed: true, minChunks: 2, codec });
        assertSameItem((await getItem(client, key, options)).item, { ...key, data: { B: bytes } }, codec);
      });
      test(`driver putStream codec ${codec} → host get --out`, async () => {
        const { bytes, file } = payload('compressible', size);
        const key = layout.key(`driver-stream-codec-${codec}`);
        await putStream(client, createReadStream(file), key, { ...options, attribute: 'data', size, codec });
        await assertStored(options, key, { itemBytes: size, streamed: true, minChunks: 2, codec });
        assertSameBytes(await hostGetFile(options, key), bytes, codec);
      });
    }
    for (const mode of ['atomic', 'batch']) {
      test(`${mode} mode, each way`, async () => {
        const { bytes } = payload('random', size);
        const hostKey = layout.key(`host-mode-${mode}`);
        assert.equal((await hostPutItem(options, { ...hostKey, data: { B: bytes } }, ['--mode', mode])).mode, mode);
        await assertStored(options, hostKey, { itemBytes: size, minChunks: randomChunks(size) });
        assertSameItem((await getItem(client, hostKey, options)).item, { ...hostKey, data: { B: bytes } }, `host ${mode}`);
        const driverKey = layout.key(`driver-mode-${mode}`);
        assert.equal((await putItem(client, { ...driverKey, data: { B: bytes } }, { ...options, mode })).mode, mode);
        await assertStored(options, driverKey, { itemBytes: size, minChunks: randomChunks(size) });
        assertSameBytes(await hostGetFile(options, driverKey), bytes, `driver ${mode}`);
      });
    }
  });

  describe(`${layout.name}: overwrites and deletes by the other side`, () => {
    const life = layout.options(layout.tables.life);
    const tables = [life.table, layout.chunkTable(life.table)];
    const size = 3 * MB;
    const minChunks = randomChunks(size);

    test('the driver overwrites what the host wrote: the host reads the new item, no old chunk remains', async () => {
      const key = layout.key('overwritten-by-driver');
      await hostOk(['put', '-t', life.table, ...keyArgs(life, key), '--file', payload('random', size).file, '--output', 'json']);
      const old = await assertStored(life, key, { itemBytes: size, streamed: true, minChunks });
      assert.equal((await chunksOf(layout, life.table, old.v.S)).length, Number(old.n.N), "the host's chunks are stored");

      const replacement = { ...key, data: { B: payload('compressible', size).bytes }, note: { S: 'replaced by the driver ✓' } };
      await putItem(client, replacement, life);
      assertSameItem(await hostGetItem(life, key), replacement, 'host get after the overwrite');
      assertSameBytes(await hostGetFile(life, key), payload('compressible', size).bytes, 'host get --out after the overwrite');
      assert.deepEqual(await chunksOf(layout, life.table, old.v.S), [], 'no chunk of the replaced version remains');
    });

    test('the host overwrites what the driver wrote: the driver reads the new item, no old chunk remains', async () => {
      const key = layout.key('overwritten-by-host');
      await putItem(client, { ...key, data: { B: payload('random', size).bytes }, note: { S: 'written by the driver' } }, life);
      const old = await assertStored(life, key, { itemBytes: size, minChunks });
      assert.equal((await chunksOf(layout, life.table, old.v.S)).length, Number(old.n.N), "the driver's chunks are stored");

      await hostOk(['put', '-t', life.table, ...keyArgs(life, key), '--file', payload('compressible', size).file, '--output', 'json']);
      // A put replaces the whole item: the driver's `note` is gone.
      assertSameItem((await getItem(client, key, life)).item, { ...key, data: { B: payload('compressible', size).bytes } }, 'driver getItem after the overwrite');
      assert.deepEqual(await chunksOf(layout, life.table, old.v.S), [], 'no chunk of the replaced version remains');
    });

    test('the host deletes what the driver wrote: no chunk of it remains, its neighbour is whole', async () => {
      const neighbour = { ...layout.key('neighbour-of-host-rm'), data: { B: payload('random', size).bytes } };
      await putItem(client, neighbour, life);
      const before = await storedKeys(tables);
      const key = layout.key('deleted-by-host');
      await putItem(client, { ...key, data: { B: payload('random', size).bytes }, note: { S: 'doomed' } }, life);
      const written = (await storedKeys(tables)).filter((k) => !before.includes(k));
      assert.ok(written.length > minChunks, `the item and its ${minChunks}+ chunks are stored: ${written.length} keys`);

      await hostOk(['rm', '-t', life.table, ...keyArgs(life, key), '--json']);
      assert.deepEqual(await storedKeys(tables), before, 'exactly what was there before the write remains');
      const gone = await host(['get', '-t', life.table, ...keyArgs(life, key), '--json']);
      assert.equal(gone.code, 1, `host get after rm: ${gone.stderr}${gone.stdout}`);
      assert.equal(JSON.parse(gone.stdout.toString('utf8')).error?.code, 'NOT_FOUND');
      assert.equal((await getItem(client, key, life)).item, undefined, 'driver getItem after rm');
      assertSameItem((await getItem(client, neighbour, life)).item, neighbour, 'the neighbour');
    });

    test('the driver deletes what the host wrote: no chunk of it remains, its neighbour is whole', async () => {
      const neighbour = layout.key('neighbour-of-driver-delete');
      await hostOk(['put', '-t', life.table, ...keyArgs(life, neighbour), '--file', payload('random', size).file, '--output', 'json']);
      const before = await storedKeys(tables);
      const key = layout.key('deleted-by-driver');
      await hostOk(['put', '-t', life.table, ...keyArgs(life, key), '--file', payload('random', size).file, '--output', 'json']);
      const written = (await storedKeys(tables)).filter((k) => !before.includes(k));
      assert.ok(written.length > minChunks, `the item and its ${minChunks}+ chunks are stored: ${written.length} keys`);

      const deleted = await deleteItem(client, key, life);
      assert.equal(deleted.deleted, true);
      assert.deepEqual(await storedKeys(tables), before, 'exactly what was there before the write remains');
      const gone = await host(['get', '-t', life.table, ...keyArgs(life, key), '--json']);
      assert.equal(gone.code, 1, `host get after deleteItem: ${gone.stderr}${gone.stdout}`);
      assert.equal(JSON.parse(gone.stdout.toString('utf8')).error?.code, 'NOT_FOUND');
      assertSameBytes(await hostGetFile(life, neighbour), payload('random', size).bytes, 'the neighbour');
    });
  });
}
