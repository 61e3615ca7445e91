// The projects of bundlers.test.mjs. A fixture's package.json (its bundler,
// pinned) and the packed tarball are installed once into a cache outside the
// clone, keyed on both, so a warm run installs nothing and a changed fixture
// or package reinstalls by itself. Each run then builds a fresh project: the
// page's files, the fixture's, and a link to that install's node_modules.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'dynaslice', 'bundlers');
// An install left half-done by a killed run is removed once it is this old;
// a younger one may belong to a run still installing.
const STALE_MS = 10 * 60 * 1000;

/** Runs npm in `cwd`; a failure throws with npm's own output. */
export function npm(args, cwd) {
  try {
    return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch (error) {
    throw new Error(`npm ${args.join(' ')} in ${cwd} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  }
}

/**
 * The cached install of a fixture with the tarball as its `dynaslice.tgz`:
 * `{ dir, fresh }`, fresh when this call installed it.
 */
export function install(name, fixture, tarball) {
  const manifest = readFileSync(join(fixture, 'package.json'));
  const key = createHash('sha256').update(manifest).update('\0').update(readFileSync(tarball)).digest('hex').slice(0, 16);
  const home = join(CACHE, name);
  const dir = join(home, key);
  if (existsSync(dir)) return { dir, fresh: false };

  // Installed beside its final place and renamed in whole, so a half-done
  // install is never taken for a cached one.
  mkdirSync(home, { recursive: true });
  const partial = join(home, `${key}.partial-${process.pid}`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  copyFileSync(join(fixture, 'package.json'), join(partial, 'package.json'));
  copyFileSync(tarball, join(partial, 'dynaslice.tgz'));
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline'], partial);
  try {
    renameSync(partial, dir);
  } catch (error) {
    // Another run installed the same key meanwhile: use theirs.
    if (!existsSync(dir)) throw error;
    rmSync(partial, { recursive: true, force: true });
  }
  for (const entry of readdirSync(home)) {
    const path = join(home, entry);
    const stale = !entry.includes('.partial-') || Date.now() - statSync(path).mtimeMs > STALE_MS;
    if (entry !== key && stale) rmSync(path, { recursive: true, force: true });
  }
  return { dir, fresh: true };
}

/**
 * A new project in a temporary folder: the page's files (less the
 * package.json that makes them ES modules in the clone), the fixture's
 * files, and node_modules linked to the install. The caller removes it.
 */
export function project(name, page, fixture, installed) {
  const dir = mkdtempSync(join(tmpdir(), `dynaslice-${name}-`));
  for (const entry of readdirSync(page).filter((e) => e !== 'package.json')) cpSync(join(page, entry), join(dir, entry), { recursive: true });
  cpSync(fixture, dir, { recursive: true });
  symlinkSync(join(installed, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}
