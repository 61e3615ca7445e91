// Node only: JavaScript exceptions thrown *inside* a wasm call. When a
// JavaScript function the binding calls throws (a getter, a Proxy trap, a
// missing `length`) and the exception unwinds through the wasm frames, it
// skips wasm-bindgen's shadow stack bookkeeping; each such call leaks stack,
// and after a few thousand the module fails every call ("memory access out
// of bounds", then "unreachable"). The binding reads through imports that
// catch, so these must all end as typed errors with the module intact. Each
// case runs in its own child process, in case one breaks the module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs `call` (an expression using the package as `d`) `times` times in a
 * fresh Node, stopping at the first RuntimeError; returns the error counts
 * and what a good itemSize call gives afterwards.
 */
function hammer(setup, call, times) {
  const script = `
    import * as d from 'dynaslice';
    ${setup}
    const seen = {};
    for (let i = 0; i < ${times}; i++) {
      try { ${call}; seen.none = (seen.none ?? 0) + 1; }
      catch (e) {
        const k = e.name + (e.code ? ':' + e.code : '');
        seen[k] = (seen[k] ?? 0) + 1;
        if (e.name === 'RuntimeError') { seen.brokenAfter = i; break; } // the module is gone
      }
    }
    let after;
    try { after = d.itemSize({ a: { S: 'x' } }); } catch (e) { after = e.name + ': ' + e.message; }
    console.log(JSON.stringify({ seen, after }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  return JSON.parse(out);
}

test('reassemble with chunks that are not an array, 3000 times', () => {
  const { seen, after } = hammer("const table = { table: 't', key: [{ name: 'pk', type: 'S' }] };", 'd.reassemble({ pk: { S: "a" } }, undefined, table)', 3000);
  assert.deepEqual(seen, { 'DynasliceError:INPUT_INVALID': 3000 });
  assert.equal(after, 2);
});

test('an item whose getter throws, 3000 times', () => {
  const { seen, after } = hammer("const evil = { get a() { throw new Error('getter'); } };", 'd.itemSize(evil)', 3000);
  assert.deepEqual(seen, { 'DynasliceError:INPUT_INVALID': 3000 });
  assert.equal(after, 2);
});

test('a Proxy whose trap throws, 3000 times', () => {
  const setup = "const evil = new Proxy({}, { getPrototypeOf() { throw new Error('trap'); } });";
  const { seen, after } = hammer(setup, 'd.itemSize(evil)', 3000);
  assert.deepEqual(seen, { 'DynasliceError:INPUT_INVALID': 3000 });
  assert.equal(after, 2);
});

test('pushing into a freed Splitter, 250,000 times', () => {
  const setup = "const s = new d.Splitter({ pk: { S: 'a' } }, { table: 't', key: [{ name: 'pk', type: 'S' }], attribute: 'b', size: 1 }); s.free(); const one = new Uint8Array(1);";
  const { seen, after } = hammer(setup, 's.push(one)', 250_000);
  assert.deepEqual(seen, { 'DynasliceError:SPLITTER_FREED': 250_000 });
  assert.equal(after, 2);
});

test('typed errors leak nothing: 100,000 bad items leave the module working', () => {
  // The contrast: errors the binding raises itself return normally.
  const { seen, after } = hammer('', "d.itemSize({ x: { Q: 'a' } })", 100_000);
  assert.deepEqual(seen, { 'DynasliceError:INPUT_INVALID': 100_000 });
  assert.equal(after, 2);
});
