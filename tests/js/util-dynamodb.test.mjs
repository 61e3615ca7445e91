// Node only: the plain format against @aws-sdk/util-dynamodb, the library
// whose marshalling it follows (sizes, the DynamoDB JSON written, its
// NumberValue, unmarshall of what reassemble returns), and Node's Buffer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import util from '@aws-sdk/util-dynamodb';
import { itemSize, reassemble, split, validateItem } from 'dynaslice';

const { marshall, unmarshall, NumberValueImpl: UtilNumberValue } = util;
const table = { table: 'orders', key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }] };

const items = {
  order: {
    pk: 'customer#8812',
    sk: 'order#2026-11-20#A-1001',
    status: 'SHIPPED',
    total: 1299.95,
    quantity: 3,
    placedAt: 1763596800000,
    giftWrap: false,
    coupon: null,
    lines: [
      { sku: 'café-42', qty: 1, price: 999.99, tags: new Set(['fragile', 'gift']) },
      { sku: 'cable-7', qty: 2, price: 149.98, attributes: { color: 'black', lengthM: 2 } },
    ],
    address: { street: '1 Rue de la Paix', city: 'Paris', zip: '75002', geo: { lat: 48.8686, lng: 2.3314 } },
    note: '返品なし — 😀',
  },
  profile: {
    pk: 'user#42',
    sk: 'profile',
    name: 'Ada',
    emails: new Set(['ada@example.com', 'a.l@example.org']),
    scores: new Set([98.5, 87, 100]),
    avatar: Uint8Array.from({ length: 2000 }, (_, i) => (i * 31) % 256),
    keys: new Set([Uint8Array.of(1, 2, 3), Uint8Array.of(4)]),
    preferences: new Map([['theme', 'dark'], ['lang', 'en-GB']]),
    empty: '',
    emptyList: [],
    emptyMap: {},
  },
  counters: {
    pk: 'stats',
    sk: '2026-11',
    views: new UtilNumberValue('123456789012345678901234567890'),
    ratio: new UtilNumberValue('0.000000000000000000000000000001'),
    big: 98765432109876543210n,
    negative: -0.5,
    list: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => n * 1.1),
  },
};

test('itemSize of a plain item equals itemSize of its marshall() for realistic items', () => {
  for (const [name, item] of Object.entries(items)) {
    const marshalled = marshall(item);
    const size = itemSize(item, { format: 'plain' });
    assert.equal(size, itemSize(marshalled), name);
    assert.ok(size > 20, name);
    assert.deepEqual(validateItem(item, { format: 'plain' }), validateItem(marshalled), name);
    assert.deepEqual(validateItem(marshalled), [], name);
  }
});

test('split writes a plain item as exactly the DynamoDB JSON marshall() makes', () => {
  for (const [name, item] of Object.entries(items)) {
    const { parent, requests } = split(item, { ...table, format: 'plain' });
    assert.equal(requests.mode, 'single', name);
    assert.deepEqual(parent, marshall(item), name);
  }
});

test('util-dynamodb NumberValue is accepted and keeps its exact text', () => {
  const value = new UtilNumberValue('12345678901234567890.123456789');
  const { parent } = split({ pk: 'a', sk: 'b', n: value }, { ...table, format: 'plain' });
  assert.deepEqual(parent.n, { N: '12345678901234567890.123456789' });
  assert.equal(itemSize({ n: value }, { format: 'plain' }), itemSize({ n: { N: value.toString() } }));
});

/** Values with every NumberValue (either library's) as its text, for comparing the two. */
function numbersAsText(value) {
  if (value instanceof Set) return new Set([...value].map(numbersAsText));
  if (Array.isArray(value)) return value.map(numbersAsText);
  if (value instanceof Uint8Array || value === null || typeof value !== 'object') return value;
  if (value.constructor?.name === 'NumberValue') return `N:${value.value}`;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbersAsText(v)]));
}

test('what reassemble returns in DynamoDB JSON unmarshalls to what it returns as plain', () => {
  for (const [name, fits] of Object.entries(items)) {
    const item = { ...fits, blob: new Uint8Array(410_000).fill(7) }; // over the limit: split
    const { parent, chunks } = split(item, { ...table, format: 'plain', inline: false, parentBudget: 0 });
    assert.equal(chunks.length, 1, name);
    const typed = reassemble(parent, chunks, table);
    assert.deepEqual(typed, marshall(item), name);
    const plain = reassemble(parent, chunks, { ...table, format: 'plain', wrapNumbers: true });
    assert.deepEqual(numbersAsText(plain), numbersAsText(unmarshall(typed, { wrapNumbers: true })), name);
    if (name !== 'counters') {
      // Without wrapNumbers both give JavaScript numbers (Maps come back as objects).
      const expected = unmarshall(typed);
      assert.deepEqual(reassemble(parent, chunks, { ...table, format: 'plain' }), expected, name);
    }
  }
});

test('Node Buffers are binary', () => {
  const buffer = Buffer.from('héllo');
  assert.equal(itemSize({ b: buffer }, { format: 'plain' }), 1 + buffer.length);
  assert.equal(itemSize({ b: { B: buffer } }), 1 + buffer.length);
  const { parent } = split({ pk: 'a', sk: 'b', b: buffer }, { ...table, format: 'plain' });
  assert.deepEqual(parent.b.B, new Uint8Array(buffer));
});
