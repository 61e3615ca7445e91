#!/usr/bin/env node
// The host library is lean without its front ends: with no optional
// features it pulls in no CLI parser, progress bars, HTTP server or SQLite
// (checked in `cargo tree`), and it builds with no optional feature and
// with each alone (`cargo check`, so only metadata is compiled).
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const FORBIDDEN = ['clap', 'indicatif', 'axum', 'tower-http', 'rusqlite', 'dynoxide-rs'];

const tree = execFileSync(
  'cargo',
  ['tree', '-p', 'dynaslice-host', '--no-default-features', '-e', 'normal', '--prefix', 'none'],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
).toString();
const crates = new Set(tree.split('\n').map((line) => line.split(' ')[0]));
const found = FORBIDDEN.filter((name) => crates.has(name));
if (found.length > 0) {
  console.error(`check-features: the library without features depends on ${found.join(', ')}`);
  process.exit(1);
}
console.error(`check-features: no-default-features tree (${crates.size} crates) has none of ${FORBIDDEN.join(', ')}`);

for (const features of [[], ['embedded'], ['serve'], ['cli']]) {
  const args = ['check', '-p', 'dynaslice-host', '--lib', '--no-default-features'];
  if (features.length > 0) args.push('--features', features.join(','));
  console.error(`check-features: cargo ${args.join(' ')}`);
  const result = spawnSync('cargo', args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(1);
}
