// Node entry: loads the WebAssembly module synchronously (no init needed).
import { createRequire } from 'node:module';
import { bind } from './api.js';

export { NumberValue } from './number-value.js';

const api = bind(createRequire(import.meta.url)('../dist/node/dynaslice_wasm.js'));

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
  readCapacity,
  carriesVersion,
  chunkData,
  crc32,
  Splitter,
  splitStream,
  ChunkReader,
} = api;

/** DynamoDB's item size limit in bytes (409,600), from the core. */
export const MAX_ITEM_BYTES = api.constants().maxItemBytes;

/**
 * Node loads the module on import; `init()` exists so that code shared with
 * browsers (where it is required) runs unchanged. Resolves at once.
 */
export default function init() {
  return Promise.resolve();
}

/** Nothing to load in Node; here for code shared with browsers. */
export function initSync() {}
