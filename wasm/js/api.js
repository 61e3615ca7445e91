// The package's public functions over a loaded build of the WebAssembly
// module (Node's or the browser's): items go in as value streams written by
// encode.js and come back as streams read by decode.js, so each item costs
// one copy across the boundary, not a call per value.

import { decodeItem } from './decode.js';
import { DYNAMODB_INPUT, encodeItem, encodeItems, inputOptions } from './encode.js';
import { dynasliceError, flag, format } from './error.js';
import { splitStreamWith } from './stream.js';

/** The stream of the stored parent `options.expect` holds, if it holds one. */
function storedParent(options) {
  const expect = options?.expect;
  if (expect === null || typeof expect !== 'object') return undefined;
  return encodeItem(expect, DYNAMODB_INPUT);
}

/** Binds the public API to the module's raw exports. */
export function bind(wasm) {
  const api = {
    itemSize(item, options) {
      return wasm.itemSize(encodeItem(item, inputOptions(options)));
    },

    validateItem(item, options) {
      return wasm.validateItem(encodeItem(item, inputOptions(options)), options);
    },

    compress(bytes, options) {
      return wasm.compress(bytes, options);
    },

    decompress(bytes, options) {
      return wasm.decompress(bytes, options);
    },

    split(item, options) {
      const stream = encodeItem(item, inputOptions(options));
      return wasm.split(stream, storedParent(options), options);
    },

    reassemble(parent, chunks, options) {
      const output = { plain: format(options) === 'plain', wrapNumbers: flag(options, 'wrapNumbers', false) };
      const stored = encodeItem(parent, DYNAMODB_INPUT);
      const { bytes, ends } = encodeItems(chunks, DYNAMODB_INPUT, 'chunks');
      return decodeItem(wasm.reassemble(stored, bytes, ends, options), output);
    },

    parentRequest(key, options) {
      return wasm.parentRequest(encodeItem(key, inputOptions(options)), options);
    },

    readRequests(parent, options) {
      return wasm.readRequests(encodeItem(parent, DYNAMODB_INPUT), options);
    },

    deleteRequests(parent, options) {
      return wasm.deleteRequests(encodeItem(parent, DYNAMODB_INPUT), options);
    },

    Splitter: splitterClass(wasm.Splitter),
  };
  api.splitStream = splitStreamWith(api.Splitter);
  return api;
}

/**
 * The public Splitter over a build's class: takes the item as JavaScript
 * values, and throws a typed error when used after `free()`, before the
 * call reaches WebAssembly (where wasm-bindgen's own error for a freed
 * object would cross the wasm frames and leak its shadow stack).
 */
function splitterClass(WasmSplitter) {
  return class Splitter {
    #inner;

    constructor(item, options) {
      const stream = encodeItem(item, inputOptions(options));
      this.#inner = new WasmSplitter(stream, storedParent(options), options);
    }

    get received() {
      return this.#live().received;
    }

    push(bytes) {
      return this.#live().push(bytes);
    }

    finish() {
      return this.#live().finish();
    }

    free() {
      this.#inner?.free();
      this.#inner = undefined;
    }

    #live() {
      if (this.#inner === undefined) throw dynasliceError('SPLITTER_FREED', 'this splitter has been freed');
      return this.#inner;
    }
  };
}
