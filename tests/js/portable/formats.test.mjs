// The two item formats: DynamoDB JSON (default) and plain JavaScript values,
// chosen by an option and never guessed; how plain values map to types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import init, { initSync, itemSize, NumberValue, reassemble, split, validateItem } from 'dynaslice';
import { throwsDynaslice } from '../support/check.mjs';

const table = { table: 'docs', key: [{ name: 'pk', type: 'S' }] };
const plain = { ...table, format: 'plain' };

/** The DynamoDB JSON a plain item is written as (split keeps an item that fits whole). */
const written = (item, options = {}) => split({ pk: 'k', ...item }, { ...plain, ...options, expect: 'any' }).parent;

test('init() and initSync exist in every build; after init the module works', async () => {
  assert.equal(typeof initSync, 'function');
  await init();
  await init();
  assert.equal(itemSize({ a: { S: 'x' } }), 2);
});

test('the format is never guessed: { x: { S: "a" } } is a string or a map', () => {
  const looksTyped = { x: { S: 'a' } };
  assert.equal(itemSize(looksTyped), 2); // x = "a"
  assert.equal(itemSize(looksTyped, { format: 'dynamodb' }), 2);
  assert.equal(itemSize(looksTyped, { format: 'plain' }), 1 + 3 + 1 + 1 + 1); // x = { S: "a" }: a map
  assert.deepEqual(written(looksTyped).x, { M: { S: { S: 'a' } } });
  // And plain values are not DynamoDB JSON.
  throwsDynaslice(() => itemSize({ x: 'a' }), 'INPUT_INVALID');
});

test('plain values map to DynamoDB types exactly', () => {
  const item = {
    s: 'text',
    empty: '',
    n: 12.5,
    int: -7,
    small: 1e-7,
    big: 123456789012345678901234567890n,
    exact: new NumberValue('1.50'),
    bool: true,
    no: false,
    nothing: null,
    bytes: Uint8Array.of(1, 2, 3),
    buffer: Uint8Array.of(4, 5).buffer,
    list: [1, 'a', [true]],
    map: { inner: { deep: 'x' } },
    jsMap: new Map([['a', 1], ['b', 'c']]),
    strings: new Set(['x', 'y']),
    numbers: new Set([1, 2.5, 3n, new NumberValue('4.0')]),
    binaries: new Set([Uint8Array.of(1), Uint8Array.of(2)]),
  };
  assert.deepEqual(written(item), {
    pk: { S: 'k' },
    s: { S: 'text' },
    empty: { S: '' },
    n: { N: '12.5' },
    int: { N: '-7' },
    small: { N: '1e-7' },
    big: { N: '123456789012345678901234567890' },
    exact: { N: '1.50' },
    bool: { BOOL: true },
    no: { BOOL: false },
    nothing: { NULL: true },
    bytes: { B: Uint8Array.of(1, 2, 3) },
    buffer: { B: Uint8Array.of(4, 5) },
    list: { L: [{ N: '1' }, { S: 'a' }, { L: [{ BOOL: true }] }] },
    map: { M: { inner: { M: { deep: { S: 'x' } } } } },
    jsMap: { M: { a: { N: '1' }, b: { S: 'c' } } },
    strings: { SS: ['x', 'y'] },
    numbers: { NS: ['1', '2.5', '3', '4.0'] },
    binaries: { BS: [Uint8Array.of(1), Uint8Array.of(2)] },
  });
});

test('plain and DynamoDB JSON of the same item have the same size', () => {
  const pairs = [
    [{ s: 'é€😀' }, { s: { S: 'é€😀' } }],
    [{ n: 120 }, { n: { N: '120' } }],
    [{ n: 12345678901234567890123456789012345678n }, { n: { N: '12345678901234567890123456789012345678' } }],
    [{ n: new NumberValue('-0.000120') }, { n: { N: '-0.000120' } }],
    [{ b: new Uint8Array(300) }, { b: { B: new Uint8Array(300) } }],
    [{ l: [null, false, 'x'] }, { l: { L: [{ NULL: true }, { BOOL: false }, { S: 'x' }] } }],
    [{ m: new Map([['k', 1]]) }, { m: { M: { k: { N: '1' } } } }],
    [{ ss: new Set(['ab', 'c']) }, { ss: { SS: ['ab', 'c'] } }],
    [{ ns: new Set([1, 22]) }, { ns: { NS: ['1', '22'] } }],
  ];
  for (const [p, d] of pairs) {
    assert.equal(itemSize(p, { format: 'plain' }), itemSize(d), JSON.stringify(d));
    assert.deepEqual(validateItem(p, { format: 'plain' }), validateItem(d));
  }
});

