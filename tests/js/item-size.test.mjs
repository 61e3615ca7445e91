// itemSize's JavaScript mirror of the size rules (wasm/js/size.js) against
// the core's own count (the value stream sized in WebAssembly): equal on
// 100,000 generated items in both formats, and on every item of the shared
// vectors. Where the mirror is unsure it must say so (and itemSize asks the
// core); it may never give a size for an item the core refuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemSize, NumberValue } from 'dynaslice';
import { boundApi } from '../../wasm/js/api.js';
import { inputOptions } from '../../wasm/js/encode.js';
import { itemSizeInJs, numberTextSize, UNSURE, utf8Length } from '../../wasm/js/size.js';
import { prng } from './support/documents.mjs';
import { expandItem, loadVectors } from './support/vectors.mjs';

const { itemSizeInCore } = boundApi();
const sizes = await loadVectors('sizes.json', 'dynaslice-size-vectors/1');
const streams = await loadVectors('stream.json', 'dynaslice-stream-vectors/1');
const chunkSets = await loadVectors('chunks.v2.json', 'dynaslice-chunk-vectors/2');

/** The core's answer: `{ size }` or `{ code }`. */
function coreAnswer(item, options) {
  try {
    return { size: itemSizeInCore(item, options) };
  } catch (error) {
    assert.equal(error.name, 'DynasliceError', `${error.name}: ${error.message}`);
    return { code: error.code, message: error.message };
  }
}

/** itemSize's answer, through the public function. */
function publicAnswer(item, options) {
  try {
    return { size: itemSize(item, options) };
  } catch (error) {
    return { code: error.code, message: error.message };
  }
}

/**
 * Compares the mirror, itemSize and the core on one item. Returns whether
 * the mirror answered itself (not UNSURE).
 */
function agree(item, options, label) {
  const core = coreAnswer(item, options);
  let mirror;
  try {
    mirror = itemSizeInJs(item, inputOptions(options));
  } catch (error) {
    // Only options are read before the mirror runs: then the core refuses them too.
    assert.equal(core.code, error.code, label);
    return false;
  }
  if (core.code !== undefined) assert.equal(mirror, UNSURE, `${label}: core refuses (${core.code}) but the mirror gave ${mirror}`);
  else if (mirror !== UNSURE) assert.equal(mirror, core.size, label);
  assert.deepEqual(publicAnswer(item, options), core, label);
  return mirror !== UNSURE;
}

// --- generated items -----------------------------------------------------------

const PIECES = ['a', 'Z', '0', ' ', '~', '\u007f', 'é', 'ß', '\u07ff', '\u0800', '€', '中', '\ufffd', '\uffff', '😀', '\u{10ffff}', '\ud800', '\udbff', '\udc00', '\udfff', '"', '\\', '\u0000'];

