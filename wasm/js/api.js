// The package's public functions over a loaded build of the WebAssembly
// module (Node's or the browser's): items go in as value streams written by
// encode.js and come back as streams read by decode.js, so each item costs
// one copy across the boundary, not a call per value.

import { decodeItem } from './decode.js';
import { binaryBytes, DYNAMODB_INPUT, encodeItem, encodeItems, inputOptions, isPlainObject } from './encode.js';
import { dynasliceError, flag, format, isDynasliceError } from './error.js';
import { itemSizeInJs, UNSURE } from './size.js';
import { splitStreamWith } from './stream.js';

/** The stream of the stored parent `options.expect` holds, if it holds one. */
function storedParent(options) {
  const expect = options?.expect;
  if (expect === null || typeof expect !== 'object') return undefined;
  return encodeItem(expect, DYNAMODB_INPUT);
}

/**
 * What `carriesVersion` sends into WebAssembly: the parent's manifest
 * attribute alone (a plain parent may hold 400 KB that need not cross).
 * Anything but a plain object goes as it is, to be refused as any item is.
 */
function manifestOnly(parent, name) {
  if (parent === undefined || parent === null) return {};
  if (!isPlainObject(parent)) return parent;
  return Object.hasOwn(parent, name) ? { [name]: parent[name] } : {};
}

/** `read()`, where a getter or Proxy trap that throws is INPUT_INVALID, as in encode.js. */
function reading(read) {
  try {
    return read();
  } catch (error) {
    if (isDynasliceError(error)) throw error;
    throw dynasliceError('INPUT_INVALID', `reading the value threw: ${error?.message ?? String(error)}`);
  }
}

/** A DynamoDB JSON binary's bytes (the value's own array when it is one); undefined for anything else. */
function binaryOf(value) {
  return isPlainObject(value) && Object.hasOwn(value, 'B') ? binaryBytes(value.B, true) : undefined;
}

/** The API `bind` made last (one per process: Node's build or the browser's). */
let current;

/** The bound API, internals included, for the package's own DynamoDB driver. */
export function boundApi() {
  return current;
}

/**
 * Binds the public API to the module's raw exports. `constants()` (not
 * public) is core's `{ maxItemBytes, manifestAttribute, chunkDataAttribute }`,
 * read from the module the first time it is needed: the format's names are
 * core's alone, and in browsers the module is ready only after init().
 */
export function bind(wasm) {
  let known;
  const constants = () => (known ??= wasm.formatConstants());
  const api = {
    constants,

    itemSize(item, options) {
      const input = inputOptions(options);
      const size = itemSizeInJs(item, input);
      return size !== UNSURE ? size : wasm.itemSize(encodeItem(item, input));
    },

    /** Not public: itemSize measured by the core alone, as tests/js/item-size.test.mjs compares. */
    itemSizeInCore(item, options) {
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

    readCapacity(parent, options) {
      return wasm.readCapacity(encodeItem(parent, DYNAMODB_INPUT), options);
    },

    carriesVersion(parent, version) {
      if (typeof version !== 'string') throw dynasliceError('INPUT_INVALID', `version must be a string, got ${version === null ? 'null' : typeof version}`);
      const manifest = reading(() => manifestOnly(parent, constants().manifestAttribute));
      return wasm.carriesVersion(encodeItem(manifest, DYNAMODB_INPUT), version);
    },

    crc32(bytes) {
      const parts = bytes instanceof Uint8Array ? [bytes] : bytes;
      if (parts === null || typeof parts?.[Symbol.iterator] !== 'function') {
        throw dynasliceError('INPUT_INVALID', 'crc32 takes a Uint8Array or an iterable of Uint8Arrays');
      }
      const crc = new wasm.Crc32();
      try {
        for (const part of parts) {
          if (!(part instanceof Uint8Array)) throw dynasliceError('INPUT_INVALID', 'crc32 takes a Uint8Array or an iterable of Uint8Arrays');
          crc.update(part);
        }
        return crc.sum();
      } finally {
        crc.free();
      }
    },

    chunkData(chunk) {
      const name = constants().chunkDataAttribute;
      const data = reading(() => (isPlainObject(chunk) && Object.hasOwn(chunk, name) ? binaryOf(chunk[name]) : undefined));
      if (data === undefined) throw dynasliceError('CHUNK_MALFORMED', `item is not a chunk: it has no binary ${name} attribute`);
      return data;
    },

    Splitter: splitterClass(wasm.Splitter),
    ChunkReader: readerClass(wasm.ChunkReader),

    /**
     * Not public: the core's protocol machines, for js/dynamodb.js
     * (wasm/src/machine.rs). Items and keys go in as value streams.
     */
    machines: {
      put: (item, options) => wasm.Machine.put(encodeItem(item, inputOptions(options)), options),
      putStream: (item, options) => wasm.Machine.putStream(encodeItem(item, inputOptions(options)), options),
      get: (key, options) => wasm.Machine.get(encodeItem(key, inputOptions(options)), options),
      getStream: (key, options) => wasm.Machine.getStream(encodeItem(key, inputOptions(options)), options),
      delete: (key, options) => wasm.Machine.delete(encodeItem(key, inputOptions(options)), options),
      query: (input, options) =>
        wasm.Machine.query(
          input,
          encodeItem(input.ExpressionAttributeValues ?? {}, inputOptions(options)),
          input.ExclusiveStartKey === undefined ? new Uint8Array(0) : encodeItem(input.ExclusiveStartKey, inputOptions(options)),
          options,
        ),
      update: (key, set, remove, options) =>
        wasm.Machine.update(encodeItem(key, inputOptions(options)), encodeItem(set, inputOptions(options)), remove, options),
      gc: (options) => wasm.Machine.gc(options),
      gcObjects: (options) => wasm.Machine.gcObjects(options),
      verify: (options) => wasm.Machine.verify(options),
      versions: (parent, nowMs) => wasm.versionsOf(encodeItem(parent, DYNAMODB_INPUT), nowMs),
    },
  };
  api.splitStream = splitStreamWith(api.Splitter);
  current = api;
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

/** `value` as a chunk index for chunkKeys: a non-negative integer. */
function chunkIndex(value, name) {
  if (Number.isInteger(value) && value >= 0) return Math.min(value, 0xffffffff);
  throw dynasliceError('INPUT_INVALID', `chunkKeys: ${name} must be a non-negative integer`);
}

/**
 * The public ChunkReader over a build's class: takes the parent and chunks
 * as DynamoDB JSON, and throws a typed error when used after `free()`, as
 * the Splitter does.
 */
function readerClass(WasmReader) {
  return class ChunkReader {
    #inner;

    constructor(parent, options) {
      this.#inner = new WasmReader(encodeItem(parent, DYNAMODB_INPUT), options);
    }

    get chunkCount() {
      return this.#live().chunkCount;
    }

    get chunkTable() {
      return this.#live().chunkTable;
    }

    get size() {
      return this.#live().size;
    }

    chunkKeys(start, end) {
      return this.#live().chunkKeys(chunkIndex(start, 'start'), chunkIndex(end, 'end'));
    }

    push(chunk) {
      return this.#live().push(encodeItem(chunk, DYNAMODB_INPUT));
    }

    read() {
      return this.#live().read();
    }

    finish() {
      this.#live().finish();
    }

    free() {
      this.#inner?.free();
      this.#inner = undefined;
    }

    #live() {
      if (this.#inner === undefined) throw dynasliceError('READER_FREED', 'this reader has been freed');
      return this.#inner;
    }
  };
}
