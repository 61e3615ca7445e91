// Module hooks for list-tests.mjs: the portable tests' `node:test` becomes
// the page's test shim, so importing them registers their tests without
// running any.
const shim = new URL('./test-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === 'node:test') return { url: shim, shortCircuit: true };
  return next(specifier, context);
}