/** A generator of values from one seed; `faults` is how often a value is one the package refuses. */
function generator(seed, faults) {
  const rnd = prng(seed);
  const below = (n) => Math.floor(rnd() * n);
  const chance = (p) => rnd() < p;
  const pick = (list) => list[below(list.length)];

  const string = () => {
    const kind = below(6);
    if (kind === 0) return '';
    if (kind === 1) return 'abcdefghijklmnopqrstuvwxyz'.slice(0, 1 + below(26)).repeat(1 + below(3));
    let s = '';
    const n = kind === 5 ? 200 + below(2000) : 1 + below(12);
    for (let i = 0; i < n; i++) s += pick(PIECES);
    return s;
  };
  const digits = (n, first) => {
    let s = first ?? '';
    while (s.length < n) s += String(below(10));
    return s;
  };

  /** Number text in every spelling: signs, leading and trailing zeros, points, exponents, up to 40 digits. */
  const numberText = () => {
    const kind = below(20);
    if (kind === 0) return pick(['0', '-0', '+0', '0.000', '-0E5', '.0', '0.', '00', '1', '-1', '120', '12000', '0.012', '0.015', '-120', '1E125', '9.9999999999999999999999999999999999999E+125', '1E-130', '-1E-130', '1e126', '1e-131', '1.5E-130']);
    if (kind === 1) return digits(38, String(1 + below(9)));
    if (kind === 2) return `-${digits(1 + below(40), String(1 + below(9)))}.${digits(below(40))}`;
    const sign = pick(['', '', '-', '+']);
    const int = chance(0.2) ? '' : '0'.repeat(chance(0.3) ? below(4) : 0) + digits(below(chance(0.2) ? 40 : 8));
    const frac = chance(0.5) ? `.${digits(below(chance(0.2) ? 30 : 5))}${'0'.repeat(chance(0.3) ? below(4) : 0)}` : '';
    const body = int === '' && (frac === '' || frac === '.') ? `${int}0${frac}` : `${int}${frac}`;
    const exp = chance(0.3) ? `${pick(['e', 'E'])}${pick(['', '+', '-'])}${'0'.repeat(below(3))}${pick([String(below(10)), String(below(200)), String(below(400)), digits(1 + below(15))])}` : '';
    return `${sign}${body}${exp}`;
  };
  /** Number text that is not a number: the core counts its bytes. */
  const notNumber = () => pick(['', 'abc', '1e', '.', '-', '+', 'e5', '1e+', ' 5', '5 ', '1,000', 'NaN', 'Infinity', '-Infinity', '0x10', '1.2.3', '1e5.5', '1e5e5', '--1', '+-1', '١٢', '5é', '1😀', '\ud8001', '1_000']);
  /** An exponent too long for the mirror to add exactly: the core answers. */
  const hugeExponent = () => `${pick(['1', '12', '-3.5', '0.07'])}e${pick(['', '-', '+'])}${digits(16 + below(8), String(1 + below(9)))}`;

  const jsNumber = () => {
    const kind = below(12);
    if (kind === 0) return pick([0, -0, 1, -1, 120, 12000, 0.012, 0.015, -120, 100.5, 2 ** 53 - 1, -(2 ** 53 - 1), 5e-324, 1e-7, 1e21, 123e-20, Number.MIN_VALUE, 0.1 + 0.2]);
    if (kind <= 4) return below(10 ** (1 + below(15))) * (chance(0.3) ? -1 : 1);
    if (kind <= 6) return Math.round(rnd() * 10 ** below(12)) * 10 ** below(6);
    if (kind <= 7) return (rnd() - 0.5) * 10 ** (below(40) - 20);
    if (kind <= 9) return (Math.round(rnd() * 10 ** below(12)) / 10 ** below(12)) * (chance(0.3) ? -1 : 1); // prices, rates: few decimals
    return rnd() * 10 ** (below(600) - 300);
  };
  const bigint = () => BigInt(`${pick(['', '-'])}${digits(1 + below(45))}`);
  const bytes = (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = below(256);
    return out;
  };
  const binaryLength = () => (chance(0.02) ? 16_384 + below(20_000) : below(40));
  const plainBinary = () => {
    const n = binaryLength();
    const kind = below(4);
    if (kind === 0) return Buffer.from(bytes(n));
    if (kind === 1) return bytes(n + 1).buffer; // ArrayBuffer, never empty
    if (kind === 2) return bytes(n + 5).subarray(2, 2 + n);
    return bytes(n);
  };
  const base64 = (n) => Buffer.from(bytes(n)).toString('base64');

  // Values the package refuses (each format its own), and values the mirror leaves to the core.
  const PLAIN_REFUSED = () => pick([undefined, Number.NaN, Infinity, -Infinity, 2 ** 60, -(2 ** 53), 1e300, new Date(0), Symbol('s'), () => 1, new Set(), new Set([1, 'a']), new Set(['a', 1]), new Set([{}]), new Set([new Uint8Array(1), 'x']), new Int16Array(2), new DataView(new ArrayBuffer(2)), new (class Point {})(), new NumberValue(5), Object.assign(new NumberValue('1'), { value: 1 }), new Map([[1, 'a']])]);
  const PLAIN_UNSURE = () => pick([new Map([['a', 1], ['é', 'x']]), new Map(), new ArrayBuffer(0), new NumberValue(hugeExponent())]);
  const TYPED_REFUSED = () => pick([undefined, null, 'a', {}, { S: 1 }, { S: 'a', N: '1' }, { Q: 'x' }, { s: 'a' }, { N: 1 }, { B: 'not base64!' }, { B: 'QQ' }, { B: [1] }, { BOOL: 'true' }, { NULL: false }, { L: {} }, { M: [] }, { M: { x: 'a' } }, { SS: 'a' }, { SS: [1] }, { NS: [1] }, { BS: ['%%'] }, { L: [{ S: 'ok' }, { S: 2 }] }, new Date(0)]);

  const plain = (depth) => {
    if (chance(faults)) return chance(0.7) ? PLAIN_REFUSED() : PLAIN_UNSURE();
    const kind = below(depth >= 4 ? 9 : 12);
    switch (kind) {
      case 0:
      case 1:
        return string();
      case 2:
        return jsNumber();
      case 3:
        return pick([bigint(), new NumberValue(numberText())]);
      case 4:
        return chance(0.5);
      case 5:
        return null;
      case 6:
        return plainBinary();
      case 7: {
        const n = 1 + below(5);
        const kindOf = below(3);
        const set = new Set();
        for (let i = 0; i < n; i++) set.add(kindOf === 0 ? string() : kindOf === 1 ? plainBinary() : pick([jsNumber(), bigint(), new NumberValue(numberText())]));
        return set;
      }
      case 8:
        return pick([numberText(), string()]);
      case 9:
      case 10:
        return Array.from({ length: below(6) }, () => plain(depth + 1));
      default: {
        const map = chance(0.1) ? Object.create(null) : {};
        for (let i = below(6); i > 0; i--) map[string()] = plain(depth + 1);
        return map;
      }
    }
  };

  const typed = (depth) => {
    if (chance(faults)) return chance(0.8) ? TYPED_REFUSED() : { N: hugeExponent() };
    const kind = below(depth >= 4 ? 10 : 13);
    const members = (make) => Array.from({ length: below(5) }, make); // empty and repeated members are counted, not refused
    switch (kind) {
      case 0:
      case 1:
        return { S: string() };
      case 2:
      case 3:
        return { N: chance(0.9) ? numberText() : notNumber() };
      case 4:
        return pick([{ B: base64(binaryLength()) }, { B: plainBinary() }]);
      case 5:
        return { BOOL: chance(0.5) };
      case 6:
        return { NULL: true };
      case 7:
        return { SS: members(string) };
      case 8:
        return { NS: members(() => (chance(0.9) ? numberText() : notNumber())) };
      case 9:
        return { BS: members(() => (chance(0.5) ? base64(below(9)) : plainBinary())) };
      case 10:
      case 11:
        return { L: Array.from({ length: below(6) }, () => typed(depth + 1)) };
      default: {
        const map = {};
        for (let i = below(6); i > 0; i--) map[string()] = typed(depth + 1);
        return { M: map };
      }
    }
  };

  /** Values wrapped in `n` lists or maps: around encode.js's read limit (40). */
  const deep = (value, n, plainFormat) => {
    for (let i = 0; i < n; i++) {
      if (plainFormat) value = chance(0.5) ? [value] : { k: value };
      else value = chance(0.5) ? { L: [value] } : { M: { k: value } };
    }
    return value;
  };

  return {
    item(plainFormat) {
      const item = chance(0.05) ? Object.create(null) : {};
      for (let i = 1 + below(5); i > 0; i--) item[string()] = plainFormat ? plain(0) : typed(0);
      if (chance(0.002)) item.deep = deep(plainFormat ? 1 : { N: '1' }, 36 + below(6), plainFormat);
      return item;
    },
    options(plainFormat) {
      const options = plainFormat ? { format: 'plain' } : pick([{}, { format: 'dynamodb' }]);
      if (chance(0.2)) options.removeUndefinedValues = chance(0.5);
      if (chance(0.2)) options.allowImpreciseNumbers = chance(0.5);
      return options;
    },
  };
}

