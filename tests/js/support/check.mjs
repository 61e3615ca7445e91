// Assertions and data shared by the portable tests (Node and browsers).
import assert from 'node:assert/strict';
import { itemSize } from 'dynaslice';

/** A small valid item and its size: checked after every error. */
const GOOD = { pk: { S: 'good' }, n: { N: '120' } };
const GOOD_SIZE = 2 + 4 + 1 + 3;

/**
 * Asserts `fn` throws an Error named DynasliceError with `code` (or one of
 * the codes of an array; and, when given, a message matching `message`),
 * then that the module still works. Returns the error.
 */
export function throwsDynaslice(fn, code, message) {
  let caught;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught !== undefined, `expected ${code}, nothing was thrown`);
  assert.ok(caught instanceof Error, `expected an Error, got ${String(caught)}`);
  assert.equal(caught.name, 'DynasliceError', `${caught.name}: ${caught.message}`);
  if (Array.isArray(code)) assert.ok(code.includes(caught.code), `${caught.code}: ${caught.message}`);
  else assert.equal(caught.code, code, caught.message);
  assert.equal(typeof caught.message, 'string');
  assert.ok(caught.message.length > 0);
  if (message) assert.match(caught.message, message);
  assert.equal(itemSize(GOOD), GOOD_SIZE, 'the module works after the error');
  return caught;
}

/** `n` random bytes (incompressible), drawn 65,536 at a time as Web Crypto allows. */
export function randomBytes(n) {
  const bytes = new Uint8Array(n);
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(bytes.subarray(at, Math.min(n, at + 65536)));
  return bytes;
}

/** Write units of one item: one per started KiB. */
export const writeUnitsOf = (item) => Math.ceil(itemSize(item) / 1024);

/** The same array in a shuffled order (Fisher-Yates), never the input order when length > 1. */
export function shuffled(array) {
  const out = array.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  if (out.length > 1 && out.every((v, i) => v === array[i])) out.reverse();
  return out;
}

/** Standard base64 of bytes, without Buffer (browsers have none). */
export function toBase64(bytes) {
  let binary = '';
  for (let at = 0; at < bytes.length; at += 32768) {
    binary += String.fromCharCode(...bytes.subarray(at, at + 32768));
  }
  return btoa(binary);
}

/** Every `{ PutRequest | DeleteRequest }` of BatchWriteItem inputs, for `table`, in order. */
export function batchEntries(batches, table) {
  return batches.flatMap((batch) => {
    assert.deepEqual(Object.keys(batch.RequestItems), [table]);
    return batch.RequestItems[table];
  });
}
