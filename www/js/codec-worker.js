// The codec comparison, off the page's thread: splits the item once per
// codec and reports stored size, ratio, time, chunks and write units, then
// what `auto` picks. A 20 MB document takes a few seconds of CPU; here the
// page stays responsive meanwhile.
//
// Module workers do not see the page's import map in Chromium (import maps
// apply to documents only), so this worker imports the package by its URL
// instead of by its name "dynaslice".
import init, { itemSize, split } from '/pkg/dynaslice/js/browser.js';

const CODECS = ['none', 'deflate', 'zlib', 'gzip', 'snappy', 'zstd'];
const ready = init();

/** One codec's outcome, or the sentence-ready error it met. */
function measure(item, options, codec) {
  const started = performance.now();
  try {
    const result = split(item, { ...options, codec });
    const ms = performance.now() - started;
    const manifest = result.manifest;
    const stored = manifest ? manifest.storedBytes : itemSize(result.parent);
    return {
      codec,
      picked: manifest?.codec ?? 'none',
      ms,
      split: Boolean(manifest),
      storedBytes: stored,
      rawBytes: manifest ? manifest.rawBytes : stored,
      inline: manifest?.inline ?? false,
      chunks: result.chunks.length,
      mode: result.requests.mode,
      writeUnits: result.writeUnits,
    };
  } catch (error) {
    return { codec, error: { name: error?.name, code: error?.code, message: error?.message } };
  }
}

self.onmessage = async ({ data }) => {
  const { job, item, options } = data;
  try {
    await ready;
  } catch (error) {
    self.postMessage({ job, type: 'failed', error: { code: 'WASM_LOAD', message: String(error?.message ?? error) } });
    return;
  }
  for (const codec of CODECS) {
    self.postMessage({ job, type: 'row', row: measure(item, options, codec) });
  }
  const auto = measure(item, options, 'auto');
  self.postMessage({ job, type: 'done', auto });
};
