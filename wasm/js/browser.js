// Browser entry: `await init()` once (it fetches dynaslice_wasm_bg.wasm next
// to this module), or `initSync(bytes)` with the module's bytes.
import initWasm, * as wasm from '../dist/web/dynaslice_wasm.js';
import { bind } from './api.js';

export { NumberValue } from './number-value.js';

// The module's exports are live bindings: the functions exist before init()
// and work once it has run.
const api = bind(wasm);

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

/**
 * DynamoDB's item size limit in bytes (409,600), from the core: set once the
 * module is loaded (by init() or initSync()), undefined before.
 */
export let MAX_ITEM_BYTES;

/** Reads the core's constants from the module just loaded. */
function loaded() {
  MAX_ITEM_BYTES = api.constants().maxItemBytes;
}

let ready;

/**
 * Loads the WebAssembly module; resolves once it is ready. Safe to call
 * more than once.
 * @param {RequestInfo | URL | Response | BufferSource | WebAssembly.Module} [source]
 */
export default function init(source) {
  ready ??= initWasm(source === undefined ? undefined : { module_or_path: source }).then(loaded);
  return ready;
}

/**
 * Loads the WebAssembly module synchronously from its bytes or a compiled module.
 * @param {BufferSource | WebAssembly.Module} module
 */
export function initSync(module) {
  wasm.initSync({ module });
  loaded();
}
