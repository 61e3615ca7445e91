// Errors raised on the JavaScript side of the package, shaped exactly like
// the ones the WebAssembly side throws: an Error named DynasliceError with
// the core's stable `code`.

/** An Error named DynasliceError carrying `code`. */
export function dynasliceError(code, message) {
  const error = new Error(message);
  error.name = 'DynasliceError';
  error.code = code;
  return error;
}

/** True for an error this package raised (either side). */
export function isDynasliceError(error) {
  return error instanceof Error && error.name === 'DynasliceError' && typeof error.code === 'string';
}

/** OPTIONS_INVALID for `option`, naming what it must be. */
export function badOption(option, expected) {
  return dynasliceError('OPTIONS_INVALID', `option ${option} must be ${expected}`);
}

/** `options[name]` as a boolean, `fallback` when absent. */
export function flag(options, name, fallback) {
  const value = options?.[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw badOption(name, 'a boolean');
  return value;
}

/** `options.format`: `"dynamodb"` (the default) or `"plain"`. */
export function format(options) {
  const value = options?.format;
  if (value === undefined || value === 'dynamodb') return 'dynamodb';
  if (value === 'plain') return 'plain';
  throw badOption('format', typeof value === 'string' ? '"dynamodb" or "plain"' : 'a string');
}

/** A value's path from its segments (names and list indices): `a.b[2].c`. */
export function pathText(segments) {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}

/** An error of `code` about the value at `segments`, its path first. */
export function atPath(code, segments, message) {
  const path = pathText(segments);
  return dynasliceError(code, path === '' ? message : `${path}: ${message}`);
}
