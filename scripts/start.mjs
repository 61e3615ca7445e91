// `npm start` runs the main job: the web page backed by the host. The host
// and the page arrive with their issues; until then this says so plainly.
console.error(
  'dynaslice: `npm start` will serve the web page once the host lands.\n' +
    'Today the core library is here: run `npm test`, or `cargo doc -p dynaslice-core --open`.',
);
process.exitCode = 1;
