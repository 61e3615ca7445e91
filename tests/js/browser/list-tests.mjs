// Prints, as JSON, every test the given portable test files register
// ({ file, name, todo }), as the browser page will see them: the files are
// imported in Node with node:test replaced by the page's test shim.
//   node tests/js/browser/list-tests.mjs a.test.mjs b.test.mjs
import { register } from 'node:module';

register('./list-hooks.mjs', import.meta.url);
const { listTests, setCurrentFile } = await import('./test-shim.mjs');
for (const file of process.argv.slice(2)) {
  setCurrentFile(file);
  await import(new URL(`../portable/${file}`, import.meta.url).href);
}
console.log(JSON.stringify(listTests()));
