// `node:test` for the browser page (index.html maps the name here): the part
// of it the portable tests use. `test(name, [options], fn)` registers; the
// page's runner imports every test file, then calls run(), which awaits
// init() and runs the tests one after another. `{ todo }` tests run and are
// counted apart, as node:test counts them: their failures fail nothing.
import init from 'dynaslice';

const registered = [];
let currentFile = '(unknown file)';

/** Registers a test, as node:test's `test(name, [options], fn)`. */
export function test(name, options, fn) {
  if (typeof options === 'function') [fn, options] = [options, {}];
  if (typeof name !== 'string' || typeof fn !== 'function') throw new TypeError('test(name, [options], fn)');
  const unsupported = Object.keys(options ?? {}).filter((k) => k !== 'todo');
  if (unsupported.length > 0) throw new TypeError(`test shim: unsupported options ${unsupported.join(', ')}`);
  registered.push({ file: currentFile, name, todo: Boolean(options?.todo), fn });
}

export default test;

/** The runner says which file the next registrations come from. */
export function setCurrentFile(file) {
  currentFile = file;
}

/** Every registered test, without its function (for counting). */
export function listTests() {
  return registered.map(({ file, name, todo }) => ({ file, name, todo }));
}

/** Runs every registered test in order: `{ passed, failed, todo, results, failures }`. */
export async function run() {
  await init();
  const results = [];
  for (const { file, name, todo, fn } of registered) {
    let error;
    try {
      await fn({ name, diagnostic() {} });
    } catch (e) {
      error = e;
    }
    const status = todo ? 'todo' : error === undefined ? 'passed' : 'failed';
    results.push({ file, name, status, error: error === undefined ? undefined : describe(error) });
  }
  const count = (status) => results.filter((r) => r.status === status).length;
  return {
    passed: count('passed'),
    failed: count('failed'),
    todo: count('todo'),
    results: results.map(({ file, name, status }) => ({ file, name, status })),
    failures: results.filter((r) => r.status === 'failed').map(({ file, name, error }) => ({ file, name, error })),
  };
}

function describe(error) {
  if (!(error instanceof Error)) return String(error);
  const head = `${error.name}: ${error.message}`;
  return error.stack?.startsWith(head) ? error.stack : `${head}\n${error.stack ?? ''}`;
}
