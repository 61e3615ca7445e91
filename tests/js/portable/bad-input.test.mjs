// Hostile input from JavaScript: every mistake is an Error named
// DynasliceError with a specific code, and the module keeps working after it
// (throwsDynaslice checks itemSize on a good item after each error).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteRequests, itemSize, parentRequest, readRequests, reassemble, split, validateItem } from 'dynaslice';
import { randomBytes, throwsDynaslice } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const plain = { format: 'plain' };

class Point {
  constructor() {
    this.x = 1;
  }
}

test('an item must be a plain object', () => {
  for (const item of [null, undefined, 'item', 42, true, [], [{ pk: { S: 'a' } }], new Date(), new Map(), new Point(), () => {}]) {
    throwsDynaslice(() => itemSize(item), 'INPUT_INVALID', /expected an object/);
    throwsDynaslice(() => itemSize(item, plain), 'INPUT_INVALID', /expected an object/);
    throwsDynaslice(() => validateItem(item), 'INPUT_INVALID');
    throwsDynaslice(() => split(item, table), 'INPUT_INVALID');
  }
  assert.equal(itemSize(Object.assign(Object.create(null), { a: { S: 'x' } })), 2);
});

test('DynamoDB JSON of the wrong shape is INPUT_INVALID, naming the attribute', () => {
  const cases = [
    { x: 'a' },
    { x: {} },
    { x: { S: 'a', N: '1' } },
    { x: { Q: 'a' } },
    { x: { s: 'a' } },
    { x: { S: 1 } },
    { x: { N: 1 } },
    { x: { B: 5 } },
    { x: { B: 'not base64!' } },
    { x: { B: [1, 2] } },
    { x: { BOOL: 'true' } },
    { x: { NULL: false } },
    { x: { L: {} } },
    { x: { L: ['a'] } },
    { x: { M: [] } },
    { x: { M: { y: 'a' } } },
    { x: { SS: 'a' } },
    { x: { SS: [1] } },
    { x: { NS: [1] } },
    { x: { BS: ['%%'] } },
    { x: null },
    { x: undefined },
    { x: new Date() },
  ];
  for (const item of cases) throwsDynaslice(() => itemSize(item), 'INPUT_INVALID', /^x/);
  throwsDynaslice(() => itemSize({ m: { M: { y: { L: [{ S: 'ok' }, { S: 2 }] } } } }), 'INPUT_INVALID', /^m\.y\[1\]/);
});

test('plain values DynamoDB has no type for are INPUT_INVALID', () => {
  const cases = [new Date(), new Point(), /re/, () => 1, Symbol('s'), Promise.resolve(), new WeakMap(), new Set([1, 'a']), new Set([{}])];
  for (const value of cases) throwsDynaslice(() => itemSize({ x: value }, plain), 'INPUT_INVALID', /^x/);
  throwsDynaslice(() => itemSize({ x: { y: [new Date()] } }, plain), 'INPUT_INVALID', /^x\.y\[0\]/);
  throwsDynaslice(() => itemSize({ x: new Set() }, plain), 'SET_EMPTY');
});

test('undefined values are refused unless removeUndefinedValues', () => {
  throwsDynaslice(() => itemSize({ x: undefined }, plain), 'INPUT_INVALID', /removeUndefinedValues/);
  throwsDynaslice(() => itemSize({ x: [1, undefined] }, plain), 'INPUT_INVALID', /^x\[1\]/);
  throwsDynaslice(() => split({ pk: 'a', x: undefined }, { ...table, ...plain }), 'INPUT_INVALID');
  assert.equal(itemSize({ x: undefined }, { ...plain, removeUndefinedValues: true }), 0);
});

