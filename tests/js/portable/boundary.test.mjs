// Items cross into WebAssembly as one value stream written in JavaScript
// (wasm/js/encode.js) and come back as one read in JavaScript
// (wasm/js/decode.js). These cases aim at what such a writer and reader get
// wrong: lengths and counts whose varint width is only known afterwards,
// UTF-8 beyond ASCII, keys JavaScript treats specially, strict base64.
// Expected sizes come from TextEncoder and the size rules, worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemSize, reassemble, split } from 'dynaslice';
import { throwsDynaslice } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const utf8Length = (s) => new TextEncoder().encode(s).length;

/** The item back after a split into chunks (codec none) and reassembly. */
function roundTrip(item, options = {}) {
  const { parent, chunks } = split(item, { ...table, ...options, codec: 'none', expect: 'any' });
  return reassemble(parent, [...chunks].reverse(), { ...table, ...options });
}

test('strings of every length class and width are sized and returned exactly', () => {
  const lengths = [0, 1, 42, 43, 44, 127, 128, 129, 5461, 5462, 16_383, 16_384, 150_000];
  const units = ['a', 'é', '€', '😀', '\uD800'];
  for (const unit of units) {
    for (const length of lengths) {
      const s = unit.repeat(Math.ceil(length / unit.length));
      const size = itemSize({ pk: { S: 'k' }, s: { S: s } });
      assert.equal(size, 2 + 1 + 1 + utf8Length(s), `${JSON.stringify(unit)} x ${length}`);
    }
  }
  // Long enough to be split, so the text really travels through chunks.
  const mixed = 'aé€😀'.repeat(60_000);
  assert.equal(roundTrip({ pk: { S: 'k' }, s: { S: mixed } }).s.S, mixed);
  // A lone surrogate cannot be UTF-8: it is stored as U+FFFD, as TextEncoder writes it.
  assert.equal(roundTrip({ pk: { S: 'k' }, s: { S: `x\uD800${'y'.repeat(500_000)}` } }).s.S.slice(0, 2), 'x\uFFFD');
});

test('dropping undefined values changes a count after its varint was written', () => {
  const item = { pk: 'k' };
  let expected = 2 + 1;
  for (let i = 0; i < 300; i++) {
    item[`k${i}`] = i % 3 === 0 ? 'v' : undefined;
    if (i % 3 === 0) expected += `k${i}`.length + 1;
  }
  const nested = { pk: 'k', m: { ...item, pk: undefined } };
  const options = { format: 'plain', removeUndefinedValues: true };
  assert.equal(itemSize(item, options), expected); // 301 keys written as 101
  // pk, then m: 3 bytes, and 1 byte + name + value for each of its 100 entries.
  assert.equal(itemSize(nested, options), 2 + 1 + 1 + 3 + (expected - 3) + 100);
  const big = { ...item, pad: 'x'.repeat(500_000) };
  const back = roundTrip(big, options);
  assert.equal(Object.keys(back).length, 102);
  assert.equal(back.k299, undefined);
  assert.equal(back.k297, 'v');
});

test('long binaries keep their place among the values around them', () => {
  // Binaries from 16 KiB up are referenced until the stream is finished, then
  // copied into place; shorter ones are copied at once. Both kinds, in every
  // container, next to text written before and after them.
  const bytes = (length, seed) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff);
  const item = {
    pk: 'k',
    a: bytes(20_000, 1),
    s: 'between',
    l: [bytes(16_384, 2), 'y', bytes(16_383, 3), new Uint8Array(0)],
    set: new Set([bytes(17_000, 4), bytes(30_000, 5)]),
    m: new Map([['z', bytes(40_000, 6)], ['after', 'text']]),
    pad: 'p'.repeat(300_000),
  };
  const listBytes = 3 + 4 + (16_384 + 1 + 16_383 + 0);
  const mapBytes = 3 + 2 + (1 + 40_000) + (5 + 4);
  const expected = 2 + 1 + (1 + 20_000) + (1 + 7) + (1 + listBytes) + (3 + 47_000) + (1 + mapBytes) + (3 + 300_000);
  assert.equal(itemSize(item, { format: 'plain' }), expected);
  const back = roundTrip(item, { format: 'plain' });
  assert.deepEqual(back, { ...item, m: { z: item.m.get('z'), after: 'text' } });
});

test('a long binary that shrinks while the item is read is refused, not sent short', () => {
  const buffer = new ArrayBuffer(32_768, { maxByteLength: 65_536 });
  const item = {
    pk: 'k',
    data: new Uint8Array(buffer), // tracks the buffer's length
    get later() {
      buffer.resize(100);
      return 'x';
    },
  };
  throwsDynaslice(() => itemSize(item, { format: 'plain' }), 'INPUT_INVALID', /^data: binary of 32768 bytes changed to 100/);
});

test('a Map that grows while it is read is refused, not sent with a wrong count', () => {
  const m = new Map();
  m.set('a', {
    get x() {
      m.set('b', 1);
      return 1;
    },
  });
  throwsDynaslice(() => itemSize({ m }, { format: 'plain' }), 'INPUT_INVALID', /^m: the Map changed while it was read/);
});

test('an own __proto__ key is an attribute like any other, in and out', () => {
  const item = JSON.parse('{ "pk": { "S": "a" }, "__proto__": { "S": "x" }, "pad": { "S": "" } }');
  assert.equal(itemSize(item), 2 + 1 + 9 + 1 + 3);
  item.pad.S = 'p'.repeat(500_000);
  const back = roundTrip(item);
  assert.deepEqual(Object.keys(back).sort(), ['__proto__', 'pad', 'pk']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(back, '__proto__').value, { S: 'x' });
  assert.equal(Object.getPrototypeOf(back), Object.prototype);
});

test('Map keys must be strings: 1 and "1" would otherwise be one attribute', () => {
  throwsDynaslice(() => itemSize({ m: new Map([[1, 'a'], ['1', 'b']]) }, { format: 'plain' }), 'INPUT_INVALID', /^m: a Map must have string keys/);
  assert.equal(itemSize({ m: new Map([['a', 'b']]) }, { format: 'plain' }), 1 + 3 + 1 + 1 + 1);
});

test('base64 binary in DynamoDB JSON is strict: padded, no spaces', () => {
  assert.equal(itemSize({ b: { B: 'QUJD' } }), 1 + 3);
  assert.equal(itemSize({ b: { B: 'QQ==' } }), 1 + 1);
  assert.equal(itemSize({ b: { BS: ['QQ==', 'QUI='] } }), 1 + 1 + 2);
  for (const bad of ['QQ', 'Q===', ' QQ==', 'QQ==\n', 'QU I=', '****']) {
    throwsDynaslice(() => itemSize({ b: { B: bad } }), 'INPUT_INVALID', /^b: B is not valid base64/);
  }
});

test('numbers in plain output are exact or refused, whatever their spelling', () => {
  const spelled = { pk: { S: 'k' }, a: { N: '1.50' }, b: { N: '-0.000' }, c: { N: '12E3' }, d: { N: '+7' }, e: { N: '9007199254740993' } };
  const { parent } = split(spelled, { ...table, expect: 'any' });
  throwsDynaslice(() => reassemble(parent, [], { ...table, format: 'plain' }), 'NUMBER_IMPRECISE', /^e: 9007199254740993/);
  delete spelled.e;
  const back = reassemble(split(spelled, { ...table, expect: 'any' }).parent, [], { ...table, format: 'plain' });
  assert.deepEqual(back, { pk: 'k', a: 1.5, b: -0, c: 12000, d: 7 }); // -0, as util-dynamodb's unmarshall
});
