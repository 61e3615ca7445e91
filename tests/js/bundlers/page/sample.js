// The item the bundled page splits, made the same way in the page and in the
// Node test: 1 MiB of xorshift32 bytes (incompressible, so `auto` stores
// them as they are and the split needs three chunks) under a string key.

/** The table of the split: DynamoDB JSON, chunks in `t_chunks`. */
export const OPTIONS = { table: 't', key: [{ name: 'pk', type: 'S' }], format: 'dynamodb' };

/** A fresh copy of the sample item, the same bytes on every call. */
export function sampleItem() {
  const data = new Uint8Array(1 << 20);
  let x = 0x9e3779b9;
  for (let i = 0; i < data.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = x & 0xff;
  }
  return { pk: { S: 'bundled' }, data: { B: data } };
}
