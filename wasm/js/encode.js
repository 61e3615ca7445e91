// JavaScript items into the value stream (docs/FORMAT.md §3), the one form in
// which items cross into WebAssembly: a single copy of one byte array,
// instead of a call across the boundary for every value. Only the walk is
// here; every DynamoDB rule (sizes, validation, splitting) stays in the
// Rust core, which decodes and checks the stream as hostile bytes. (One
// mirror, for speed: size.js counts itemSize's sizes in JavaScript, proven
// equal to the core by tests/js/item-size.test.mjs, and sends here whatever
// it is unsure of.)
//
// The input is assumed hostile too: wrong types, cycles (stopped by the
// nesting limit), non-finite numbers, throwing getters and Proxies all end
// as a DynasliceError naming the value's path.

import { atPath, dynasliceError, flag, format, isDynasliceError } from './error.js';
import { B, BS, FALSE, L, M, N, NS, NULL, S, SS, STREAM_HEADER, TRUE } from './tags.js';

/** DynamoDB's nesting limit: a value inside 32 lists or maps is too deep. */
const MAX_NESTING_DEPTH = 32;
/**
 * Containers read before giving up: past DynamoDB's limit, so validation
 * can report an item a little too deep with its path, yet bounded for
 * cyclic or absurd input.
 */
const READ_DEPTH = MAX_NESTING_DEPTH + 8;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const utf8 = new TextEncoder();
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** How many bytes the minimal LEB128 varint of `n` takes. */
function varintWidth(n) {
  let width = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    width += 1;
  }
  return width;
}