test('non-finite numbers are NUMBER_INVALID; unsafe integers NUMBER_IMPRECISE', () => {
  for (const n of [Number.NaN, Infinity, -Infinity]) {
    throwsDynaslice(() => itemSize({ n }, plain), 'NUMBER_INVALID', /^n/);
    throwsDynaslice(() => itemSize({ n: [n] }, plain), 'NUMBER_INVALID', /^n\[0\]/);
    throwsDynaslice(() => itemSize({ n: new Set([1, n]) }, plain), 'NUMBER_INVALID');
  }
  for (const n of [2 ** 53, -(2 ** 53), 1e300]) throwsDynaslice(() => itemSize({ n }, plain), 'NUMBER_IMPRECISE');
});

test('cyclic objects and arrays are NESTING_TOO_DEEP, not a stack overflow', () => {
  const object = { a: 1 };
  object.self = object;
  throwsDynaslice(() => itemSize({ x: object }, plain), 'NESTING_TOO_DEEP');
  const array = [];
  array.push(array);
  throwsDynaslice(() => itemSize({ x: array }, plain), 'NESTING_TOO_DEEP');
  const map = new Map();
  map.set('m', map);
  throwsDynaslice(() => itemSize({ x: map }, plain), 'NESTING_TOO_DEEP');
  const typed = { M: {} };
  typed.M.again = typed;
  throwsDynaslice(() => itemSize({ x: typed }), 'NESTING_TOO_DEEP');
});

test('10,000-deep arrays and maps are NESTING_TOO_DEEP, in both formats', () => {
  let plainList = [];
  let plainMap = {};
  let typedList = { L: [] };
  let typedMap = { M: {} };
  for (let i = 0; i < 10_000; i++) {
    plainList = [plainList];
    plainMap = { m: plainMap };
    typedList = { L: [typedList] };
    typedMap = { M: { m: typedMap } };
  }
  throwsDynaslice(() => itemSize({ x: plainList }, plain), 'NESTING_TOO_DEEP', /limit 32/);
  throwsDynaslice(() => itemSize({ x: plainMap }, plain), 'NESTING_TOO_DEEP');
  throwsDynaslice(() => itemSize({ x: typedList }), 'NESTING_TOO_DEEP');
  throwsDynaslice(() => itemSize({ x: typedMap }), 'NESTING_TOO_DEEP');
  throwsDynaslice(() => split({ pk: 'a', x: plainList }, { ...table, ...plain }), 'NESTING_TOO_DEEP');
  throwsDynaslice(() => validateItem({ x: typedList }), 'NESTING_TOO_DEEP');
  // 32 levels are allowed: a scalar in 31 lists.
  let ok = 1;
  for (let i = 0; i < 31; i++) ok = [ok];
  assert.deepEqual(validateItem({ x: ok }, plain), []);
});

test('truncated, padded and mistyped chunks are refused', () => {
  const { parent, chunks } = split({ pk: { S: 'doc' }, data: { B: randomBytes(900_000) } }, table);
  for (let seq = 0; seq < chunks.length; seq++) {
    const d = chunks[seq]._d.B;
    for (const cut of [1, 100, d.length - 1]) {
      const damaged = chunks.map((c, i) => (i === seq ? { ...c, _d: { B: d.subarray(0, d.length - cut) } } : c));
      throwsDynaslice(() => reassemble(parent, damaged, table), 'CHUNK_TRUNCATED', new RegExp(`chunk ${seq}`));
    }
  }
  const mistyped = [{ ...chunks[0], _d: { S: 'text' } }, ...chunks.slice(1)];
  throwsDynaslice(() => reassemble(parent, mistyped, table), 'CHUNK_MALFORMED');
  const shortDigest = [{ ...chunks[0], _h: { B: new Uint8Array(7) } }, ...chunks.slice(1)];
  throwsDynaslice(() => reassemble(parent, shortDigest, table), 'CHUNK_MALFORMED');
  const badKey = [{ ...chunks[0], pk: { S: 'not-a-chunk-key' } }, ...chunks.slice(1)];
  throwsDynaslice(() => reassemble(parent, badKey, table), 'CHUNK_MALFORMED');
  throwsDynaslice(() => reassemble(parent, [...chunks, 'chunk'], table), 'INPUT_INVALID');
  throwsDynaslice(() => reassemble(parent, [{ pk: 'plain' }], table), 'INPUT_INVALID');
  throwsDynaslice(() => reassemble('parent', chunks, table), 'INPUT_INVALID');
});

