// The page's runner: loads the package, imports the test files named by the
// query (?file=a.test.mjs&file=b.test.mjs, from tests/js/portable/), runs
// them, and publishes { passed, failed, todo, results, failures } as
// window.__dynasliceResults for the Node side (browser.test.mjs) to read.
import init from 'dynaslice';
import { run, setCurrentFile } from 'node:test';

const report = document.getElementById('report');
const pageErrors = [];
addEventListener('error', (event) => pageErrors.push(`error: ${event.message}`));
addEventListener('unhandledrejection', (event) => pageErrors.push(`unhandled rejection: ${event.reason?.stack ?? event.reason}`));

async function main() {
  const files = new URLSearchParams(location.search).getAll('file');
  await init();
  const loadFailures = [];
  for (const file of files) {
    setCurrentFile(file);
    try {
      await import(`../portable/${file}`);
    } catch (error) {
      loadFailures.push({ file, name: '(loading the file)', error: `${error.name}: ${error.message}\n${error.stack ?? ''}` });
    }
  }
  const results = await run();
  results.failures.push(...loadFailures, ...pageErrors.map((error) => ({ file: '(page)', name: '(page error)', error })));
  results.failed += loadFailures.length + pageErrors.length;
  results.files = files;
  return results;
}

main()
  .catch((error) => ({ passed: 0, failed: 1, todo: 0, results: [], failures: [{ file: '(runner)', name: '(runner)', error: String(error?.stack ?? error) }] }))
  .then((results) => {
    report.textContent = `${results.passed} passed, ${results.failed} failed, ${results.todo} todo\n\n` +
      results.failures.map((f) => `${f.file}: ${f.name}\n${f.error}`).join('\n\n');
    window.__dynasliceResults = results;
  });
