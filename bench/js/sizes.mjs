// Item sizes: dynaslice's exact size (the Rust core's rules, see
// core/src/size.rs) on plain values and on DynamoDB JSON, against the two
// npm packages that estimate it, each with its error against the exact size.

import dynoItemSize from 'dyno-item-size';
import dynamodbItemSize from 'dynamodb-item-size';
import { marshall } from '@aws-sdk/util-dynamodb';

import { dynaslice } from './dynaslice.mjs';
import { measure, mbps, ms, num, table } from './measure.mjs';

const { itemSize } = dynaslice;

/**
 * Small items whose sizes were worked out by hand from DynamoDB's rules:
 * names and strings count UTF-8 bytes; numbers one byte per pair of digits
 * aligned on the decimal point, plus one (plus one more when negative);
 * booleans and nulls one byte; lists and maps 3 bytes plus one per element;
 * sets the sum of their members.
 */
const HAND_CHECKED = [
  // pk 2+1, n 1+4 (01|23.45|: 3 pairs + 1), l 1+3+(1+2)+(1+2), m 1+3+(1+1+1), s 1+1+2
  { label: 'mixed', item: { pk: 'a', n: 123.45, l: [1, 'ab'], m: { x: null }, s: new Set(['a', 'bc']) }, bytes: 29 },
  // "é" and "€" are 2 and 3 UTF-8 bytes (JavaScript length 1 each)
  { label: 'UTF-8', item: { 'naïve': 'é€' }, bytes: 6 + 5 },
  // -0.001: pair .00|1 → 1 pair + 1 + 1 (negative); 1e6: 01|00|00|00 → 1 pair + 1
  { label: 'numbers', item: { a: -0.001, b: 1e6 }, bytes: 1 + 3 + 1 + 2 },
  // a list of 100 empty maps: 3 + 100 × (1 + 3)
  { label: 'nesting', item: { l: Array.from({ length: 100 }, () => ({})) }, bytes: 1 + 3 + 100 * 4 },
];

const peers = [
  { name: 'dyno-item-size 0.3.3', size: (item) => dynoItemSize(item) },
  { name: 'dynamodb-item-size 0.0.1', size: (item) => dynamodbItemSize.calculateItemSize(item) },
];

function error(got, exact) {
  const diff = got - exact;
  return `${diff >= 0 ? '+' : ''}${num(diff)} (${diff >= 0 ? '+' : ''}${num((diff / exact) * 100, 2)} %)`;
}

/**
 * Times every size function on each document and prints the tables.
 * @param {{ name: string, item: object }[]} documents plain objects
 */
export async function benchSizes(documents, { budgetMs = 1500 } = {}) {
  const checked = HAND_CHECKED.map(({ label, item, bytes }) => [
    label,
    num(bytes),
    num(itemSize(item, { format: 'plain' })),
    ...peers.map((p) => num(p.size(item))),
  ]);
  table('itemSize on small items, checked by hand', ['<item', 'by hand', 'dynaslice', ...peers.map((p) => p.name)], checked);

  const rows = [];
  const out = new Map();
  for (const doc of documents) {
    const exact = itemSize(doc.item, { format: 'plain' });
    const dynamo = marshall(doc.item);
    if (itemSize(dynamo) !== exact) throw new Error(`plain and DynamoDB JSON sizes differ for ${doc.name}`);
    const options = { budgetMs, min: exact > 4e6 ? 5 : 15 };
    const candidates = [
      { name: "dynaslice itemSize(item, { format: 'plain' })", size: () => itemSize(doc.item, { format: 'plain' }) },
      { name: 'dynaslice itemSize(marshall(item))', size: () => itemSize(dynamo) },
      ...peers.map((p) => ({ name: p.name, size: () => p.size(doc.item) })),
    ];
    const results = [];
    for (const c of candidates) {
      const got = c.size();
      const { ms: time } = await measure(c.size, options);
      results.push({ name: c.name, ms: time, got });
      rows.push([doc.name, c.name, ms(time), num(mbps(exact, time)), num(got), error(got, exact)]);
    }
    const marshalled = await measure(() => marshall(doc.item), options);
    rows.push([doc.name, '(for reference: marshall(item) alone)', ms(marshalled.ms), num(mbps(exact, marshalled.ms)), '—', '—']);
    out.set(doc.name, { exact, results });
  }
  table('itemSize (MB/s of exact item bytes)', ['<item', '<implementation', 'time', 'MB/s', 'size', 'error'], rows);
  return out;
}
