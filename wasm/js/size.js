// itemSize without crossing into WebAssembly: the size rules of
// core/src/size.rs and core/src/number.rs, mirrored in JavaScript for speed
// (issue 15). Encoding an item into a value stream costs several times the
// walk alone, and sizing is what callers do to every item they write.
//
// The mirror answers only where it is certain to give core's answer for the
// same input: plain objects, arrays, strings, numbers, booleans, null,
// binaries, Sets and NumberValues, and DynamoDB JSON of the expected shape.
// For anything else (a value encode.js refuses, a Map, a resizable or
// detached buffer, an exponent too long to add exactly, nesting near the
// limit, a getter that throws) it returns UNSURE and the caller measures
// through WebAssembly as before, so errors and edge cases stay core's.
// tests/js/item-size.test.mjs proves the two equal on generated items and
// on every item of tests/vectors/.
//
// Objects are read in their own order, not sorted as encode.js reads them:
// an item whose getters change it while it is read may be measured as read
// in either order (and read twice when the mirror hands it to the core).

import { base64Length, isPlainObject } from './encode.js';

/** What `itemSizeInJs` returns when only the core may answer. */
export const UNSURE = -1;

/**
 * Lists and maps read around a value before the core must decide: from
 * here encode.js refuses the item as too deep (its READ_DEPTH is 40, and a
 * value in 40 containers is refused), so a container this deep is left to it.
 */
const DEEPEST = 39;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/**
 * Sizes from here on are left to the core: its sizes are a `usize` of
 * wasm32, and an item this large is rare enough to measure the old way.
 */
const LARGEST = 2 ** 30;
/** Exponent digits (after leading zeros) the mirror adds exactly; core saturates longer ones. */
const EXPONENT_DIGITS = 15;

/** Thrown inside the walk when only the core may answer; caught by `itemSizeInJs`. */
const UNSURE_SIGNAL = Object.freeze({ unsure: true });

/**
 * The exact size of `item`, as core computes it, or UNSURE. `options` is what
 * encode.js's `inputOptions` read (`plain`, `allowImprecise`, `removeUndefined`).
 */
export function itemSizeInJs(item, options) {
  try {
    if (!isPlainObject(item) || inheritsEnumerable()) return UNSURE;
    const size = options.plain ? plainAttributes(item, options) : typedAttributes(item, options);
    return size <= LARGEST ? size : UNSURE;
  } catch {
    // UNSURE_SIGNAL, or the input threw (a getter, a Proxy trap): encode.js
    // reads the item again and reports what it finds with its path.
    return UNSURE;
  }
}

/** Any UTF-16 unit from U+0080 up: a string without one is ASCII, a byte a unit. */
const NOT_ASCII = /[^\x00-\x7f]/;
/** Strings longer than this are tested for ASCII by NOT_ASCII: faster per unit, slower to start. */
const SHORT_STRING = 32;

/**
 * UTF-8 bytes of a string as TextEncoder writes it: a lone surrogate
 * becomes U+FFFD (3 bytes), as encode.js sends it to the core. ASCII is
 * found first, without counting (measured on the 420 KiB document's 34,870
 * strings and names, Node 20: a unit-by-unit count 0.95 ms, this 0.66 ms).
 */
export function utf8Length(s) {
  const n = s.length;
  if (n > SHORT_STRING) {
    if (!NOT_ASCII.test(s)) return n;
  } else {
    let units = 0;
    let i = 0;
    for (; i + 3 < n; i += 4) units |= s.charCodeAt(i) | s.charCodeAt(i + 1) | s.charCodeAt(i + 2) | s.charCodeAt(i + 3);
    for (; i < n; i++) units |= s.charCodeAt(i);
    if (units < 0x80) return n;
  }
  return utf8Count(s);
}

