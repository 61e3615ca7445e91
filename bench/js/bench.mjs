#!/usr/bin/env node
// The npm package's benchmark: dynaslice (WebAssembly, wasm/dist) side by
// side with the JavaScript and native libraries people use today, on the
// order-history document the Rust benchmark uses. Prints Markdown tables;
// results and the machine they were taken on are in BENCHMARKS.md.
//
//   npm run bench:js                      # everything, about 6 minutes
//   npm run bench:js -- codecs sizes      # some sections: codecs, sizes, split
//
// `npm run bench:js` runs node with --expose-gc: the split section collects
// garbage between timed calls (see measure.mjs).
//
// Medians of repeated runs after a warm-up; nothing asserts on time. Every
// implementation's output is checked once, outside the timed loops.

import { cpus, loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { marshall } from '@aws-sdk/util-dynamodb';

import { benchCodecs } from './codecs.mjs';
import { dynaslice, dynasliceEntry } from './dynaslice.mjs';
import { num, table } from './measure.mjs';
import { orderHistory, randomBytes } from './order-history.mjs';
import { benchSizes, WITHIN } from './sizes.mjs';
import { orderHistory as smallOrderHistory } from '../../tests/js/support/documents.mjs';
import { benchSplit, printSplit } from './split.mjs';

const { itemSize } = dynaslice;

const SECTIONS = ['codecs', 'sizes', 'split'];
const asked = process.argv.slice(2);
for (const s of asked) {
  if (!SECTIONS.includes(s)) {
    console.error(`bench: unknown section ${s}; sections: ${SECTIONS.join(', ')}`);
    process.exit(2);
  }
}
const sections = new Set(asked.length ? asked : SECTIONS);

const wasm = readFileSync(new URL('../dist/web/dynaslice_wasm_bg.wasm', dynasliceEntry));
console.log('# dynaslice npm package benchmark\n');
console.log(`- Node ${process.version}, ${cpus().length} × ${cpus()[0].model}`);
console.log(`- garbage collection between split calls: ${globalThis.gc ? 'yes' : 'no (run with node --expose-gc)'}`);
console.log(`- load average at start: ${loadavg().map((l) => l.toFixed(2)).join(', ')}`);
console.log(`- ${fileURLToPath(dynasliceEntry)}: ${num(wasm.length)} bytes of wasm, ${num(gzipSync(wasm, { level: 9 }).length)} gzipped (zlib level 9)`);

// The Rust benchmark's sizes and seeds: just over the 400 KB limit, and 10 MiB.
const valueSize = (value) => itemSize({ v: value }, { format: 'plain' }) - 1;
const DOCUMENTS = [
  { name: 'document-420KiB', seed: 1, target: 420 * 1024 },
  { name: 'document-10MiB', seed: 2, target: 10 << 20 },
];
const makeDocument = ({ name, seed, target }) => ({ name, ...orderHistory(seed, target, valueSize) });
let documents = DOCUMENTS.map(makeDocument);
table(
  'Inputs',
  ['<input', 'item bytes (exact)', 'JSON text bytes', 'orders'],
  documents.map((d) => [d.name, num(itemSize(d.item, { format: 'plain' })), num(d.json.length), num(d.item.orders.length)]),
);

const results = {};
if (sections.has('codecs')) {
  results.codecs = await benchCodecs(documents.map((d) => ({ name: d.name, bytes: d.json })));
}
if (sections.has('sizes')) {
  // ~1 KB items, as an application sizes each item it writes (the test
  // suites' order histories: nested maps, lists, sets, non-ASCII text), and
  // the documents, with one of 3 MiB between them.
  const small = Array.from({ length: 1000 }, (_, i) => smallOrderHistory({ pk: `customer#${i}` }, 1024, i + 1));
  const middle = makeDocument({ name: 'document-3MiB', seed: 5, target: 3 << 20 });
  results.sizes = await benchSizes([
    { name: 'items-1KiB (1,000)', items: small },
    ...[documents[0], middle, documents[1]].map((d) => ({ name: d.name, items: [d.item] })),
  ]);
}
// Let the documents go before splitting: large byte arrays trigger
// collections whose cost grows with everything else alive in the heap.
documents = null;
if (sections.has('split')) {
  const binary = (name, seed, len) => {
    const payload = randomBytes(seed, len);
    const plain = { pk: `blob#${seed}`, payload };
    return { name, bytes: itemSize(plain, { format: 'plain' }), payload, items: { plain, dynamodb: marshall(plain) } };
  };
  const rows = [];
  rows.push(...(await benchSplit(binary('binary-10MiB', 3, 10 << 20))));
  rows.push(...(await benchSplit(binary('binary-50MiB', 4, 50 << 20))));
  const { name, item } = makeDocument(DOCUMENTS[1]);
  const bytes = itemSize(item, { format: 'plain' });
  rows.push(...(await benchSplit({ name, bytes, items: { plain: item, dynamodb: marshall(item) } })));
  printSplit(rows);
}
if (results.codecs || results.sizes) summary(results);

/** The targets, met or not, with the ratios that decide them. */
function summary({ codecs, sizes }) {
  const rows = [];
  const verdict = (ok) => (ok ? 'holds' : 'does not hold');
  for (const { name } of DOCUMENTS) {
    if (codecs) {
      const d = codecs.deflate.get(name);
      const [ours, fflate, pako] = ['dynaslice deflate L6', 'fflate L6', 'pako L6'].map((n) => d.get(n));
      const c = fflate.compressMs / ours.compressMs;
      const u = fflate.decompressMs / ours.decompressMs;
      rows.push([name, 'deflate compress ≥ fflate L6', `${num(c, 2)}×`, verdict(c >= 1)]);
      rows.push([name, 'deflate decompress ≥ fflate', `${num(u, 2)}×`, verdict(u >= 1)]);
      rows.push([name, 'deflate ratio ≥ pako L6', `${num(ours.ratio, 3)} vs ${num(pako.ratio, 3)}`, verdict(ours.ratio >= pako.ratio)]);
      const s = codecs.snappy.get(name);
      const [sOurs, sjs] = [s.get('dynaslice snappy'), s.get('snappyjs')];
      const sc = sjs.compressMs / sOurs.compressMs;
      const su = sjs.decompressMs / sOurs.decompressMs;
      rows.push([name, 'snappy compress ≥ 2× snappyjs', `${num(sc, 2)}×`, verdict(sc >= 2)]);
      rows.push([name, 'snappy decompress ≥ 2× snappyjs', `${num(su, 2)}×`, verdict(su >= 2)]);
      const z = codecs.zstd.get(name);
      const zu = z.get('fzstd, frame from dynaslice').decompressMs / z.get('dynaslice zstd (Fastest)').decompressMs;
      rows.push([name, 'zstd decompress faster than fzstd (same frame)', `${num(zu, 2)}×`, verdict(zu > 1)]);
    }
  }
  for (const [name, { exact, results: r, peerMs }] of sizes ?? []) {
    const ours = r[0];
    const peers = r.filter((p) => /item-size/.test(p.name));
    const inexact = peers.filter((p) => p.got !== exact).length;
    rows.push([name, 'itemSize exact where the peers are not', `${inexact} of ${peers.length} peers off`, verdict(ours.got === exact && inexact === peers.length)]);
    const v = ours.ms / peerMs;
    rows.push([name, `itemSize (plain) within ${WITHIN}× of dynamodb-item-size 0.0.1 (time ÷ its time)`, `${num(v, 2)}×`, verdict(v <= WITHIN)]);
  }
  table('Targets (codec ratios > 1: dynaslice faster)', ['<input', '<target', 'ratio', '<verdict'], rows);
}