/** Writes the minimal LEB128 varint of `n` at `at`; returns the position after it. */
function putVarint(buf, at, n) {
  while (n >= 0x80) {
    buf[at++] = (n % 128) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[at++] = n;
  return at;
}

/** Reads item options shared by every function taking items. */
export function inputOptions(options) {
  return {
    plain: format(options) === 'plain',
    allowImprecise: flag(options, 'allowImpreciseNumbers', false),
    removeUndefined: flag(options, 'removeUndefinedValues', false),
  };
}

/** DynamoDB JSON, as parents and chunks are read from DynamoDB. */
export const DYNAMODB_INPUT = Object.freeze({ plain: false, allowImprecise: false, removeUndefined: false });

/**
 * Binary values at least this long are not copied into the writer's buffer:
 * they are referenced, and copied once, into the finished stream.
 */
const REFERENCE_BYTES = 16 * 1024;

class Writer {
  constructor(options) {
    this.options = options;
    this.buf = new Uint8Array(4096);
    this.pos = 0;
    /** Where the bytes of `buf` not yet in `parts` begin. */
    this.start = 0;
    /** The stream so far, in order: spans of earlier buffers and referenced binaries. */
    this.parts = [];
    /** Bytes in `parts`. */
    this.flushed = 0;
    /** Each referenced binary, its length when read and its path, checked by `take`. */
    this.referenced = [];
    /** Path segments of the value being read: names and `[i]` indices. */
    this.path = [];
  }

  /** The stream's length so far. */
  get length() {
    return this.flushed + this.pos - this.start;
  }

  /** Makes room for `n` more bytes. */
  reserve(n) {
    if (this.pos + n <= this.buf.length) return;
    // Bytes before `start` are already in `parts`: only the rest moves.
    const live = this.pos - this.start;
    let size = this.buf.length * 2;
    while (size < live + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(this.start, this.pos));
    this.buf = grown;
    this.pos = live;
    this.start = 0;
  }

  byte(b) {
    this.reserve(1);
    this.buf[this.pos++] = b;
  }

  varint(n) {
    this.reserve(10);
    this.pos = putVarint(this.buf, this.pos, n);
  }

  /** A string as a length and its UTF-8 bytes (lone surrogates become U+FFFD). */
  text(s) {
    const n = s.length;
    // At most 3 UTF-8 bytes per UTF-16 unit.
    const width = varintWidth(n * 3);
    this.reserve(width + n * 3);
    const buf = this.buf;
    const start = this.pos + width;
    let p = start;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[p++] = c;
    }
    if (i < n) p = start + utf8.encodeInto(s, buf.subarray(start)).written;
    this.pos = p;
    // The length's varint was reserved for the longest encoding: write it,
    // moving the text back if it takes fewer bytes.
    const len = p - start;
    const at = start - width;
    const actual = varintWidth(len);
    if (actual < width) {
      buf.copyWithin(at + actual, start, p);
      this.pos -= width - actual;
    }
    putVarint(buf, at, len);
  }

  bytes(b) {
    this.varint(b.length);
    if (b.length >= REFERENCE_BYTES) {
      this.parts.push(this.buf.subarray(this.start, this.pos), b);
      this.flushed += this.pos - this.start + b.length;
      this.start = this.pos;
      this.referenced.push({ bytes: b, length: b.length, path: [...this.path] });
      return;
    }
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  fail(message, code = 'INPUT_INVALID') {
    return atPath(code, this.path, message);
  }

  /** One value with `depth` lists and maps around it. */
  value(value, depth) {
    if (depth >= READ_DEPTH) {
      throw this.fail(`nesting depth ${depth + 1}, limit ${MAX_NESTING_DEPTH}`, 'NESTING_TOO_DEEP');
    }
    if (this.options.plain) this.plain(value, depth);
    else this.typed(value, depth);
  }

  list(array, depth) {
    const n = array.length;
    if (!Number.isSafeInteger(n) || n < 0) throw this.fail('an array without a valid length');
    this.byte(L);
    this.varint(n);
    for (let i = 0; i < n; i++) {
      this.path.push(i);
      this.value(array[i], depth + 1);
      this.path.pop();
    }
  }

  /** One name and its value, `depth` lists and maps deep. */
  field(name, value, depth) {
    this.text(name);
    this.path.push(name);
    this.value(value, depth);
    this.path.pop();
  }

  /** A plain map or a `Map` with string keys, as an M value. */
  mapValue(value, depth) {
    this.byte(M);
    if (!(value instanceof Map)) return this.entries(value, depth + 1);
    // Gathered first: the count goes before the entries, which are written
    // in name order, without the undefined ones under removeUndefinedValues.
    const size = value.size;
    const pairs = [];
    for (const pair of value) {
      if (typeof pair[0] !== 'string') throw this.fail('a Map must have string keys');
      if (!this.options.removeUndefined || pair[1] !== undefined) pairs.push(pair);
    }
    if (pairs.length > 1) pairs.sort(([a], [b]) => byUtf8(a, b));
    this.varint(pairs.length);
    for (const [key, element] of pairs) this.field(key, element, depth + 1);
    if (value.size !== size) throw this.fail('the Map changed while it was read');
  }

  /** An object's own enumerable properties, each value `depth` lists and maps deep. */
  entries(value, depth) {
    if (!isPlainObject(value)) throw this.fail(`expected an object, got ${describe(value)}`);
    const keys = sortedNames(Object.keys(value));
    if (!this.options.removeUndefined) {
      this.varint(keys.length);
      for (const key of keys) this.field(key, value[key], depth);
      return;
    }
    // Each value read once (a getter may answer differently twice), the
    // count known before the entries are written.
    const kept = [];
    for (const key of keys) {
      const element = value[key];
      if (element !== undefined) kept.push(key, element);
    }
    this.varint(kept.length / 2);
    for (let i = 0; i < kept.length; i += 2) this.field(kept[i], kept[i + 1], depth);
  }

  /** Plain JavaScript, as `@aws-sdk/util-dynamodb` marshalls it. */
  plain(value, depth) {
    switch (typeof value) {
      case 'string':
        this.byte(S);
        return this.text(value);
      case 'number':
      case 'bigint':
        this.byte(N);
        return this.text(this.number(value));
      case 'boolean':
        return this.byte(value ? TRUE : FALSE);
      case 'undefined':
        throw this.fail('undefined is not a DynamoDB value (set removeUndefinedValues to drop it)');
      case 'object':
        if (value === null) return this.byte(NULL);
        if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
          this.byte(B);
          return this.bytes(this.binary(value));
        }
        if (Array.isArray(value)) return this.list(value, depth);
        if (value instanceof Set) return this.set(value);
        if (value instanceof Map || isPlainObject(value)) return this.mapValue(value, depth);
        if (isNumberValue(value)) {
          this.byte(N);
          return this.text(this.number(value));
        }
    }
    throw this.fail(`${describe(value)} is not a DynamoDB value`);
  }

  /** A plain number, bigint or NumberValue as DynamoDB number text. */
  number(value) {
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw this.fail(`${value} is not a DynamoDB number`, 'NUMBER_INVALID');
      if ((value > MAX_SAFE || value < -MAX_SAFE) && !this.options.allowImprecise) {
        throw this.fail(
          `${value} is beyond Number.MAX_SAFE_INTEGER; pass a bigint or NumberValue, or set allowImpreciseNumbers`,
          'NUMBER_IMPRECISE',
        );
      }
      return String(value);
    }
    if (typeof value === 'bigint') return value.toString();
    if (isNumberValue(value)) {
      const text = value.value;
      if (typeof text !== 'string') throw this.fail('NumberValue.value must be a string');
      return text;
    }
    throw this.fail(`expected a number, bigint or NumberValue in a number set, got ${describe(value)}`);
  }

  /** A `Set`: its first member decides SS, BS or NS; every member must agree. */
  set(set) {
    if (set.size === 0) throw this.fail('set is empty', 'SET_EMPTY');
    const first = set.values().next().value;
    if (typeof first === 'string') {
      this.byte(SS);
      this.varint(set.size);
      for (const member of set) this.text(this.string(member));
    } else if (first instanceof Uint8Array || first instanceof ArrayBuffer) {
      this.byte(BS);
      this.varint(set.size);
      for (const member of set) this.bytes(this.binary(member));
    } else {
      this.byte(NS);
      this.varint(set.size);
      for (const member of set) this.text(this.number(member));
    }
  }

  string(value) {
    if (typeof value !== 'string') throw this.fail(`expected a string, got ${describe(value)}`);
    return value;
  }

  /** Binary: a Uint8Array (a Buffer too) or ArrayBuffer; in DynamoDB JSON also base64 text. */
  binary(value) {
    const text = !this.options.plain && typeof value === 'string';
    const bytes = binaryBytes(value, text);
    if (bytes !== undefined) return bytes;
    throw this.fail(text ? 'B is not valid base64' : `expected a Uint8Array, got ${describe(value)}`);
  }

  array(value) {
    if (!Array.isArray(value)) throw this.fail(`expected an array, got ${describe(value)}`);
    return value;
  }

  /** DynamoDB JSON: an object with exactly one type key. */
  typed(value, depth) {
    if (!isPlainObject(value)) {
      throw this.fail(`expected a DynamoDB JSON value like {"S": "x"}, got ${describe(value)}`);
    }
    let kind;
    let keys = 0;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      kind = key;
      keys += 1;
    }
    if (keys !== 1) throw this.fail(`a DynamoDB JSON value has exactly one type key, got ${keys}`);
    const inner = value[kind];
    switch (kind) {
      case 'S':
        this.byte(S);
        return this.text(this.string(inner));
      case 'N':
        this.byte(N);
        return this.text(this.string(inner));
      case 'B':
        this.byte(B);
        return this.bytes(this.binary(inner));
      case 'BOOL':
        if (typeof inner !== 'boolean') throw this.fail('BOOL must be a boolean');
        return this.byte(inner ? TRUE : FALSE);
      case 'NULL':
        if (inner !== true) throw this.fail('NULL must be true');
        return this.byte(NULL);
      case 'L':
        return this.list(this.array(inner), depth);
      case 'M':
        this.byte(M);
        return this.entries(inner, depth + 1);
      case 'SS':
      case 'NS': {
        const members = this.array(inner);
        this.byte(kind === 'SS' ? SS : NS);
        this.varint(members.length);
        for (const member of members) this.text(this.string(member));
        return;
      }
      case 'BS': {
        const members = this.array(inner);
        this.byte(BS);
        this.varint(members.length);
        for (const member of members) this.bytes(this.binary(member));
        return;
      }
    }
    throw this.fail(`unknown DynamoDB type ${JSON.stringify(kind)}`);
  }

  /** Writes a whole item (stream header included). */
  item(item) {
    this.reserve(4);
    this.buf.set(STREAM_HEADER, this.pos);
    this.pos += 4;
    try {
      this.entries(item, 0);
    } catch (error) {
      if (isDynasliceError(error)) throw error;
      // A getter, a Proxy trap or a toString threw: the caller's value is bad.
      throw this.fail(`reading the value threw: ${error?.message ?? String(error)}`);
    } finally {
      this.path.length = 0;
    }
  }

  /** The finished stream: a view of the buffer, or one copy of all the parts. */
  take() {
    if (this.parts.length === 0) return this.buf.subarray(0, this.pos);
    // A referenced binary must still hold what was read: a resizable or
    // transferred buffer can shrink while later values are read.
    for (const { bytes, length, path } of this.referenced) {
      if (bytes.length !== length) {
        throw atPath('INPUT_INVALID', path, `binary of ${length} bytes changed to ${bytes.length} while the item was read`);
      }
    }
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    out.set(this.buf.subarray(this.start, this.pos), at);
    return out;
  }
}

