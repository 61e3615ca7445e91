// Browser entry: `await init()` once (it fetches dynaslice_wasm_bg.wasm next
// to this module), or `initSync(bytes)` with the module's bytes.
import initWasm, {
  initSync as initWasmSync,
  __setNumberValueClass,
  Splitter as WasmSplitter,
} from '../dist/web/dynaslice_wasm.js';
import { NumberValue } from './number-value.js';
import { guardSplitter, splitStreamWith } from './stream.js';

export {
  itemSize,
  validateItem,
  compress,
  decompress,
  split,
  reassemble,
  parentRequest,
  readRequests,
  deleteRequests,
} from '../dist/web/dynaslice_wasm.js';
export { NumberValue };

/** Splits a Blob, ReadableStream or async iterable chunk by chunk; see index.d.ts. */
export const Splitter = guardSplitter(WasmSplitter);
export const splitStream = splitStreamWith(Splitter);

let ready;

/**
 * Loads the WebAssembly module; resolves once it is ready. Safe to call
 * more than once.
 * @param {RequestInfo | URL | Response | BufferSource | WebAssembly.Module} [source]
 */
export default function init(source) {
  ready ??= initWasm(source === undefined ? undefined : { module_or_path: source }).then(() => {
    __setNumberValueClass(NumberValue);
  });
  return ready;
}

/**
 * Loads the WebAssembly module synchronously from its bytes or a compiled module.
 * @param {BufferSource | WebAssembly.Module} module
 */
export function initSync(module) {
  initWasmSync({ module });
  __setNumberValueClass(NumberValue);
}
