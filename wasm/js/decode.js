// The value stream (docs/FORMAT.md §3) back into JavaScript items: the one
// form in which items come out of WebAssembly, so building an object costs
// JavaScript work only, not a call across the boundary per value. The bytes
// come from the core's encoder after it has checked the item; the reader
// still stops at the first malformed byte rather than guess.

import { NumberValue } from './number-value.js';
import { atPath, dynasliceError } from './error.js';
import { B, BS, FALSE, L, M, N, NS, NULL, S, SS, STREAM_HEADER, TRUE } from './tags.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Binary values from this size on are returned as views of the stream. */
const SHARE_BYTES = 64 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

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

class Reader {
  constructor(bytes, options) {
    this.bytes = bytes;
    this.pos = 0;
    this.plain = options.plain;
    this.wrapNumbers = options.wrapNumbers;
    this.path = [];
  }

  malformed() {
    return dynasliceError('STREAM_TRUNCATED', `value stream ends or breaks at byte ${this.pos}`);
  }

  byte() {
    if (this.pos >= this.bytes.length) throw this.malformed();
    return this.bytes[this.pos++];
  }

  varint() {
    let value = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
      if (scale > 2 ** 49) throw this.malformed();
    }
  }

  /** A length, then that many bytes (a view). */
  span() {
    const len = this.varint();
    const start = this.pos;
    if (len > this.bytes.length - start) throw this.malformed();
    this.pos = start + len;
    return this.bytes.subarray(start, this.pos);
  }

  text() {
    const len = this.varint();
    const bytes = this.bytes;
    const start = this.pos;
    const end = start + len;
    if (len > bytes.length - start) throw this.malformed();
    this.pos = end;
    if (len <= 32) {
      let s = '';
      for (let i = start; i < end; i++) {
        const c = bytes[i];
        if (c >= 0x80) return utf8.decode(bytes.subarray(start, end));
        s += String.fromCharCode(c);
      }
      return s;
    }
    return utf8.decode(bytes.subarray(start, end));
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

  /** `count` names and values into `object`. */
  entries(object, count) {
    for (let i = 0; i < count; i++) {
      const name = this.text();
      this.path.push(name);
      const value = this.value();
      this.path.pop();
      if (name === '__proto__') {
        Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
      } else {
        object[name] = value;
      }
    }
    return object;
  }

  members(read) {
    const count = this.varint();
    const out = new Array(count);
    for (let i = 0; i < count; i++) out[i] = read();
    return out;
  }

  value() {
    const tag = this.byte();
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
        const count = this.varint();
        const list = new Array(count);
        for (let i = 0; i < count; i++) {
          this.path.push(i);
          list[i] = this.value();
          this.path.pop();
        }
        return plain ? list : { L: list };
      }
      case M: {
        const map = this.entries({}, this.varint());
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
    if (b.length < STREAM_HEADER.length || STREAM_HEADER.some((byte, i) => b[i] !== byte)) {
      throw dynasliceError('STREAM_BAD_MAGIC', 'not a version 1 value stream');
    }
    this.pos = STREAM_HEADER.length;
    const item = this.entries({}, this.varint());
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
