// Codecs side by side on the order-history JSON text: dynaslice's frames
// (13-byte header and 8-byte digest included, digest checked on decompress)
// against the JavaScript and native implementations people use today. Each
// library round-trips its own output; every round trip is checked once,
// outside the timed loop.

import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { deflateSync, inflateSync } from 'fflate';
import { deflateRaw, inflateRaw } from 'pako';
import snappy from 'snappyjs';
import * as zstdWasm from '@bokuweb/zstd-wasm';
import { decompress as fzstdDecompress } from 'fzstd';

import { dynaslice } from './dynaslice.mjs';
import { measure, mbps, ms, num, table } from './measure.mjs';

const { compress, decompress } = dynaslice;

/** The header and trailer dynaslice puts around a codec's body. */
const FRAME_HEADER = 13;
const FRAME_TRAILER = 8;

async function streamThrough(bytes, transform) {
  const stream = new Blob([bytes]).stream().pipeThrough(transform);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Each implementation: a name, compress and decompress of its own output. */
function deflateCandidates() {
  return [
    {
      name: 'dynaslice deflate L6',
      compress: (b) => compress(b, { codec: 'deflate', level: 6 }),
      decompress: (c) => decompress(c),
    },
    { name: 'fflate L6', compress: (b) => deflateSync(b, { level: 6 }), decompress: (c) => inflateSync(c) },
    { name: 'pako L6', compress: (b) => deflateRaw(b, { level: 6 }), decompress: (c) => inflateRaw(c) },
    {
      name: 'node:zlib L6 (native)',
      compress: (b) => deflateRawSync(b, { level: 6 }),
      decompress: (c) => inflateRawSync(c),
    },
    {
      name: "CompressionStream('deflate-raw') (native)",
      compress: (b) => streamThrough(b, new CompressionStream('deflate-raw')),
      decompress: (c) => streamThrough(c, new DecompressionStream('deflate-raw')),
    },
  ];
}

function snappyCandidates() {
  return [
    { name: 'dynaslice snappy', compress: (b) => compress(b, { codec: 'snappy' }), decompress: (c) => decompress(c) },
    { name: 'snappyjs', compress: (b) => snappy.compress(b), decompress: (c) => snappy.uncompress(c) },
  ];
}

function zstdCandidates() {
  const body = (frame) => frame.subarray(FRAME_HEADER, frame.length - FRAME_TRAILER);
  return [
    {
      name: 'dynaslice zstd (Fastest)',
      compress: (b) => compress(b, { codec: 'zstd' }),
      decompress: (c) => decompress(c),
    },
    {
      name: '@bokuweb/zstd-wasm L1',
      compress: (b) => zstdWasm.compress(b, 1),
      decompress: (c) => zstdWasm.decompress(c),
    },
    {
      name: '@bokuweb/zstd-wasm L3',
      compress: (b) => zstdWasm.compress(b, 3),
      decompress: (c) => zstdWasm.decompress(c),
    },
    {
      name: 'fzstd, frame from dynaslice',
      source: (b) => compress(b, { codec: 'zstd' }),
      decompress: (frame) => fzstdDecompress(body(frame)),
    },
    {
      name: 'fzstd, frame from zstd-wasm L3',
      source: (b) => zstdWasm.compress(b, 3),
      decompress: (c) => fzstdDecompress(c),
    },
  ];
}

function sameBytes(a, b) {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;
}

/** Measures each candidate on `input`; returns rows keyed by name. */
async function run(candidates, input, budgetMs) {
  const results = new Map();
  for (const c of candidates) {
    const compressed = await (c.compress ?? c.source)(input.bytes);
    const restored = await c.decompress(compressed);
    if (!sameBytes(restored, input.bytes)) throw new Error(`${c.name} did not round-trip ${input.name}`);
    const options = { budgetMs, min: input.bytes.length > 4e6 ? 5 : 15 };
    const packed = c.compress ? await measure(() => c.compress(input.bytes), options) : undefined;
    const unpacked = await measure(() => c.decompress(compressed), options);
    results.set(c.name, {
      compressMs: packed?.ms,
      decompressMs: unpacked.ms,
      ratio: c.compress ? input.bytes.length / compressed.length : undefined,
      n: [packed?.n, unpacked.n],
    });
  }
  return results;
}

function print(title, inputs, resultsByInput) {
  const rows = [];
  for (const input of inputs) {
    for (const [name, r] of resultsByInput.get(input.name)) {
      rows.push([
        input.name,
        name,
        ms(r.compressMs),
        num(r.compressMs && mbps(input.bytes.length, r.compressMs)),
        ms(r.decompressMs),
        num(mbps(input.bytes.length, r.decompressMs)),
        r.ratio ? num(r.ratio, 2) : '—',
      ]);
    }
  }
  table(title, ['<input', '<implementation', 'compress', 'MB/s', 'decompress', 'MB/s', 'ratio'], rows);
}

/**
 * Runs every codec comparison on the JSON inputs and prints the tables.
 * Returns the results for the summary of targets.
 * @param {{ name: string, bytes: Uint8Array }[]} inputs
 */
export async function benchCodecs(inputs, { budgetMs = 1500 } = {}) {
  await zstdWasm.init();
  const out = {};
  for (const [codec, candidates] of [
    ['deflate', deflateCandidates()],
    ['snappy', snappyCandidates()],
    ['zstd', zstdCandidates()],
  ]) {
    const byInput = new Map();
    for (const input of inputs) byInput.set(input.name, await run(candidates, input, budgetMs));
    print(`${codec} (MB/s of JSON text; ratio = JSON bytes / compressed bytes)`, inputs, byInput);
    out[codec] = byInput;
  }
  return out;
}
