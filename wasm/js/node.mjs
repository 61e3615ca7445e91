// Node entry: loads the WebAssembly module synchronously (no init needed).
import { createRequire } from 'node:module';
import { NumberValue } from './number-value.js';
import { guardSplitter, splitStreamWith } from './stream.js';

const wasm = createRequire(import.meta.url)('../dist/node/dynaslice_wasm.js');
wasm.__setNumberValueClass(NumberValue);

export const {
  itemSize,
  validateItem,
  compress,
  decompress,
  split,
  reassemble,
  parentRequest,
  readRequests,
  deleteRequests,
} = wasm;
export { NumberValue };

/** Splits a Blob, ReadableStream or Node stream chunk by chunk; see index.d.ts. */
export const Splitter = guardSplitter(wasm.Splitter);
export const splitStream = splitStreamWith(Splitter);

/**
 * Node loads the module on import; `init()` exists so that code shared with
 * browsers (where it is required) runs unchanged. Resolves at once.
 */
export default function init() {
  return Promise.resolve();
}

/** Nothing to load in Node; here for code shared with browsers. */
export function initSync() {}
