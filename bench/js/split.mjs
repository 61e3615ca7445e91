// Split and reassembly of large items through the npm package: the item
// crosses into WebAssembly, is split into chunk items with their requests,
// and comes back out as JavaScript objects; reassembly takes the parent and
// chunks (DynamoDB JSON) and returns the item in its original format.

import { dynaslice } from './dynaslice.mjs';
import { measure, mbps, ms, num, table } from './measure.mjs';

const { itemSize, reassemble, split } = dynaslice;

const TABLE = { table: 'orders', key: [{ name: 'pk', type: 'S' }] };
/** A fixed version id, so every run writes the same chunks. */
const VERSION = '01KAJ0000000000000000000AB';

function check(input, format, restored) {
  if (input.payload) {
    const bytes = format === 'plain' ? restored.payload : restored.payload.B;
    if (Buffer.compare(Buffer.from(bytes), Buffer.from(input.payload)) !== 0) {
      throw new Error(`${input.name}: reassembled bytes differ`);
    }
  }
  const size = itemSize(restored, { format });
  if (size !== input.bytes) throw new Error(`${input.name}: reassembled item is ${size} bytes, not ${input.bytes}`);
}

/**
 * Times split, reassemble, and both, for one input in each format and codec;
 * returns the table rows. A payload input also gets the ratio to a plain
 * copy of its bytes.
 * @param {{ name: string, bytes: number, payload?: Uint8Array, items: Record<string, object> }} input
 *   `items` holds the same item per format (`plain`, `dynamodb`).
 */
export async function benchSplit(input, { budgetMs = 3000 } = {}) {
  const rows = [];
  const runs = input.payload
    ? { budgetMs, min: 10, warmup: 2, collect: true }
    : { budgetMs, min: 3, warmup: 1, collect: true };
  const copy = input.payload ? await memcpy(input.payload) : undefined;
  for (const [format, item] of Object.entries(input.items)) {
    for (const codec of ['none', 'auto']) {
      const options = { ...TABLE, format, codec, version: VERSION, expect: 'any' };
      const result = split(item, options);
      check(input, format, reassemble(result.parent, result.chunks, options));
      const s = await measure(() => split(item, options), runs);
      const r = await measure(() => reassemble(result.parent, result.chunks, options), runs);
      const both = await measure(() => {
        const { parent, chunks } = split(item, options);
        return reassemble(parent, chunks, options);
      }, runs);
      const m = result.manifest;
      rows.push([
        input.name,
        format,
        codec === 'auto' ? `auto (${m.codec})` : codec,
        num(m.chunkCount),
        ms(s.ms),
        ms(r.ms),
        ms(both.ms),
        num(mbps(input.bytes, both.ms)),
        copy ? `${num(both.ms / copy, 0)}× (${num(copy, 2)} ms)` : '—',
      ]);
    }
  }
  return rows;
}

/** Prints the rows of {@link benchSplit}. */
export function printSplit(rows) {
  table(
    'split and reassemble (MB/s of exact item bytes, for split + reassemble)',
    ['<item', '<format', '<codec', 'chunks', 'split', 'reassemble', 'split + reassemble', 'MB/s', '÷ memcpy'],
    rows,
  );
}

/** Milliseconds to copy `bytes` into an existing array: the floor for moving a payload once. */
async function memcpy(bytes) {
  const target = new Uint8Array(bytes.length);
  return (await measure(() => target.set(bytes), { budgetMs: 500, min: 15 })).ms;
}
