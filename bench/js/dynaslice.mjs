// The package under test: wasm/js/node.mjs (the built wasm/dist), or the
// entry named by DYNASLICE_ENTRY, to compare another build or a prototype:
//   DYNASLICE_ENTRY=/tmp/other/wasm/js/node.mjs npm run bench:js
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const entry = process.env.DYNASLICE_ENTRY;
const url = entry
  ? pathToFileURL(isAbsolute(entry) ? entry : resolve(entry)).href
  : new URL('../../wasm/js/node.mjs', import.meta.url).href;

/** The package's exports. */
export const dynaslice = await import(url);
/** Where they came from, for the report header. */
export const dynasliceEntry = url;
/**
 * The package's internals beside that entry (its api.js), for what is not
 * public, such as itemSize through the core alone; undefined when the
 * build under test has none.
 */
export const dynasliceInternals = await import(new URL('api.js', url).href).catch(() => undefined);