/** UTF-8 bytes of a string that is not all ASCII, unit by unit. */
function utf8Count(s) {
  const n = s.length;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c < 0xd800 || c > 0xdbff) bytes += 3;
    else if (i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * True when Object.prototype has an enumerable property. The walk reads
 * objects with `for...in` (measured 15-25 % faster than `Object.keys` on
 * the bench's documents), which would count such a property as every
 * object's own; encode.js reads own properties only.
 */
function inheritsEnumerable() {
  for (const _ in Object.prototype) return true;
  return false;
}

// --- plain JavaScript values (format: 'plain') ------------------------------

/** An item's attributes: names and values, no container overhead. */
function plainAttributes(item, options) {
  const dropUndefined = options.removeUndefined;
  let total = 0;
  for (const key in item) {
    const value = item[key];
    if (value === undefined && dropUndefined) continue;
    total += utf8Length(key) + plainValue(value, 0, options);
  }
  return total;
}

/** One plain value with `depth` lists and maps around it (encode.js's `plain`). */
function plainValue(value, depth, options) {
  switch (typeof value) {
    case 'string':
      return utf8Length(value);
    case 'number':
      return jsNumberSize(value, options);
    case 'boolean':
      return 1;
    case 'bigint':
      return numberTextSize(value.toString());
    case 'object': {
      // encode.js asks "binary? array? Set? Map or plain object? NumberValue?"
      // in that order; plain objects are asked first here, being the most
      // common. Only a Proxy could answer both of two questions (a Proxy of
      // an array claiming a binary's prototype): plainList checks for it.
      if (value === null) return 1;
      if (Array.isArray(value)) return plainList(value, depth, options);
      const proto = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) return plainMap(value, depth, options);
      if (value instanceof Uint8Array || value instanceof ArrayBuffer) return binaryLength(value);
      if (value instanceof Set) return plainSet(value, options);
      // A Map goes to encode.js, which reads it once.
      if (value instanceof Map) throw UNSURE_SIGNAL;
      if (isNumberValue(value)) return numberTextSize(numberValueText(value));
    }
  }
  throw UNSURE_SIGNAL;
}

function plainList(array, depth, options) {
  if (array instanceof Uint8Array || array instanceof ArrayBuffer) throw UNSURE_SIGNAL;
  const n = array.length;
  if (!Number.isSafeInteger(n) || n < 0 || depth >= DEEPEST) throw UNSURE_SIGNAL;
  let total = 3 + n;
  for (let i = 0; i < n; i++) total += plainValue(array[i], depth + 1, options);
  return total;
}

function plainMap(object, depth, options) {
  if (depth >= DEEPEST) throw UNSURE_SIGNAL;
  const dropUndefined = options.removeUndefined;
  let total = 3;
  for (const key in object) {
    const value = object[key];
    if (value === undefined && dropUndefined) continue;
    total += 1 + utf8Length(key) + plainValue(value, depth + 1, options);
  }
  return total;
}

/** A Set: its first member decides SS, BS or NS (encode.js's `set`); no overhead. */
function plainSet(set, options) {
  const size = set.size;
  if (size === 0) throw UNSURE_SIGNAL;
  const first = set.values().next().value;
  let total = 0;
  let count = 0;
  if (typeof first === 'string') {
    for (const member of set) {
      if (typeof member !== 'string') throw UNSURE_SIGNAL;
      total += utf8Length(member);
      count++;
    }
  } else if (first instanceof Uint8Array || first instanceof ArrayBuffer) {
    for (const member of set) {
      if (!(member instanceof Uint8Array || member instanceof ArrayBuffer)) throw UNSURE_SIGNAL;
      total += binaryLength(member);
      count++;
    }
  } else {
    for (const member of set) {
      if (typeof member === 'number') total += jsNumberSize(member, options);
      else if (typeof member === 'bigint') total += numberTextSize(member.toString());
      else if (typeof member === 'object' && member !== null && isNumberValue(member)) {
        total += numberTextSize(numberValueText(member));
      } else throw UNSURE_SIGNAL;
      count++;
    }
  }
  // encode.js writes the size first: a set that changed while read is its to refuse.
  if (count !== size || set.size !== size) throw UNSURE_SIGNAL;
  return total;
}

/**
 * A Uint8Array's or ArrayBuffer's length. Buffers that can shrink or grow,
 * and detached ones, are left to encode.js, which checks a long binary's
 * length again when the stream is finished.
 */
function binaryLength(value) {
  if (value instanceof Uint8Array) {
    const buffer = value.buffer;
    if (buffer.resizable || buffer.growable) throw UNSURE_SIGNAL;
    return value.length;
  }
  // A detached ArrayBuffer reads as 0 bytes (encode.js refuses it), and so does an empty one.
  if (value.resizable || value.byteLength === 0) throw UNSURE_SIGNAL;
  return value.byteLength;
}

/** dynaslice's NumberValue or @aws-sdk/util-dynamodb's, recognised by name (as encode.js). */
function isNumberValue(value) {
  return value.constructor?.name === 'NumberValue';
}

function numberValueText(value) {
  const text = value.value;
  if (typeof text !== 'string') throw UNSURE_SIGNAL;
  return text;
}

/**
 * A JavaScript number's size, as the size of the text encode.js sends,
 * `String(value)`, worked out without making the text where that is certain.
 */
function jsNumberSize(value, options) {
  if (Number.isInteger(value)) {
    if (value > MAX_SAFE || value < -MAX_SAFE) {
      if (!options.allowImprecise) throw UNSURE_SIGNAL;
      return numberTextSize(String(value));
    }
    if (value === 0) return 1;
    return value < 0 ? decimalSize(-value, 0) + 1 : decimalSize(value, 0);
  }
  if (!Number.isFinite(value)) throw UNSURE_SIGNAL;
  // Not an integer, so below 2^52: never NUMBER_IMPRECISE.
  const magnitude = value < 0 ? -value : value;
  const scaled = fewestDecimals(magnitude);
  if (scaled >= 0) return decimalSize(Math.round(magnitude * POWERS[scaled]), scaled) + (value < 0 ? 1 : 0);
  return numberTextSize(String(value));
}

/** 10^k, exact as doubles up to 10^22. */
const POWERS = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Scaled values below this are a quarter unit or less from the double they came from. */
const SCALED_LIMIT = 2 ** 50;

/**
 * The fewest decimals `k` (1..22) such that some decimal with `k` decimals
 * reads back as `magnitude`, or -1 when scaling reaches 2^50 first.
 * That decimal is the one `String(magnitude)` writes (the shortest that
 * reads back; ECMA-262 Number::toString): below 2^50, the rounding of
 * `magnitude * 10^j` is under a quarter unit, so a decimal with fewer
 * decimals would have been found at `j`, and two decimals with `k`
 * decimals would be more than an ulp apart, so only one reads back.
 * `m / 10^k === magnitude` is that reading back: both are exact doubles
 * and IEEE division rounds to nearest, as reading decimal text does.
 */
function fewestDecimals(magnitude) {
  for (let k = 1; k < POWERS.length; k++) {
    const scaled = magnitude * POWERS[k];
    if (scaled >= SCALED_LIMIT) return -1;
    if (Math.round(scaled) / POWERS[k] === magnitude) return k;
  }
  return -1;
}

/**
 * The size of the positive decimal `digits × 10^-decimals` (`digits` a
 * safe integer, not 0): base-100 pairs aligned on the decimal point from
 * the first significant digit to the last, plus one byte.
 */
function decimalSize(digits, decimals) {
  let trailing = 0;
  while (digits % 10 === 0) {
    digits /= 10;
    trailing++;
  }
  let count = 1;
  while (count < 16 && digits >= POWERS[count]) count++;
  const first = trailing + count - 1 - decimals;
  const last = trailing - decimals;
  return Math.floor(first / 2) - Math.floor(last / 2) + 2;
}

/** True for a UTF-16 unit that is an ASCII digit. */
const isDigit = (c) => c >= 48 && c <= 57;

/**
 * The size of number text, as core's `size::number_text_size`: the stored
 * size of a decimal (`number::Decimal::parse`, then `stored_size`), or the
 * text's UTF-8 length when it does not parse. Range and precision are not
 * checked here, as the core does not check them for a size.
 */
export function numberTextSize(text) {
  const n = text.length;
  let i = 0;
  let negative = false;
  const sign = n > 0 ? text.charCodeAt(0) : 0;
  if (sign === 45) {
    negative = true;
    i = 1;
  } else if (sign === 43) i = 1;
  const intStart = i;
  while (i < n && isDigit(text.charCodeAt(i))) i++;
  const intEnd = i;
  let fracStart = i;
  let fracEnd = i;
  if (i < n && text.charCodeAt(i) === 46) {
    fracStart = ++i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    fracEnd = i;
  }
  if (intEnd === intStart && fracEnd === fracStart) return utf8Length(text);
  let shift = 0;
  if (i < n) {
    const e = text.charCodeAt(i);
    if (e !== 101 && e !== 69) return utf8Length(text);
    i++;
    let expNegative = false;
    const expSign = i < n ? text.charCodeAt(i) : 0;
    if (expSign === 45) {
      expNegative = true;
      i++;
    } else if (expSign === 43) i++;
    if (i === n) return utf8Length(text);
    while (i < n && text.charCodeAt(i) === 48) i++;
    const digitsAt = i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (!isDigit(c)) return utf8Length(text);
      shift = shift * 10 + (c - 48);
      i++;
    }
    // Core saturates an i64 exponent; past 15 digits doubles are no longer exact.
    if (i - digitsAt > EXPONENT_DIGITS) throw UNSURE_SIGNAL;
    if (expNegative) shift = -shift;
  }

  // Significant digits and the power of ten of the first, as Decimal::parse.
  let first = intStart;
  while (first < intEnd && text.charCodeAt(first) === 48) first++;
  let significant;
  let firstPower;
  if (first === intEnd) {
    let lead = fracStart;
    while (lead < fracEnd && text.charCodeAt(lead) === 48) lead++;
    let end = fracEnd;
    while (end > lead && text.charCodeAt(end - 1) === 48) end--;
    significant = end - lead;
    firstPower = -1 - (lead - fracStart);
  } else {
    let fracLast = fracEnd;
    while (fracLast > fracStart && text.charCodeAt(fracLast - 1) === 48) fracLast--;
    if (fracLast === fracStart) {
      let intLast = intEnd;
      while (intLast > first && text.charCodeAt(intLast - 1) === 48) intLast--;
      significant = intLast - first;
    } else {
      significant = intEnd - first + (fracLast - fracStart);
    }
    firstPower = intEnd - first - 1;
  }
  if (significant === 0) return 1;
  const exponent = firstPower + shift;
  const last = exponent - (significant - 1);
  return Math.floor(exponent / 2) - Math.floor(last / 2) + 2 + (negative ? 1 : 0);
}

