// Loads the shared vectors of tests/vectors/ in Node (fs) and in browsers
// (fetch, from the same origin), and expands their `{ fill, count }` values.

const VECTORS = new URL('../../vectors/', import.meta.url);

/** The parsed vector file `name`; refuses a format version the suite does not know. */
export async function loadVectors(name, format) {
  let data;
  if (typeof process !== 'undefined' && process.versions?.node) {
    const { readFile } = await import('node:fs/promises');
    data = JSON.parse(await readFile(new URL(name, VECTORS), 'utf8'));
  } else {
    const response = await fetch(new URL(name, VECTORS));
    if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
    data = await response.json();
  }
  if (data.format !== format) throw new Error(`${name}: format ${data.format}, this suite reads ${format}`);
  return data;
}

/** Bytes of lower-case or upper-case hex text. */
export function hexToBytes(hex) {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** `fill` (hex) repeated `count` times. */
function repeatBytes(fillHex, count) {
  const unit = hexToBytes(fillHex);
  const out = new Uint8Array(unit.length * count);
  for (let i = 0; i < count; i++) out.set(unit, i * unit.length);
  return out;
}

const isFill = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && 'fill' in v && 'count' in v;

/**
 * A DynamoDB JSON value with every `{ "S" | "B": { fill, count } }` expanded
 * (tests/vectors/README.md: only at the top level and inside L and M).
 * Expanded binary is a Uint8Array; literal binary stays base64 text.
 */
export function expandValue(value) {
  const [type] = Object.keys(value);
  const inner = value[type];
  if (type === 'S' && isFill(inner)) return { S: inner.fill.repeat(inner.count) };
  if (type === 'B' && isFill(inner)) return { B: repeatBytes(inner.fill, inner.count) };
  if (type === 'L') return { L: inner.map(expandValue) };
  if (type === 'M') return { M: expandItem(inner) };
  return value;
}

/** An item with every value expanded. */
export function expandItem(item) {
  return Object.fromEntries(Object.entries(item).map(([name, value]) => [name, expandValue(value)]));
}

/** A case's key schema (`{ pk: "S", sk: "N" }`, partition key first) as the `key` option. */
export function keyOption(key) {
  return Object.entries(key).map(([name, type]) => ({ name, type }));
}
