// Pasted JSON: parsed strictly, and every way it can be wrong said in words.

import { PageError } from './errors.js';

/**
 * The pasted text as an object (the item), or a PageError saying what is wrong.
 * @param {string} text
 * @returns {Record<string, unknown>}
 */
export function parsePasted(text) {
  if (text.trim() === '') throw new PageError('JSON_EMPTY', 'Paste a JSON object first: the item, with its attributes as members.');
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new PageError('JSON_INVALID', `The pasted text is not valid JSON: ${jsonProblem(error)}. Fix it and press “Use this JSON” again.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new PageError('JSON_NOT_OBJECT', 'The pasted JSON must be one object: the item, with its attributes as members.');
  }
  return parsed;
}

/** JSON.parse's complaint in words: `Unexpected token … in JSON at position 19 (line 1 column 20)` → `unexpected token … at line 1, column 20`. */
function jsonProblem(error) {
  const text = String(error?.message ?? 'it cannot be read').replace(/\.$/, '');
  const where = / in JSON at position \d+ \(line (\d+) column (\d+)\)$/.exec(text);
  const what = where ? text.slice(0, where.index) : text.replace(/ in JSON at position (\d+)$/, ' at character $1');
  const said = what.charAt(0).toLowerCase() + what.slice(1);
  return where ? `${said} at line ${where[1]}, column ${where[2]}` : said;
}

