// `node:assert/strict` for the browser page (index.html maps the name here):
// the assertions the portable tests use, with node's strict semantics
// (Object.is for equal; deep equality that compares prototypes, typed
// arrays, Sets and Maps by content, and own enumerable keys).

export class AssertionError extends Error {
  constructor({ message, actual, expected, operator }) {
    super(message);
    this.name = 'AssertionError';
    this.code = 'ERR_ASSERTION';
    Object.assign(this, { actual, expected, operator });
  }
}

function show(value) {
  try {
    const text = JSON.stringify(value, (k, v) => {
      if (typeof v === 'bigint') return `${v}n`;
      if (v instanceof Set) return { Set: [...v] };
      if (v instanceof Map) return { Map: [...v] };
      if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length})`;
      return v;
    });
    return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}…` : text;
  } catch {
    return String(value);
  }
}

function raise(message, actual, expected, operator) {
  if (message instanceof Error) throw message;
  throw new AssertionError({ message: message ?? `${show(actual)} ${operator} ${show(expected)}`, actual, expected, operator });
}

/** Node's isDeepStrictEqual, for the values tests compare. */
export function isDeepStrictEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (ArrayBuffer.isView(a)) {
    if (a.byteLength !== b.byteLength) return false;
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  }
  if (a instanceof ArrayBuffer) return isDeepStrictEqual(new Uint8Array(a), new Uint8Array(b));
  if (a instanceof Date) return Object.is(a.getTime(), b.getTime());
  if (a instanceof RegExp) return String(a) === String(b);
  if (a instanceof Error && (a.message !== b.message || a.name !== b.name)) return false;
  if (a instanceof Set) {
    if (a.size !== b.size) return false;
    const unmatched = [...b].filter((y) => !a.has(y));
    for (const x of a) {
      if (b.has(x)) continue;
      const at = unmatched.findIndex((y) => isDeepStrictEqual(x, y));
      if (at < 0) return false;
      unmatched.splice(at, 1);
    }
    return true;
  }
  if (a instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) {
      if (!b.has(k) || !isDeepStrictEqual(v, b.get(k))) return false;
    }
    return true;
  }
  if (Array.isArray(a) && a.length !== b.length) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && isDeepStrictEqual(a[k], b[k]));
}

export function ok(value, message) {
  if (!value) raise(message ?? `${show(value)} is not truthy`, value, true, '==');
}

export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) raise(message ?? `${show(actual)} !== ${show(expected)}`, actual, expected, 'strictEqual');
}

export function notEqual(actual, expected, message) {
  if (Object.is(actual, expected)) raise(message ?? `${show(actual)} === ${show(expected)}`, actual, expected, 'notStrictEqual');
}

export function deepEqual(actual, expected, message) {
  if (!isDeepStrictEqual(actual, expected)) raise(message ?? `${show(actual)} is not deep-equal to ${show(expected)}`, actual, expected, 'deepStrictEqual');
}

export function notDeepEqual(actual, expected, message) {
  if (isDeepStrictEqual(actual, expected)) raise(message ?? `${show(actual)} is deep-equal to ${show(expected)}`, actual, expected, 'notDeepStrictEqual');
}

export function match(string, regexp, message) {
  if (typeof string !== 'string' || !regexp.test(string)) raise(message ?? `${show(string)} does not match ${regexp}`, string, regexp, 'match');
}

export function doesNotMatch(string, regexp, message) {
  if (typeof string !== 'string' || regexp.test(string)) raise(message ?? `${show(string)} matches ${regexp}`, string, regexp, 'doesNotMatch');
}

/** Checks a thrown or rejected value against `expected` as node does: an object, a class, a validator or a RegExp. */
function check(error, expected, message, operator) {
  if (expected === undefined) return;
  if (expected instanceof RegExp) {
    if (!expected.test(String(error))) raise(message ?? `${show(String(error))} does not match ${expected}`, error, expected, operator);
    return;
  }
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && error instanceof expected) return;
    if (Error.isPrototypeOf(expected) || expected === Error) raise(message ?? `${error} is not a ${expected.name}`, error, expected, operator);
    if (expected.call({}, error) !== true) raise(message ?? `the validation function rejected ${error}`, error, expected, operator);
    return;
  }
  for (const [key, want] of Object.entries(expected)) {
    const got = error?.[key];
    const same = want instanceof RegExp && typeof got === 'string' ? want.test(got) : isDeepStrictEqual(got, want);
    if (!same) raise(message ?? `${operator}: error.${key} is ${show(got)}, expected ${show(want)}\n${error?.stack ?? error}`, error, expected, operator);
  }
}

export function throws(fn, expected, message) {
  if (typeof expected === 'string') [message, expected] = [expected, undefined];
  let error;
  let threw = false;
  try {
    fn();
  } catch (e) {
    threw = true;
    error = e;
  }
  if (!threw) raise(message ?? 'Missing expected exception.', undefined, expected, 'throws');
  check(error, expected, message, 'throws');
}

export async function rejects(promiseOrFn, expected, message) {
  if (typeof expected === 'string') [message, expected] = [expected, undefined];
  let error;
  let threw = false;
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
  } catch (e) {
    threw = true;
    error = e;
  }
  if (!threw) raise(message ?? 'Missing expected rejection.', undefined, expected, 'rejects');
  check(error, expected, message, 'rejects');
}

function assert(value, message) {
  ok(value, message);
}

export const strictEqual = equal;
export const notStrictEqual = notEqual;
export const deepStrictEqual = deepEqual;
export const notDeepStrictEqual = notDeepEqual;
/** Fails unconditionally. */
export function fail(message) {
  raise(message ?? 'Failed', undefined, undefined, 'fail');
}

Object.assign(assert, {
  AssertionError,
  ok,
  equal,
  notEqual,
  strictEqual,
  notStrictEqual,
  deepEqual,
  deepStrictEqual,
  notDeepEqual,
  notDeepStrictEqual,
  match,
  doesNotMatch,
  throws,
  rejects,
  isDeepStrictEqual,
  fail,
  strict: assert,
});

export default assert;
