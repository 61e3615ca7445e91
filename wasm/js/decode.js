// The value stream (docs/FORMAT.md §3) back into JavaScript items: the one
// form in which items come out of WebAssembly, so building an object costs
// JavaScript work only, not a call across the boundary per value. The bytes
// come from the core's encoder after it has checked the item; the reader
// still holds them to every rule core's decoder holds (shortest varints,
// lengths within the input, UTF-8, depth, unique names), with the same codes
// (tests/vectors/stream.json runs through both).

import { NumberValue } from './number-value.js';
import { atPath, dynasliceError } from './error.js';
import { B, BS, FALSE, L, M, N, NS, NULL, S, SS, STREAM_HEADER, TRUE } from './tags.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Binary values from this size on are returned as views of the stream. */
const SHARE_BYTES = 64 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Lists and maps around a value, at most (DynamoDB's limit; core's MAX_NESTING_DEPTH). */
const MAX_DEPTH = 32;

/**
 * A number's text in one spelling per value: sign, digits without leading
 * or trailing zeros, and a power of ten (`"1.50"` and `"15e-1"` agree).
 */
function canonical(text) {
  let t = text;
  let sign = '';
  if (t[0] === '+' || t[0] === '-') {
    if (t[0] === '-') sign = '-';
    t = t.slice(1);
  }
  let exponent = 0;
  const e = t.search(/[eE]/);
  if (e >= 0) {
    exponent = Number(t.slice(e + 1));
    t = t.slice(0, e);
  }
  const dot = t.indexOf('.');
  if (dot >= 0) {
    exponent -= t.length - dot - 1;
    t = t.slice(0, dot) + t.slice(dot + 1);
  }
  let a = 0;
  while (a < t.length && t[a] === '0') a++;
  let b = t.length;
  while (b > a && t[b - 1] === '0') {
    b--;
    exponent++;
  }
  return a === b ? '0' : `${sign}${t.slice(a, b)}e${exponent}`;
}

/** UTF-8 text, or STREAM_INVALID_UTF8 naming where its length began. */
function utf8Text(bytes, at) {
  try {
    return utf8.decode(bytes);
  } catch {
    throw dynasliceError('STREAM_INVALID_UTF8', `value stream has invalid UTF-8 at byte ${at}`);
  }
}

class Reader {
  constructor(bytes, options) {
    this.bytes = bytes;
    this.pos = 0;
    this.plain = options.plain;
    this.wrapNumbers = options.wrapNumbers;
    this.path = [];
  }

  truncated() {
    return dynasliceError('STREAM_TRUNCATED', `value stream truncated at byte ${this.pos}`);
  }

  byte() {
    if (this.pos >= this.bytes.length) throw this.truncated();
    return this.bytes[this.pos++];
  }

  /**
   * An unsigned LEB128 number in its shortest spelling, of at most 64 bits.
   * Values past 2^53 lose precision, but only lengths and counts are
   * varints, and those are refused against the input's length.
   */
  varint() {
    const at = this.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      // The tenth byte may only carry the top bit of a u64; a zero final
      // byte after the first would be a longer spelling.
      if ((i === 9 && (b & 0x7f) > 1) || (i > 0 && b === 0)) break;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw dynasliceError('STREAM_BAD_VARINT', `value stream has a bad length at byte ${at}`);
  }

  /** A length or count: never more than the bytes that remain (every element takes one). */
  count() {
    const n = this.varint();
    if (n > this.bytes.length - this.pos) throw this.truncated();
    return n;
  }

  /** A length, then that many bytes (a view). */
  span() {
    const len = this.count();
    const start = this.pos;
    this.pos = start + len;
    return this.bytes.subarray(start, this.pos);
  }

