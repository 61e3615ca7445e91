// dynaslice/dynamodb through the host's fault-injecting proxy in front of
// Amazon's DynamoDB Local: 30 % of requests throttled, answered with a
// partial batch, failed with a 500 before or after the server applied them,
// or dropped before or after. The SDK's own retries are off (maxAttempts 1),
// so the driver's retries alone carry every write. Puts and gets of 1 KB to
// 30 MB items in both layouts and all modes must end with the stored item
// equal to the last committed version and every read equal to some
// committed version; concurrent writers (last writer wins) succeed or end in
// a clear error, never CONFLICT and never a torn item; after gc no orphan
// chunk remains. Needs Java and the host's examples (buildHost).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CreateTableCommand, DynamoDBClient, GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { gc, getItem, putItem } from 'dynaslice/dynamodb';
import { startDynamoDBLocal } from '../js/support/dynamodb-local.mjs';
import { orderHistory } from '../js/support/documents.mjs';
import { startFaultProxy } from './support/fault-proxy.mjs';

const KB = 1024;
const MB = 1024 * KB;

const DOCS = { table: 'docs', key: [{ name: 'pk', type: 'S' }], format: 'plain' };
const APP = { table: 'app', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }], layout: 'collection', format: 'plain' };

/** Errors a put or get may end with under faults: retries ran out. Anything else is a bug. */
const CLEAR = ['DYNAMODB_ERROR', 'CONNECTION_FAILED'];

let server;
let proxy;
let direct;
let faulty;

before(async () => {
  server = await startDynamoDBLocal();
  direct = server.client();
  proxy = await startFaultProxy(server.endpoint, { rate: 0.3, seed: 11 });
  faulty = new DynamoDBClient({
    endpoint: proxy.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'dynaslice', secretAccessKey: 'dynaslice' },
    maxAttempts: 1,
  });
  for (const [name, key] of [['docs', ['pk']], ['docs_chunks', ['pk']], ['app', ['pk', 'sk']]]) {
    await direct.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: key.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
        KeySchema: key.map((AttributeName, i) => ({ AttributeName, KeyType: i === 0 ? 'HASH' : 'RANGE' })),
      }),
    );
  }
  await proxy.on();
});

after(async () => {
  faulty?.destroy();
  direct?.destroy();
  await proxy?.stop();
  await server?.stop();
});

/** Version `n` of item `k`: random bytes or an order history, 1 KB to 12 MB. */
function version(key, k, n) {
  const bytes = [1 * KB, 300 * KB, 3 * MB, 12 * MB][(k + n) % 4];
  const round = { round: n };
  return (k + n) % 2 === 0 ? { ...key, ...round, data: new Uint8Array(randomBytes(bytes)) } : { ...orderHistory(key, bytes, k * 100 + n), ...round };
}

/** Deep equality that compares large byte arrays quickly. */
function sameItem(a, b) {
  if (a === undefined || b === undefined) return a === b;
  const names = Object.keys(a).sort();
  if (names.join() !== Object.keys(b).sort().join()) return false;
  return names.every((name) => {
    const [x, y] = [a[name], b[name]];
    if (x instanceof Uint8Array && y instanceof Uint8Array) return Buffer.from(x).equals(Buffer.from(y));
    try {
      assert.deepStrictEqual(x, y);
      return true;
    } catch {
      return false;
    }
  });
}

/** Asserts `item` is one of `candidates` (by round number, then whole). */
function assertOneOf(item, candidates, what) {
  assert.ok(
    candidates.some((c) => sameItem(item, c)),
    `${what}: read round ${item?.round}, expected one of rounds ${candidates.map((c) => c?.round).join(', ')}`,
  );
}

/** Runs `put`; resolves to true when committed, false when it ended in a clear error (outcome unknown). */
async function attempt(put) {
  try {
    await put;
    return true;
  } catch (error) {
    assert.ok(CLEAR.includes(error.code), `unexpected failure: ${error.code}: ${error.stack}`);
    return false;
  }
}