test('100,000 generated items: the mirror gives the core size, or leaves it to the core', () => {
  const ITEMS = 100_000;
  const seed = 15;
  const generate = generator(seed, 0.01);
  let answered = 0;
  let refused = 0;
  for (let i = 0; i < ITEMS; i++) {
    const plainFormat = i % 2 === 0;
    const item = generate.item(plainFormat);
    const options = generate.options(plainFormat);
    if (agree(item, options, `seed ${seed}, item ${i}`)) answered++;
    else if (coreAnswer(item, options).code !== undefined) refused++;
  }
  // The mirror must do the work, not pass everything to the core: with one
  // value in a hundred refused or unusual, most items have none.
  assert.ok(answered > ITEMS * 0.8, `the mirror answered ${answered} of ${ITEMS}`);
  assert.ok(refused > ITEMS * 0.03, `only ${refused} items were refused: the faults are not generated`);
});

test('items with nothing unusual: the mirror answers every one', () => {
  const generate = generator(1015, 0);
  for (let i = 0; i < 5_000; i++) {
    const plainFormat = i % 2 === 1;
    const item = generate.item(plainFormat);
    const options = { ...generate.options(plainFormat), allowImpreciseNumbers: true };
    if (item.deep !== undefined) continue;
    const core = coreAnswer(item, options);
    assert.equal(core.code, undefined, core.message);
    assert.equal(itemSizeInJs(item, inputOptions(options)), core.size, `item ${i}`);
  }
});