test('bad options are OPTIONS_INVALID for every function', () => {
  const item = { pk: { S: 'a' } };
  throwsDynaslice(() => itemSize(item, { format: 'PLAIN' }), 'OPTIONS_INVALID', /format/);
  throwsDynaslice(() => itemSize(item, { format: 1 }), 'OPTIONS_INVALID', /format/);
  throwsDynaslice(() => itemSize(item, { allowImpreciseNumbers: 'yes' }), 'OPTIONS_INVALID', /allowImpreciseNumbers/);
  throwsDynaslice(() => itemSize(item, { removeUndefinedValues: 1 }), 'OPTIONS_INVALID', /removeUndefinedValues/);
  throwsDynaslice(() => validateItem(item, { key: 'pk' }), 'OPTIONS_INVALID', /key/);
  throwsDynaslice(() => validateItem(item, { key: [{ name: 'pk' }] }), 'OPTIONS_INVALID', /key/);
  throwsDynaslice(() => validateItem(item, { maxItemBytes: -5 }), 'OPTIONS_INVALID', /maxItemBytes/);
  throwsDynaslice(() => reassemble(item, [], { ...table, wrapNumbers: 'yes' }), 'OPTIONS_INVALID', /wrapNumbers/);
  throwsDynaslice(() => reassemble(item, [], { ...table, maxBytes: -1 }), 'OPTIONS_INVALID', /maxBytes/);
  throwsDynaslice(() => reassemble(item, [], { table: 'docs' }), 'OPTIONS_INVALID', /key/);
  throwsDynaslice(() => parentRequest(item, { ...table, layout: 'x' }), 'OPTIONS_INVALID', /layout/);
  throwsDynaslice(() => readRequests(item, {}), 'OPTIONS_INVALID', /table/);
  throwsDynaslice(() => deleteRequests(item, { ...table, chunkKey: 7 }), 'OPTIONS_INVALID', /chunkKey/);
});

test('validateItem: maxItemBytes and the key schema', () => {
  const item = { pk: { S: 'a' }, sk: { N: '1' }, body: { S: 'x'.repeat(1000) } };
  const size = itemSize(item);
  assert.deepEqual(validateItem(item, { maxItemBytes: size }), []);
  assert.deepEqual(validateItem(item, { maxItemBytes: size - 1 }).map((v) => [v.code, v.path]), [['ITEM_TOO_LARGE', '']]);
  assert.match(validateItem(item, { maxItemBytes: size - 1 })[0].message, new RegExp(`${size}`));
  const key = [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'N' }];
  assert.deepEqual(validateItem(item, { key }), []);
  assert.deepEqual(validateItem(item, { key: [{ name: 'pk', type: 'S' }, { name: 'sk', type: 'S' }] }).map((v) => [v.code, v.path]), [['KEY_WRONG_TYPE', 'sk']]);
  assert.deepEqual(validateItem({ sk: { N: '1' } }, { key }).map((v) => [v.code, v.path]), [['KEY_MISSING', 'pk']]);
  // Several rules broken: every one reported.
  const broken = validateItem({ pk: { S: '' }, s: { SS: [] }, n: { N: 'x' } }, { key: [{ name: 'pk', type: 'S' }] });
  assert.deepEqual(broken.map((v) => v.code).sort(), ['KEY_EMPTY', 'NUMBER_INVALID', 'SET_EMPTY']);
});

// Checked before anything reads it: a JavaScript exception inside a wasm
// call would leak wasm-bindgen's shadow stack (see unwinding.test.mjs).
test('reassemble refuses chunks that are not an array with INPUT_INVALID', () => {
  const parent = { pk: { S: 'a' } };
  for (const chunks of [undefined, null, 5]) throwsDynaslice(() => reassemble(parent, chunks, table), 'INPUT_INVALID');
});