describe('driver under faults', () => {
  for (const [name, table, keyOf] of [
    ['chunk table', DOCS, (k) => ({ pk: `item:${k}` })],
    ['item collection', APP, (k) => ({ pk: 'tenant', sk: `item:${k}` })],
  ]) {
    test(`${name}: rounds of overwrites in every mode; stored and read items are always committed versions`, async (t) => {
      const committed = new Map(); // k -> [the last committed version, any later one of unknown outcome]
      const modes = ['auto', 'batch', 'atomic'];
      let unknown = 0;
      for (let n = 0; n < 4; n++) {
        for (let k = 0; k < 3; k++) {
          const key = keyOf(k);
          const item = version(key, k, n);
          const mode = modes[(k + n) % 3];
          const options = { ...table, mode };
          const put = putItem(faulty, item, options);
          let ok;
          try {
            await put;
            ok = true;
          } catch (error) {
            // Atomic mode is refused for items over one transaction: nothing was written.
            if (mode === 'atomic' && error.code === 'ATOMIC_TOO_LARGE') continue;
            assert.ok(CLEAR.includes(error.code), `unexpected failure: ${error.code}: ${error.stack}`);
            ok = false;
          }
          const before = committed.get(k) ?? [undefined];
          if (ok) committed.set(k, [item]);
          else {
            unknown += 1;
            committed.set(k, [...before, item]);
          }
          try {
            const { item: read } = await getItem(faulty, key, table);
            assertOneOf(read, committed.get(k), `item ${k} after round ${n}`);
          } catch (error) {
            if (!CLEAR.includes(error?.code)) throw error;
          }
        }
      }
      // Faults off: each item is its last committed version (or a later one whose commit was ambiguous).
      await proxy.off();
      try {
        for (const [k, candidates] of committed) {
          const { item } = await getItem(direct, keyOf(k), table);
          assertOneOf(item, candidates, `item ${k} at the end`);
        }
      } finally {
        await proxy.on();
      }
      t.diagnostic(`${unknown} writes ended in a clear error`);
    });

    test(`${name}: a 30 MB item in batch mode, written and read through faults`, async () => {
      const key = keyOf('big');
      const item = { ...key, data: new Uint8Array(randomBytes(30 * MB)) };
      assert.ok(await attempt(putItem(faulty, item, { ...table, mode: 'batch' })), 'a 30 MB put under faults completes');
      const { item: read } = await getItem(faulty, key, table);
      assert.ok(sameItem(read, item));
    });

    test(`${name}: concurrent writers, last writer wins: each succeeds or ends in a clear error, never a torn item`, async () => {
      const key = keyOf('race');
      for (let round = 0; round < 2; round++) {
        const versions = [0, 1, 2, 3].map((w) => ({ ...key, writer: w, round, data: new Uint8Array(randomBytes((1 + w) * 700 * KB)) }));
        let racing = true;
        const reader = (async () => {
          while (racing) {
            try {
              const { item } = await getItem(faulty, key, table);
              if (item?.round === round) assertOneOf(item, versions, 'a read during the race');
            } catch (error) {
              if (!CLEAR.includes(error?.code)) throw error;
            }
          }
        })();
        const modes = ['batch', 'atomic', 'batch', 'auto'];
        const results = await Promise.allSettled(versions.map((v, w) => putItem(faulty, v, { ...table, mode: modes[w] })));
        racing = false;
        await reader;
        for (const r of results) {
          if (r.status === 'rejected') assert.ok(CLEAR.includes(r.reason.code), r.reason.stack);
        }
        await proxy.off();
        try {
          const { item } = await getItem(direct, key, table);
          assertOneOf(item, versions, 'the raced item');
          const winner = results[item.writer];
          assert.ok(winner.status === 'rejected' || winner.value.superseded === false, 'the stored version was not reported superseded (its chunks deleted)');
        } finally {
          await proxy.on();
        }
      }
    });
  }

  test('gc under faults, then no orphan chunk remains: every chunk belongs to its stored parent\'s version', async () => {
    for (const table of [DOCS, APP]) {
      // A gc whose requests fail may leave work for the next: run until one completes.
      let done = false;
      for (let i = 0; i < 5 && !done; i++) {
        try {
          await gc(faulty, { ...table, graceMs: 0 });
          done = true;
        } catch (error) {
          assert.ok(CLEAR.includes(error.code), error.stack);
        }
      }
      assert.ok(done, 'gc completed');
    }
    await proxy.off();
    const scan = async (TableName) => {
      const items = [];
      let ExclusiveStartKey;
      do {
        const page = await direct.send(new ScanCommand({ TableName, ExclusiveStartKey, ConsistentRead: true }));
        items.push(...page.Items);
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return items;
    };
    // docs/FORMAT.md §6: <parent key part>#<version>#<6-digit seq>.
    const CHUNK = /^((?:[^#\\]|\\.)*)#([0-7][0-9A-HJKMNP-TV-Z]{25})#(\d{6})$/;
    const unescape = (text) => text.replace(/\\(.)/g, '$1');
    const orphans = [];
    const check = async (where, text, Key, TableName) => {
      const m = CHUNK.exec(text);
      const { Item } = await direct.send(new GetItemCommand({ TableName, Key: Key(unescape(m[1])), ConsistentRead: true }));
      // Its own frame, or a group's (format 2, `g`).
      const ds = Item?._ds?.M;
      const frame = (ds ? [ds, ...(ds.g?.L ?? []).map((g) => g.M)] : []).find((f) => f.v.S === m[2]);
      if (!frame || Number(m[3]) >= Number(frame.n.N)) orphans.push(`${where} ${text}`);
    };
    const chunks = await scan('docs_chunks');
    for (const c of chunks) await check('docs_chunks', c.pk.S, (pk) => ({ pk: { S: pk } }), 'docs');
    let inCollection = 0;
    for (const item of await scan('app')) {
      if (!CHUNK.test(item.sk.S)) continue;
      inCollection += 1;
      await check('app', item.sk.S, (sk) => ({ pk: item.pk, sk: { S: sk } }), 'app');
    }
    assert.ok(chunks.length > 0 && inCollection > 0, 'chunks were checked in both layouts');
    assert.deepStrictEqual(orphans, []);
  });

  test('every kind of fault was injected', async () => {
    const counts = await proxy.counts();
    for (const kind of ['throttled', 'partialBatches', 'internalErrorsBefore', 'internalErrorsAfter', 'droppedBefore', 'droppedAfter']) {
      assert.ok(counts[kind] > 0, `${kind}: ${JSON.stringify(counts)}`);
    }
    assert.ok(counts.injected / counts.requests > 0.2, JSON.stringify(counts));
  });
});
