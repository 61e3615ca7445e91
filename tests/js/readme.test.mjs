// Node only: the first ```js block of wasm/README.md runs as written (it
// asserts its own results), resolving `dynaslice` as a user's code would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('the README example runs and its asserts hold', () => {
  const readme = readFileSync(new URL('../../wasm/README.md', import.meta.url), 'utf8');
  const block = readme.match(/```js\n([\s\S]*?)```/);
  assert.ok(block, 'wasm/README.md has a ```js block');
  const code = block[1];
  assert.match(code, /from 'dynaslice'/);
  assert.ok((code.match(/assert\.\w+\(/g) ?? []).length >= 2, 'the example checks its own results');
  // The example plus a marker, so an example that exits early cannot pass.
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `${code}\nconsole.log('README-EXAMPLE-DONE');`], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.match(out, /README-EXAMPLE-DONE\s*$/);
});
