// What goes over the wire to `dynaslice serve` (docs/API.md) and how what
// comes back is compared with what was sent.

import { chunkData } from 'dynaslice';

const MAGIC = [0x44, 0x53, 0x55, 0x31]; // "DSU1"

/** Standard base64 of bytes (binaries travel as base64 inside JSON). */
export function toBase64(bytes) {
  if (typeof bytes.toBase64 === 'function') return bytes.toBase64();
  let text = '';
  // String.fromCharCode takes arguments: go in slices to stay under the
  // engine's argument limit.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/** Bytes of standard base64 text. */
export function fromBase64(text) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
}

/** One DynamoDB JSON value with every binary as base64 text. */
function valueToWire(value) {
  if ('B' in value) return { B: value.B instanceof Uint8Array ? toBase64(value.B) : value.B };
  if ('BS' in value) return { BS: value.BS.map((b) => (b instanceof Uint8Array ? toBase64(b) : b)) };
  if ('L' in value) return { L: value.L.map(valueToWire) };
  if ('M' in value) return { M: itemToWire(value.M) };
  return value;
}

/** A DynamoDB JSON item as the API takes it: binaries in base64. */
export function itemToWire(item) {
  const out = {};
  for (const [name, value] of Object.entries(item)) out[name] = valueToWire(value);
  return out;
}

/**
 * The body of `POST /api/upload`: `DSU1`, the header's length (u32,
 * little-endian), the header JSON, then each chunk's data bytes in sequence
 * order. A Blob made of the chunks' own arrays: the browser streams it,
 * and the page never concatenates the payload into one big copy.
 * @param {Record<string, object>} parent the parent exactly as `split` returned it
 * @param {Array<Record<string, object>>} chunks the chunk items, in sequence order
 */
export function uploadBody(parent, chunks) {
  const data = chunks.map(chunkData);
  const header = new TextEncoder().encode(JSON.stringify({ parent: itemToWire(parent), chunks: data.map((d) => d.length) }));
  const head = new Uint8Array(8);
  head.set(MAGIC);
  new DataView(head.buffer).setUint32(4, header.length, true);
  return new Blob([head, header, ...data], { type: 'application/octet-stream' });
}

/** True when two byte arrays hold the same bytes. */
export function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  // Compare 4 bytes at a time where both views allow it (20 MB in ~10 ms).
  const words = Math.floor(a.length / 4);
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const wa = new Uint32Array(a.buffer, a.byteOffset, words);
    const wb = new Uint32Array(b.buffer, b.byteOffset, words);
    for (let i = 0; i < words; i += 1) if (wa[i] !== wb[i]) return false;
    for (let i = words * 4; i < a.length; i += 1) if (a[i] !== b[i]) return false;
    return true;
  }
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

/** The index of the first byte that differs, or -1. */
export function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/**
 * A number's text in one canonical spelling (`1.50` and `15E-1` → `15e-1`):
 * stores may drop leading and trailing zeros, the value is what must match.
 */
function canonicalNumber(text) {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m) return text;
  let digits = (m[2] + (m[3] ?? '')).replace(/^0+/, '');
  let exponent = Number(m[4] ?? 0) - (m[3] ?? '').length;
  if (digits === '') return '0';
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent += 1;
  }
  return `${m[1] === '-' ? '-' : ''}${digits}e${exponent}`;
}

function canonicalValue(value) {
  const [type] = Object.keys(value);
  const v = value[type];
  switch (type) {
    case 'B':
      return { B: v instanceof Uint8Array ? toBase64(v) : v };
    case 'BS':
      return { BS: v.map((b) => (b instanceof Uint8Array ? toBase64(b) : b)).sort() };
    case 'N':
      return { N: canonicalNumber(v) };
    case 'NS':
      return { NS: v.map(canonicalNumber).sort() };
    case 'SS':
      return { SS: [...v].sort() };
    case 'L':
      return { L: v.map(canonicalValue) };
    case 'M':
      return { M: canonicalItem(v) };
    default:
      return { [type]: v };
  }
}

function canonicalItem(item) {
  const out = {};
  for (const name of Object.keys(item).sort()) out[name] = canonicalValue(item[name]);
  return out;
}

/**
 * A DynamoDB JSON item as one canonical text: names sorted, binaries in
 * base64, set members sorted (sets have no order), numbers in one spelling.
 * Two items are the same item exactly when these texts are equal.
 */
export function canonicalText(item) {
  return JSON.stringify(canonicalItem(item));
}
