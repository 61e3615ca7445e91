#!/usr/bin/env node
// Set-up that `npm test` and `npm start` run first (as `pretest`/`prestart`):
// everything the repository's own tools need, installed only when missing,
// so a fresh clone works with one command and a warm one starts at once.
// System packages (Chromium for the browser tests) are `.ci/run`'s job.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WASM_BINDGEN_VERSION = '0.2.130';
const RUST_TARGETS = ['wasm32-unknown-unknown', 'wasm32v1-none'];
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function run(command, args) {
  console.error(`setup: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`setup: ${command} failed (exit ${result.status ?? result.error?.code})`);
    process.exit(1);
  }
}

function output(command, args) {
  try {
    return execFileSync(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  } catch {
    return '';
  }
}

// npm packages: install when node_modules is missing or older than the lock file.
const installed = join(root, 'node_modules', '.package-lock.json');
const lock = join(root, 'package-lock.json');
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

// Rust targets for the WebAssembly build and the no_std check.
const targets = output('rustup', ['target', 'list', '--installed']).split('\n');
const missing = RUST_TARGETS.filter((t) => !targets.includes(t));
if (missing.length > 0) run('rustup', ['target', 'add', ...missing]);

// The wasm-bindgen CLI, pinned to the crate's exact version (about 4 minutes
// to build once; `--locked` fails against the registry mirror here).
if (!output('wasm-bindgen', ['--version']).trim().endsWith(WASM_BINDGEN_VERSION)) {
  run('cargo', ['install', 'wasm-bindgen-cli', '--version', WASM_BINDGEN_VERSION]);
}
