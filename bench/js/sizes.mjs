// Item sizes: dynaslice's exact size (the Rust core's rules, see
// core/src/size.rs, mirrored in wasm/js/size.js) on plain values and on
// DynamoDB JSON, against the two npm packages that estimate it, each with
// its error against the exact size and its time over the fastest peer's,
// on ~1 KB items and on 0.4-10 MiB documents.

import dynoItemSize from 'dyno-item-size';
import dynamodbItemSize from 'dynamodb-item-size';
import { marshall } from '@aws-sdk/util-dynamodb';

import { dynaslice, dynasliceInternals } from './dynaslice.mjs';
import { measure, mbps, ms, num, table } from './measure.mjs';

const { itemSize } = dynaslice;
/** itemSize through the core alone, when the build under test has it (not public). */
const itemSizeInCore = dynasliceInternals?.boundApi?.()?.itemSizeInCore;

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
/** The peer the speed target is set against (issue 15: within 2× of it). */
const FASTEST_PEER = peers[1].name;
/** The speed target: dynaslice's time at most this many times the fastest peer's. */
export const WITHIN = 2;

function error(got, exact) {
  const diff = got - exact;
  return `${diff >= 0 ? '+' : ''}${num(diff)} (${diff >= 0 ? '+' : ''}${num((diff / exact) * 100, 2)} %)`;
}

/**
 * Times each candidate in `rounds` interleaved rounds (a share of the budget
 * each) and returns each one's median of the rounds' medians, so a burst of
 * load on the machine moves every candidate's time alike.
 */
async function interleaved(candidates, { budgetMs, min, rounds = 5 }) {
  const times = candidates.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of candidates.entries()) {
      times[i].push((await measure(c.size, { budgetMs: budgetMs / rounds, min: Math.ceil(min / rounds) })).ms);
    }
  }
  return times.map((t) => t.sort((a, b) => a - b)[t.length >> 1]);
}

/**
 * The candidates for one input (`items`: plain objects measured one after
 * another, as an application sizes what it writes): dynaslice on plain
 * values and on DynamoDB JSON, the core alone (the value stream sized in
 * WebAssembly, the path before the JavaScript mirror) and the peers.
 */
function candidatesFor(items, dynamo) {
  const all = (size) => () => {
    let total = 0;
    for (let i = 0; i < items.length; i++) total += size(items[i], i);
    return total;
  };
  const list = [
    { name: "dynaslice itemSize(item, { format: 'plain' })", size: all((item) => itemSize(item, { format: 'plain' })) },
    { name: 'dynaslice itemSize(marshall(item))', size: all((_, i) => itemSize(dynamo[i])) },
  ];
  if (itemSizeInCore) {
    list.push({ name: "the core alone (value stream + WebAssembly), plain", size: all((item) => itemSizeInCore(item, { format: 'plain' })) });
  }
  list.push(...peers.map((p) => ({ name: p.name, size: all(p.size) })));
  return list;
}

/**
 * Times every size function on each input and prints the tables. An input
 * is one document or many small items (`items`), each a plain object.
 * @param {{ name: string, items: object[] }[]} inputs
 */
export async function benchSizes(inputs, { budgetMs = 3000 } = {}) {
  const checked = HAND_CHECKED.map(({ label, item, bytes }) => [
    label,
    num(bytes),
    num(itemSize(item, { format: 'plain' })),
    ...peers.map((p) => num(p.size(item))),
  ]);
  table('itemSize on small items, checked by hand', ['<item', 'by hand', 'dynaslice', ...peers.map((p) => p.name)], checked);

  const rows = [];
  const out = new Map();
  for (const input of inputs) {
    const { items } = input;
    const dynamo = items.map((item) => marshall(item));
    const sizes = items.map((item) => itemSize(item, { format: 'plain' }));
    const exact = sizes.reduce((a, b) => a + b, 0);
    dynamo.forEach((d, i) => {
      if (itemSize(d) !== sizes[i]) throw new Error(`plain and DynamoDB JSON sizes differ for ${input.name}`);
      if (itemSizeInCore && itemSizeInCore(items[i], { format: 'plain' }) !== sizes[i]) throw new Error(`the core disagrees on ${input.name}`);
    });
    const candidates = candidatesFor(items, dynamo);
    const got = candidates.map((c) => c.size());
    const times = await interleaved(candidates, { budgetMs, min: exact > 4e6 ? 10 : 25 });
    const peerMs = times[candidates.findIndex((c) => c.name === FASTEST_PEER)];
    const per = items.length > 1 ? items.length : undefined;
    const results = candidates.map((c, i) => ({ name: c.name, ms: times[i], got: got[i] }));
    for (const r of results) {
      rows.push([
        input.name,
        r.name,
        per ? `${num((r.ms * 1000) / per, 2)} µs/item` : ms(r.ms),
        num(mbps(exact, r.ms)),
        `${num(r.ms / peerMs, 2)}×`,
        num(r.got),
        error(r.got, exact),
      ]);
    }
    out.set(input.name, { exact, results, peerMs });
  }
  table(
    `itemSize (MB/s of exact item bytes; ÷ peer: time over ${FASTEST_PEER}'s)`,
    ['<input', '<implementation', 'time', 'MB/s', '÷ peer', 'size', 'error'],
    rows,
  );
  return out;
}
