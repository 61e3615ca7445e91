// Reading an upload back and checking it: the bytes of one attribute
// compared byte for byte, or the whole item compared in a canonical form.

import { reassemble } from 'dynaslice';
import * as api from './api.js';
import { bytes, count } from './format.js';
import { canonicalText, firstDifference, sameBytes } from './wire.js';

/**
 * Reads the stored item back and compares it with what was uploaded.
 * With `attribute`: its raw bytes against `expected()`. Without: the whole
 * item (GET /api/item) against the item rebuilt from the uploaded parent
 * and chunks.
 * @returns {Promise<{ same: boolean, detail: string }>}
 */
export async function compareStored({ table, key, attribute, expected, result, options }) {
  let same;
  let detail;
  if (attribute) {
    const got = await api.getAttributeBytes(table, key, attribute);
    const want = expected();
    same = sameBytes(got, want);
    detail = same
      ? `${bytes(got.length)} of “${attribute}” read back, identical byte for byte to what was uploaded`
      : `byte ${count(firstDifference(got, want))} differs; ${bytes(got.length)} read, ${bytes(want.length)} uploaded`;
  } else {
    const got = await api.getItem(table, key);
    const want = reassemble(result.parent, result.chunks, options);
    const a = canonicalText(got);
    const b = canonicalText(want);
    same = a === b;
    detail = same
      ? `the item read back is identical to the uploaded one (${count(Object.keys(got).length)} attributes, ${bytes(new TextEncoder().encode(a).length)} as canonical JSON)`
      : `the item read back is not the uploaded one (${bytes(a.length)} against ${bytes(b.length)} of canonical JSON)`;
  }
  return { same, detail };
}

/** Bytes as text when they look like text, else as a hex dump of the first 512. */
export function previewText(data) {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(data);
  const odd = [...text].filter((c) => c === '\uFFFD' || (c < ' ' && c !== '\n' && c !== '\r' && c !== '\t')).length;
  if (odd <= text.length / 50) return text;
  const lines = [];
  for (let i = 0; i < Math.min(data.length, 512); i += 16) {
    const row = [...data.subarray(i, i + 16)];
    lines.push(`${i.toString(16).padStart(6, '0')}  ${row.map((b) => b.toString(16).padStart(2, '0')).join(' ')}`);
  }
  return lines.join('\n');
}

