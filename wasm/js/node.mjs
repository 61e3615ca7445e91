// Node entry: loads the WebAssembly module synchronously (no init needed).
import { createRequire } from 'node:module';
import { NumberValue } from './number-value.js';

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
