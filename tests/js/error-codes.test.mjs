// Every error code the JavaScript side raises or explains is one of the
// catalogue's (core/src/code.rs, published as docs/ERRORS.md): the package
// and the page report the same strings as core and the host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';

const root = new URL('../../', import.meta.url);
const catalogue = new Set(
  [...(await readFile(new URL('docs/ERRORS.md', root), 'utf8')).matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]),
);

/** UPPER_SNAKE string literals, and the keys of the page's table of sentences. */
/** DynamoDB's own constants that look like codes (a request's `ReturnValues`). */
const API_VALUES = new Set(['ALL_OLD']);

function codesIn(text) {
  const literals = [...text.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)].map((m) => m[1]).filter((c) => !API_VALUES.has(c));
  const keys = [...text.matchAll(/^ {2}([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+): /gm)].map((m) => m[1]);
  return [...literals, ...keys];
}

test('docs/ERRORS.md lists the catalogue', () => {
  assert.ok(catalogue.size >= 100, `${catalogue.size} codes`);
  for (const code of ['CHUNK_DIGEST_MISMATCH', 'STREAM_BAD_VARINT', 'WASM_LOAD', 'TOKEN_REQUIRED']) assert.ok(catalogue.has(code), code);
});

test('every code in wasm/js and www/js is in the catalogue', async () => {
  const unknown = [];
  let seen = 0;
  for (const dir of ['wasm/js/', 'www/js/']) {
    for (const name of await readdir(new URL(dir, root))) {
      if (!name.endsWith('.js')) continue;
      for (const code of codesIn(await readFile(new URL(dir + name, root), 'utf8'))) {
        seen += 1;
        if (!catalogue.has(code)) unknown.push(`${dir}${name}: ${code}`);
      }
    }
  }
  assert.ok(seen >= 40, `${seen} codes found: the scan works`);
  assert.deepEqual(unknown, []);
});
