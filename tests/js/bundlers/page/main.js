// The page every bundler builds: the package imported by name, as a user's
// code would, loaded, then a split and a reassembly. What came back is
// published as window.result for bundlers.test.mjs to check against the Node
// build; an error is published too, so a broken bundle fails at once.
import init, { split, reassemble, itemSize } from 'dynaslice';
import { OPTIONS, sampleItem } from './sample.js';

/** Bytes as base64, in pieces (a spread of 1 MiB overflows the call stack). */
function base64(bytes) {
  let text = '';
  for (let at = 0; at < bytes.length; at += 0x8000) text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(text);
}

async function run() {
  await init();
  const item = sampleItem();
  const { parent, chunks } = split(item, OPTIONS);
  const back = reassemble(parent, chunks, OPTIONS);
  return { pk: back.pk.S, data: base64(back.data.B), chunks: chunks.length, itemSize: itemSize(item, OPTIONS) };
}

run().then(
  (result) => (window.result = result),
  (error) => (window.result = { error: String(error?.stack ?? error) }),
);