test('every number spelling of the generator: numberTextSize is the core size', () => {
  const generate = generator(7, 0);
  const texts = ['0', '-0', '1e0000000000000000000005', '1e000000000000001', '123456789012345e999999999999999', '-1e-999999999999999', '1.', '.1', '+.5', '5.e3'];
  const rnd = prng(8);
  for (let i = 0; i < 20_000; i++) {
    const n = generate.item(false);
    for (const value of Object.values(n)) if (value?.N !== undefined) texts.push(value.N);
    texts.push(String((rnd() - 0.5) * 10 ** Math.floor(rnd() * 60 - 30)));
  }
  assert.ok(texts.length > 10_000);
  for (const text of texts) {
    const item = { n: { N: text } };
    const mirror = itemSizeInJs(item, inputOptions());
    if (mirror !== UNSURE) assert.equal(mirror, itemSizeInCore(item), JSON.stringify(text));
  }
});

test('JavaScript numbers: sized without their text exactly as String(value) is sized by the core', () => {
  const rnd = prng(21);
  const plain = inputOptions({ format: 'plain' });
  const values = [0.1, 0.2, 0.1 + 0.2, 0.3, 1 / 3, 2 / 3, 0.5, 0.05, 0.015, 1.005, 123.45, 9.95, 99.99, 1e-7, 1.5e-7, 1e-6, 5e-324, 2 ** -1074, 2 ** 52 - 0.5, 2 ** 49 + 0.5, 4503599627370495.5, 0.000001, 1234567.891, Math.PI, Math.E, -0.001, -28.49];
  for (let i = 0; i < 100_000; i++) {
    const decimals = Math.floor(rnd() * 14);
    const digits = Math.floor(rnd() * 10 ** Math.floor(rnd() * 17));
    const sign = rnd() < 0.3 ? -1 : 1;
    values.push(sign * (digits / 10 ** decimals), sign * digits * 10 ** -decimals, sign * rnd() * 10 ** Math.floor(rnd() * 40 - 25));
  }
  const fractions = values.filter((value) => !Number.isInteger(value));
  assert.ok(fractions.length > 200_000);
  for (const value of fractions) {
    const mirror = itemSizeInJs({ n: value }, plain);
    assert.equal(mirror, 1 + numberTextSize(String(value)), String(value));
  }
  // And the core agrees on the text (a sample: the core call is the slow part).
  for (let i = 0; i < fractions.length; i += 37) {
    const value = fractions[i];
    assert.equal(itemSizeInJs({ n: value }, plain), itemSizeInCore({ n: value }, { format: 'plain' }), String(value));
  }
});

// --- the shared vectors ----------------------------------------------------------

test('sizes.json items and numbers: the mirror answers each, exactly', () => {
  for (const c of sizes.items) {
    const item = expandItem(c.item);
    assert.equal(itemSizeInJs(item, inputOptions()), c.size, c.name);
    assert.equal(itemSizeInCore(item), c.size, c.name);
  }
  for (const c of sizes.numbers) {
    assert.equal(numberTextSize(c.text), c.size, c.text);
    assert.equal(itemSizeInJs({ n: { N: c.text } }, inputOptions()), 1 + c.size, c.text);
    const plain = { format: 'plain' };
    assert.equal(itemSizeInJs({ n: new NumberValue(c.text) }, inputOptions(plain)), 1 + c.size, c.text);
    assert.equal(itemSizeInJs({ n: new Set([new NumberValue(c.text)]) }, inputOptions(plain)), 1 + c.size, c.text);
  }
});

