// tests/vectors/stream.json, the value streams encoded by hand from
// docs/FORMAT.md, through the package's JavaScript writer (encode.js) and
// reader (decode.js): the same cases, the same bytes and the same error
// codes as core's Rust encoder and decoder (core/tests/golden.rs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeItem } from '../../wasm/js/decode.js';
import { DYNAMODB_INPUT, encodeItem } from '../../wasm/js/encode.js';
import { hexToBytes, loadVectors } from './support/vectors.mjs';

const vectors = await loadVectors('stream.json', 'dynaslice-stream-vectors/1');
const DYNAMODB_OUTPUT = { plain: false, wrapNumbers: false };

const hex = (bytes) => Buffer.from(bytes).toString('hex');
const base64 = (bytes) => Buffer.from(bytes).toString('base64');

/** A decoded item in the vectors' spelling: binary as base64 text. */
function spelled(value) {
  if (value instanceof Uint8Array) return base64(value);
  if (Array.isArray(value)) return value.map(spelled);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, spelled(v)]));
  }
  return value;
}

test('stream.json valid: the JavaScript writer spells each item byte for byte', () => {
  assert.ok(vectors.valid.length >= 11);
  for (const c of vectors.valid) {
    assert.equal(hex(encodeItem(c.item, DYNAMODB_INPUT)), c.hex, c.name);
  }
});

test('stream.json valid: the JavaScript reader gives each item back', () => {
  for (const c of vectors.valid) {
    assert.deepEqual(spelled(decodeItem(hexToBytes(c.hex), DYNAMODB_OUTPUT)), c.item, c.name);
  }
});

test("stream.json invalid: the JavaScript reader refuses each with core's code", () => {
  assert.ok(vectors.invalid.length >= 11);
  for (const c of vectors.invalid) {
    assert.throws(
      () => decodeItem(hexToBytes(c.hex), DYNAMODB_OUTPUT),
      (e) => e.name === 'DynasliceError' && e.code === c.code,
      `${c.name}: expected ${c.code}`,
    );
  }
});

test('the reader refuses what a stream of the valid cases becomes when cut short, with STREAM_TRUNCATED', () => {
  for (const c of vectors.valid) {
    const bytes = hexToBytes(c.hex);
    for (let end = 0; end < bytes.length; end++) {
      assert.throws(
        () => decodeItem(bytes.subarray(0, end), DYNAMODB_OUTPUT),
        (e) => e.code === 'STREAM_TRUNCATED',
        `${c.name} cut at ${end}`,
      );
    }
  }
});
