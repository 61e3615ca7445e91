#!/usr/bin/env node
// Builds the npm package `dynaslice` in wasm/: compiles dynaslice-wasm for
// wasm32 with its own cargo profile, generates the Node and browser bindings
// with the pinned wasm-bindgen CLI, and shrinks each module with wasm-opt
// (binaryen from npm; Debian's binaryen breaks wasm-bindgen's output).
//
//   node scripts/build-wasm.mjs                  # all codecs, into wasm/dist
//   node scripts/build-wasm.mjs --features deflate --out /tmp/deflate-only
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const WASM_BINDGEN_VERSION = '0.2.130';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    features: { type: 'string' },
    out: { type: 'string', default: join(root, 'wasm', 'dist') },
    'no-opt': { type: 'boolean', default: false },
  },
});

// The package ships the repository's license texts (its `files` list them).
for (const license of ['LICENSE-MIT', 'LICENSE-APACHE']) {
  copyFileSync(join(root, license), join(root, 'wasm', license));
}

function run(command, args, options = {}) {
  try {
    return execFileSync(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], ...options });
  } catch (error) {
    const reason = error.code === 'ENOENT' ? `${command} is not installed` : `${command} failed`;
    console.error(`build-wasm: ${reason}`);
    process.exit(1);
  }
}

const version = run('wasm-bindgen', ['--version']).toString().trim();
if (!version.endsWith(WASM_BINDGEN_VERSION)) {
  console.error(
    `build-wasm: found ${version}, need wasm-bindgen ${WASM_BINDGEN_VERSION} ` +
      `(cargo install wasm-bindgen-cli --version ${WASM_BINDGEN_VERSION}; .ci/run does this)`,
  );
  process.exit(1);
}

const features = values.features
  ? ['--no-default-features', '--features', values.features]
  : [];
console.error('build-wasm: cargo build (wasm32-unknown-unknown, profile wasm-release)');
run('cargo', ['build', '-p', 'dynaslice-wasm', '--target', 'wasm32-unknown-unknown', '--profile', 'wasm-release', ...features], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
// cargo's target folder: $CARGO_TARGET_DIR when set (CI keeps one outside the clone).
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(root, 'target');
const built = join(targetDir, 'wasm32-unknown-unknown', 'wasm-release', 'dynaslice_wasm.wasm');

const wasmOpt = join(root, 'node_modules', '.bin', 'wasm-opt');
// Both targets get the same module from wasm-bindgen (only the JS glue
// differs): optimize it once (wasm-opt -Oz takes ~15 s) and reuse the result.
const optimized = new Map();
for (const target of ['nodejs', 'web']) {
  const out = join(values.out, target === 'nodejs' ? 'node' : 'web');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  run('wasm-bindgen', ['--target', target, '--out-dir', out, '--no-typescript', built]);
  const module = join(out, 'dynaslice_wasm_bg.wasm');
  if (!values['no-opt']) {
    const key = createHash('sha256').update(readFileSync(module)).digest('hex');
    if (optimized.has(key)) {
      copyFileSync(optimized.get(key), module);
    } else {
      // Producers and target features are for tools, not for running: stripped (0.6 KB).
      // --low-memory-unused: Rust never forms a pointer that wraps around into
      // the first kilobyte, so `load(p + C)` may fold C into the offset (0.9 KB).
      run(wasmOpt, ['-Oz', '--converge', '--low-memory-unused', '--strip-producers', '--strip-target-features', module, '-o', module]);
      optimized.set(key, module);
    }
  }
  if (target === 'nodejs') {
    // wasm-bindgen's Node output is CommonJS inside a "type": "module" package.
    writeFileSync(join(out, 'package.json'), '{ "type": "commonjs" }\n');
  }
  const bytes = readFileSync(module);
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  console.error(`build-wasm: ${out}: ${bytes.length} bytes of wasm, ${gzipped} gzipped`);
}

// Ship the module once: the two targets' modules are the same bytes (only the
// glue differs), so the Node glue reads the browser build's copy.
const nodeModule = join(values.out, 'node', 'dynaslice_wasm_bg.wasm');
const webModule = join(values.out, 'web', 'dynaslice_wasm_bg.wasm');
if (readFileSync(nodeModule).equals(readFileSync(webModule))) {
  const glue = join(values.out, 'node', 'dynaslice_wasm.js');
  const text = readFileSync(glue, 'utf8');
  const from = '`${__dirname}/dynaslice_wasm_bg.wasm`';
  if (!text.includes(from)) {
    console.error(`build-wasm: ${glue} no longer loads ${from}; update this script`);
    process.exit(1);
  }
  writeFileSync(glue, text.replace(from, '`${__dirname}/../web/dynaslice_wasm_bg.wasm`'));
  rmSync(nodeModule);
}

// The protocol's policy numbers (retries, concurrency, the read window, the
// grace of gc), read from the module just built: the driver's defaults are
// the core's (core/src/protocol/policy.rs), never a copy kept by hand.
const nodeGlue = createRequire(import.meta.url)(join(values.out, 'node', 'dynaslice_wasm.js'));
const policy = nodeGlue.protocolPolicy();
writeFileSync(
  join(values.out, 'policy.js'),
  `// Written by scripts/build-wasm.mjs from the core's protocol policy
// (core/src/protocol/policy.rs, through the module's protocolPolicy()).
export const POLICY = Object.freeze(${JSON.stringify(policy, null, 2)});
`,
);