// --- DynamoDB JSON (the default format) ----------------------------------------

function typedAttributes(item, options) {
  const dropUndefined = options.removeUndefined;
  let total = 0;
  for (const key in item) {
    const value = item[key];
    if (value === undefined && dropUndefined) continue;
    total += utf8Length(key) + typedValue(value, 0, options);
  }
  return total;
}

/** One DynamoDB JSON value (encode.js's `typed`): an object with exactly one type key. */
function typedValue(value, depth, options) {
  if (!isPlainObject(value)) throw UNSURE_SIGNAL;
  let kind;
  let keys = 0;
  for (const key in value) {
    kind = key;
    keys += 1;
  }
  if (keys !== 1) throw UNSURE_SIGNAL;
  const inner = value[kind];
  switch (kind) {
    case 'S':
      if (typeof inner !== 'string') break;
      return utf8Length(inner);
    case 'N':
      if (typeof inner !== 'string') break;
      return numberTextSize(inner);
    case 'B':
      return typedBinaryLength(inner);
    case 'BOOL':
      if (typeof inner !== 'boolean') break;
      return 1;
    case 'NULL':
      if (inner !== true) break;
      return 1;
    case 'L': {
      if (!Array.isArray(inner) || depth >= DEEPEST) break;
      const n = inner.length;
      if (!Number.isSafeInteger(n) || n < 0) break;
      let total = 3 + n;
      for (let i = 0; i < n; i++) total += typedValue(inner[i], depth + 1, options);
      return total;
    }
    case 'M': {
      if (!isPlainObject(inner) || depth >= DEEPEST) break;
      const dropUndefined = options.removeUndefined;
      let total = 3;
      for (const name in inner) {
        const element = inner[name];
        if (element === undefined && dropUndefined) continue;
        total += 1 + utf8Length(name) + typedValue(element, depth + 1, options);
      }
      return total;
    }
    case 'SS':
    case 'NS': {
      if (!Array.isArray(inner)) break;
      const size = kind === 'SS' ? utf8Length : numberTextSize;
      let total = 0;
      for (let i = 0; i < inner.length; i++) {
        const member = inner[i];
        if (typeof member !== 'string') throw UNSURE_SIGNAL;
        total += size(member);
      }
      return total;
    }
    case 'BS': {
      if (!Array.isArray(inner)) break;
      let total = 0;
      for (let i = 0; i < inner.length; i++) total += typedBinaryLength(inner[i]);
      return total;
    }
  }
  throw UNSURE_SIGNAL;
}

/** A DynamoDB JSON binary's length: bytes, or strict base64 text (decoded length). */
function typedBinaryLength(value) {
  if (typeof value === 'string') {
    const length = base64Length(value);
    if (length === undefined) throw UNSURE_SIGNAL;
    return length;
  }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return binaryLength(value);
  throw UNSURE_SIGNAL;
}