/**
 * A binary value's bytes: a Uint8Array (a Buffer too) as it is, an
 * ArrayBuffer viewed, and base64 text decoded when `text` allows it (DynamoDB
 * JSON); undefined for anything else, or for text that is not base64.
 */
export function binaryBytes(value, text) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (text && typeof value === 'string') return base64Bytes(value);
  return undefined;
}

/** The bytes of strict base64 text (padded, no spaces); undefined when it is not base64. */
function base64Bytes(value) {
  if (!BASE64.test(value)) return undefined;
  const text = atob(value);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/**
 * How many bytes strict base64 text decodes to (what `base64Bytes` would
 * return, without decoding); undefined when it is not base64.
 */
export function base64Length(value) {
  if (!BASE64.test(value)) return undefined;
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return (value.length / 4) * 3 - padding;
}

/** True for an object made by `{}` or `Object.create(null)`. */
export function isPlainObject(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** dynaslice's NumberValue or @aws-sdk/util-dynamodb's, recognised by name. */
function isNumberValue(value) {
  return value?.constructor?.name === 'NumberValue';
}

/** A short description of a value's type for error messages. */
function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const kind = typeof value;
  if (kind === 'object') {
    const name = value.constructor?.name;
    return `an object (${typeof name === 'string' ? name : 'no prototype'})`;
  }
  return kind === 'undefined' ? 'undefined' : `a ${kind}`;
}

/** Code units from U+D800 up: where UTF-16 order and UTF-8 byte order can differ. */
const HIGH_UNITS = /[\ud800-\uffff]/;

/**
 * UTF-8 byte order of two strings (code point order). UTF-16 code unit order
 * agrees except between a surrogate (a code point from U+10000) and a unit
 * from U+E000, so those two ranges swap places before comparing.
 */
function byUtf8(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Names in the order writers emit them (docs/FORMAT.md, "Value stream"):
 * ascending UTF-8 bytes, so an item always gives the same bytes as core's
 * writer. The native sort is UTF-16 order, which is the same unless a name
 * holds a unit from U+D800 up.
 */
function sortedNames(names) {
  if (names.length < 2) return names;
  names.sort();
  for (const name of names) if (HIGH_UNITS.test(name)) return names.sort(byUtf8);
  return names;
}

/**
 * One item as a value stream. `options` is what `inputOptions` read; the
 * result is a view of the writer's buffer, copied by the call that takes it.
 */
export function encodeItem(item, options) {
  const writer = new Writer(options);
  writer.item(item);
  return writer.take();
}

/** Several items (chunks) in one buffer, with where each ends. */
export function encodeItems(items, options, what) {
  if (!Array.isArray(items)) throw dynasliceError('INPUT_INVALID', `${what} must be an array of chunk items`);
  const writer = new Writer(options);
  const ends = new Uint32Array(items.length);
  for (let i = 0; i < items.length; i++) {
    writer.item(items[i]);
    ends[i] = writer.length;
  }
  return { bytes: writer.take(), ends };
}