test('bigint and NumberValue keep every digit; a number that would lose them is refused', () => {
  // 2^53 + 1 has no double: as a number it is refused, as bigint or NumberValue exact.
  throwsDynaslice(() => itemSize({ n: 2 ** 53 + 2 }, { format: 'plain' }), 'NUMBER_IMPRECISE', /MAX_SAFE_INTEGER/);
  assert.equal(written({ n: 9007199254740993n }).n.N, '9007199254740993');
  assert.equal(written({ n: new NumberValue('9007199254740993') }).n.N, '9007199254740993');
  assert.equal(written({ n: new NumberValue(9007199254740993n) }).n.N, '9007199254740993');
  assert.equal(written({ n: Number.MAX_SAFE_INTEGER }).n.N, '9007199254740991');
  // allowImpreciseNumbers writes JavaScript's text for the double, as util-dynamodb does.
  assert.equal(written({ n: 2 ** 60 }, { allowImpreciseNumbers: true }).n.N, '1152921504606847000');
  // A NumberValue's text is checked as a DynamoDB number.
  const violations = validateItem({ n: new NumberValue('12abc') }, { format: 'plain' });
  assert.deepEqual(violations.map(({ code, path }) => ({ code, path })), [{ code: 'NUMBER_INVALID', path: 'n' }]);
  const tooPrecise = validateItem({ n: 1234567890123456789012345678901234567891n }, { format: 'plain' });
  assert.deepEqual(tooPrecise.map((v) => v.code), ['NUMBER_TOO_PRECISE']);
});

test('NumberValue: exact text, toString and toJSON', () => {
  const n = new NumberValue('1234567890.1234567890');
  assert.equal(n.value, '1234567890.1234567890');
  assert.equal(String(n), '1234567890.1234567890');
  assert.equal(JSON.stringify({ n }), '{"n":"1234567890.1234567890"}');
  assert.equal(new NumberValue(5n).value, '5');
  assert.equal(new NumberValue(2.5).value, '2.5');
});

test('plain round trip: what goes in plain comes back plain', () => {
  const item = {
    pk: 'doc',
    body: 'quarterly numbers, '.repeat(30_000),
    count: 3,
    price: new NumberValue('1299.95'),
    tags: new Set(['a', 'b']),
    scores: new Set([1, 2]),
    raw: Uint8Array.of(0, 255),
    gone: null,
    nested: [{ a: [1, { b: false }] }],
  };
  const { parent, chunks } = split(item, { ...plain, inline: false });
  assert.ok(parent._ds, 'the item was split');
  const back = reassemble(parent, chunks, { ...plain, wrapNumbers: true });
  assert.deepEqual(back, {
    ...item,
    count: new NumberValue('3'),
    scores: new Set([new NumberValue('1'), new NumberValue('2')]),
    nested: [{ a: [new NumberValue('1'), { b: false }] }],
  });
  const unwrapped = reassemble(parent, chunks, plain);
  assert.equal(unwrapped.price, 1299.95);
  assert.deepEqual(unwrapped.scores, new Set([1, 2]));
});

test('removeUndefinedValues drops undefined object entries (default: refused)', () => {
  throwsDynaslice(() => itemSize({ a: 1, b: undefined }, { format: 'plain' }), 'INPUT_INVALID', /^b: undefined/);
  throwsDynaslice(() => itemSize({ m: { b: undefined } }, { format: 'plain' }), 'INPUT_INVALID', /^m\.b: undefined/);
  assert.equal(itemSize({ a: 1, b: undefined }, { format: 'plain', removeUndefinedValues: true }), itemSize({ a: 1 }, { format: 'plain' }));
  assert.deepEqual(written({ m: { b: undefined, c: 'x' } }, { removeUndefinedValues: true }).m, { M: { c: { S: 'x' } } });
});
