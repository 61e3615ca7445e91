// Node only: tests/js/types/consumer.ts, a user's TypeScript using every
// export with its options, type-checks against the package's index.d.ts
// (and driver.ts, every export of dynaslice/dynamodb, against dynamodb.d.ts
// with the AWS SDK's own client types)
// (found through the name `dynaslice`), for a bundler project with the DOM
// library and for a Node project without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
// TypeScript 7's CLI, as npm installs it (its exports do not expose bin/).
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

function typeCheck(project, more = []) {
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '-p', project, '--listFiles'], { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, `tsc -p ${project}:\n${run.stdout}${run.stderr}`);
  const files = run.stdout.split('\n');
  assert.ok(files.some((f) => f.endsWith('/wasm/index.d.ts')), 'the types came from wasm/index.d.ts');
  assert.ok(files.some((f) => f.endsWith('/tests/js/types/consumer.ts')));
  for (const file of more) assert.ok(files.some((f) => f.endsWith(file)), `${file} was checked`);
}

test('consumer.ts type-checks (bundler resolution, DOM library)', () => {
  typeCheck('tests/js/types/tsconfig.json');
});

test('consumer.ts and driver.ts type-check (node16 resolution, @types/node, no DOM library)', () => {
  typeCheck('tests/js/types/tsconfig.node.json', ['/wasm/dynamodb.d.ts', '/tests/js/types/driver.ts']);
});