  text() {
    const at = this.pos;
    const len = this.count();
    const bytes = this.bytes;
    const start = this.pos;
    const end = start + len;
    this.pos = end;
    if (len <= 32) {
      let s = '';
      for (let i = start; i < end; i++) {
        const c = bytes[i];
        if (c >= 0x80) return utf8Text(bytes.subarray(start, end), at);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return utf8Text(bytes.subarray(start, end), at);
  }

  /**
   * Binary: small values are copied, so they do not keep the whole stream
   * alive; large ones are views of it (no copy of a payload), each over its
   * own bytes only.
   */
  binary() {
    const bytes = this.span();
    return bytes.length < SHARE_BYTES ? bytes.slice() : bytes;
  }

  /** A number as a JavaScript number when that is exact, a NumberValue when asked, else an error. */
  number(text) {
    if (this.wrapNumbers) return new NumberValue(text);
    const value = Number(text);
    const exact = String(value) === text || canonical(String(value)) === canonical(text);
    // Integers beyond 2^53 may print back exactly yet stand for several
    // values; refused as util-dynamodb does, so plain output always goes
    // back in as plain input.
    if (!exact || value > MAX_SAFE || value < -MAX_SAFE) {
      throw atPath('NUMBER_IMPRECISE', this.path, `${text} does not fit a JavaScript number exactly; set wrapNumbers`);
    }
    return value;
  }

  /** `count` names and values with `depth` lists and maps around them, into `object`. */
  entries(object, count, depth) {
    for (let i = 0; i < count; i++) {
      const name = this.text();
      this.path.push(name);
      const value = this.value(depth);
      this.path.pop();
      if (Object.hasOwn(object, name)) {
        throw dynasliceError('STREAM_DUPLICATE_NAME', `value stream repeats the name ${JSON.stringify(name)}`);
      }
      if (name === '__proto__') {
        Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
      } else {
        object[name] = value;
      }
    }
    return object;
  }

  members(read) {
    const count = this.count();
    const out = new Array(count);
    for (let i = 0; i < count; i++) out[i] = read();
    return out;
  }

  /** One value with `depth` lists and maps around it. */
  value(depth) {
    const tag = this.byte();
    if (depth >= MAX_DEPTH) throw dynasliceError('STREAM_TOO_DEEP', `value stream nests deeper than ${MAX_DEPTH}`);
    const plain = this.plain;
    switch (tag) {
      case S: {
        const s = this.text();
        return plain ? s : { S: s };
      }
      case N: {
        const n = this.text();
        return plain ? this.number(n) : { N: n };
      }
      case B: {
        const b = this.binary();
        return plain ? b : { B: b };
      }
      case FALSE:
      case TRUE: {
        const b = tag === TRUE;
        return plain ? b : { BOOL: b };
      }
      case NULL:
        return plain ? null : { NULL: true };
      case L: {
        const count = this.count();
        const list = new Array(count);
        for (let i = 0; i < count; i++) {
          this.path.push(i);
          list[i] = this.value(depth + 1);
          this.path.pop();
        }
        return plain ? list : { L: list };
      }
      case M: {
        const map = this.entries({}, this.count(), depth + 1);
        return plain ? map : { M: map };
      }
      case SS: {
        const members = this.members(() => this.text());
        return plain ? new Set(members) : { SS: members };
      }
      case NS: {
        const members = this.members(() => this.text());
        return plain ? new Set(members.map((n) => this.number(n))) : { NS: members };
      }
      case BS: {
        const members = this.members(() => this.binary());
        return plain ? new Set(members) : { BS: members };
      }
    }
    throw dynasliceError('STREAM_UNKNOWN_TAG', `value stream has unknown type tag ${tag} at byte ${this.pos - 1}`);
  }

  item() {
    const b = this.bytes;
    const magic = STREAM_HEADER.length - 1;
    if (b.length < magic) throw dynasliceError('STREAM_TRUNCATED', `value stream truncated at byte ${b.length}`);
    if (STREAM_HEADER.some((byte, i) => i < magic && b[i] !== byte)) {
      throw dynasliceError('STREAM_BAD_MAGIC', 'value stream does not start with DSV');
    }
    this.pos = magic;
    const version = this.byte();
    if (version !== STREAM_HEADER[magic]) {
      throw dynasliceError('STREAM_UNSUPPORTED_VERSION', `value stream version ${version}, this build reads ${STREAM_HEADER[magic]}`);
    }
    const item = this.entries({}, this.count(), 0);
    if (this.pos !== b.length) throw dynasliceError('STREAM_TRAILING_BYTES', `value stream has ${b.length - this.pos} bytes after its end`);
    return item;
  }
}

/**
 * A value stream as an item: `{ plain, wrapNumbers }` choose plain values
 * (numbers as JavaScript numbers, or all as NumberValue) or DynamoDB JSON.
 */
export function decodeItem(bytes, options) {
  return new Reader(bytes, options).item();
}