test('sizes.json invalid, stream.json and chunks.json items: the mirror agrees with the core', () => {
  const items = [
    ...sizes.invalid.map((c) => [c.name, expandItem(c.item)]),
    ...streams.valid.map((c) => [c.name, c.item]),
    ...chunkSets.cases.flatMap((c) => [[`${c.name} item`, expandItem(c.item)], [`${c.name} parent`, c.parent], ...c.chunks.map((chunk, i) => [`${c.name} chunk ${i}`, chunk])]),
  ];
  assert.ok(items.length > 100);
  for (const [name, item] of items) assert.ok(agree(item, {}, name), `${name}: the mirror left it to the core`);
});

// --- what the mirror counts, by hand ----------------------------------------------

test('UTF-8 lengths: surrogate pairs are 4 bytes, a lone surrogate 3 (U+FFFD)', () => {
  const encoder = new TextEncoder();
  const cases = ['', 'abc', 'é', '€', '😀', '\ud800', '\udc00', '\udc00\ud800', 'a\ud800b', '\ud83d\ude00\ud83d', '\u07ff\u0800', '\uffff'];
  for (const s of cases) assert.equal(utf8Length(s), encoder.encode(s).length, JSON.stringify(s));
  assert.equal(utf8Length('a😀'), 5);
  assert.equal(utf8Length('\ud800\ud800'), 6);
});

test('what the mirror leaves to the core still gets the core answer from itemSize', () => {
  const plain = { format: 'plain' };
  const cases = [
    [{ m: new Map([['a', 'b']]) }, plain, 1 + 3 + 1 + 1 + 1],
    [{ b: new ArrayBuffer(0) }, plain, 1],
    [{ n: { N: '1e99999999999999999999' } }, {}, 1 + 2],
    [{ n: { N: '12e99999999999999999999' } }, {}, 1 + 2],
  ];
  for (const [item, options, size] of cases) {
    assert.equal(itemSizeInJs(item, inputOptions(options)), UNSURE, JSON.stringify(Object.keys(item)));
    assert.equal(itemSize(item, options), size);
  }
});

test('Proxies: read as encode.js reads them, or left to the core', () => {
  const plain = { format: 'plain' };
  // An array claiming a binary's prototype is a binary to encode.js.
  const binaryArray = new Proxy([1, 2, 3], { getPrototypeOf: () => Uint8Array.prototype });
  const plainProxy = new Proxy({ a: 'xy', l: new Proxy([true, null], {}) }, {});
  const cases = [
    [{ p: binaryArray }, false],
    [{ p: plainProxy }, true],
    [plainProxy, true],
    [{ p: new Proxy({}, { getPrototypeOf: () => Set.prototype }) }, false],
    [{ p: new Proxy({ x: 1 }, { ownKeys: () => { throw new Error('no keys'); } }) }, false],
  ];
  for (const [i, [item, answered]] of cases.entries()) {
    assert.equal(agree(item, plain, `case ${i}`), answered, `case ${i}`);
  }
  assert.equal(itemSize({ p: binaryArray }, plain), 1 + 3);
  assert.equal(itemSize(plainProxy, plain), 1 + 2 + 1 + 3 + 2 + 2);
});

test('an enumerable property on Object.prototype is not counted as every object\'s own', () => {
  const item = { a: 'x', m: { b: 1 } };
  const plain = { format: 'plain' };
  const size = 2 + 1 + 3 + 1 + 1 + 2;
  assert.equal(itemSizeInJs(item, inputOptions(plain)), size);
  Object.prototype.polluted = 'yyy'; // undone below
  try {
    assert.equal(itemSizeInJs(item, inputOptions(plain)), UNSURE);
    assert.equal(itemSize(item, plain), size);
    assert.equal(itemSize({ a: { S: 'x' } }), 2);
  } finally {
    delete Object.prototype.polluted;
  }
  assert.equal(itemSizeInJs(item, inputOptions(plain)), size);
});
