#!/usr/bin/env node
// Runs the host's integration tests again against the server named by
// DYNASLICE_TEST_SERVER (e.g. dynamodb-local), reusing the test binaries
// `cargo test --workspace` built. `cargo test -p dynaslice-host` would unify
// features differently and recompile the AWS SDK and its dependencies
// (minutes of every CI run); `--workspace --no-run` finds the binaries
// already built, with the same features, and builds only what is missing.
// Names given as arguments run only those test binaries (`objects`).
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const hostTests = join(root, 'host', 'tests') + sep;

const messages = execFileSync('cargo', ['test', '--workspace', '--no-run', '--message-format=json'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  maxBuffer: 256 << 20,
}).toString();
const binaries = messages
  .split('\n')
  .filter((line) => line.startsWith('{'))
  .map((line) => JSON.parse(line))
  .filter((m) => m.reason === 'compiler-artifact' && m.executable && m.target.kind.includes('test'))
  .filter((m) => m.target.src_path.startsWith(hostTests))
  .map((m) => ({ name: m.target.name, path: m.executable }))
  .filter((b) => process.argv.length <= 2 || process.argv.slice(2).includes(b.name));
if (binaries.length === 0) {
  console.error('test-host: cargo built no host test binaries');
  process.exit(1);
}
let failed = [];
for (const { name, path } of binaries) {
  const s3 = process.env.DYNASLICE_TEST_S3 ? `, DYNASLICE_TEST_S3=${process.env.DYNASLICE_TEST_S3}` : '';
  console.error(`test-host: ${name} (DYNASLICE_TEST_SERVER=${process.env.DYNASLICE_TEST_SERVER ?? 'embedded'}${s3})`);
  // As cargo runs them: from the package's folder.
  const result = spawnSync(path, [], { cwd: join(root, 'host'), stdio: 'inherit' });
  if (result.status !== 0) failed.push(name);
}
if (failed.length > 0) {
  console.error(`test-host: failed: ${failed.join(', ')}`);
  process.exit(1);
}
