// Every failure the page can meet, as a sentence a person understands.
// Codes come from the server (docs/API.md) and from the npm package
// (DynasliceError.code); anything unknown still becomes a sentence, never a
// stack trace.

import { bytes } from './format.js';

/** An error the server answered with: HTTP status, stable code, its message. */
export class ServerError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = 'ServerError';
    this.status = status;
    this.code = code;
  }
}

/** The network failed before an answer came (server stopped, connection cut). */
export class NetworkError extends Error {
  constructor(message = 'network failure') {
    super(message);
    this.name = 'NetworkError';
    this.code = 'NETWORK';
  }
}

/** A problem the page found itself, already worded for a person. */
export class PageError extends Error {
  constructor(code, sentence) {
    super(sentence);
    this.name = 'PageError';
    this.code = code;
    this.sentence = sentence;
  }
}

/** What to do without this launch's key (a missing or an old token). */
const OPEN_THE_LINK = 'Open the link `npm start` printed (it carries this launch’s key); this page cannot reach the server’s data without it.';

/** The page has no token to send: nothing was sent. */
export function tokenNeeded() {
  return new PageError('TOKEN_REQUIRED', OPEN_THE_LINK);
}

const DAMAGED = 'The server checked the upload and found it damaged ({detail}), so it stored nothing. Prepare it again and retry.';

/**
 * Sentences by code. `{detail}` is the server's or package's own message
 * (lowercase, with the numbers); `{prefix}` and `{limit}` come from the
 * server's configuration.
 */
const SENTENCES = {
  NETWORK: 'The page cannot reach the dynaslice server. Is `npm start` still running?',
  TOKEN_REQUIRED: OPEN_THE_LINK,
  TOKEN_INVALID: OPEN_THE_LINK,
  HOST_NOT_ALLOWED: 'The server does not answer to this address. Open the link `npm start` printed, or start it with --allow-host for this name.',
  CROSS_ORIGIN_REFUSED: 'The server refused a request that did not come from its own page. Open the link `npm start` printed.',
  CONTENT_TYPE_UNSUPPORTED: 'The server does not accept the upload in that form ({detail}); nothing was stored.',
  SERVER_BUSY: 'The server is busy with other uploads and reads. Try again in a moment.',
  BODY_TIMEOUT: 'The upload arrived too slowly and the server stopped waiting for it; nothing was stored. Try again.',
  TABLE_NOT_ALLOWED: 'This server does not allow that table; pick one of the tables it lists.',
  KEY_OUT_OF_SCOPE: 'This server only accepts keys that start with “{prefix}”. Change the key and try again.',
  BODY_TOO_LARGE: 'The upload is larger than this server accepts ({limit}). Choose a smaller item or a codec that compresses more.',
  VIRTUAL_ITEM_TOO_LARGE: 'The item is larger than this server accepts ({limit}). Choose a smaller item.',
  DECOMPRESS_LIMIT: 'The item is larger than this server accepts ({limit}). Choose a smaller item.',
  NOT_FOUND: 'That item does not exist (it may have been deleted already).',
  TABLE_NOT_FOUND: 'The table does not exist on the server.',
  CONFLICT: 'Another writer changed this item at the same moment; nothing of this upload was kept. Try again.',
  VERSION_REUSED: 'This exact upload was already sent once. It has been prepared again; press Upload once more.',
  DYNAMODB_ERROR: 'The database failed the request ({detail}). Try again in a moment.',
  DYNAMODB_VALIDATION: 'The database refused the request ({detail}).',
  CONNECTION_FAILED: 'The server cannot reach its database right now. Try again in a moment.',
  EMBEDDED_STORE: 'The server’s local database failed ({detail}).',
  IO_ERROR: 'The server could not read or write a file ({detail}).',
  UPLOAD_MALFORMED: 'The server could not read the upload ({detail}); nothing was stored.',
  UPLOAD_CANCELLED: 'The upload was cancelled; nothing was stored.',
  BODY_INCOMPLETE: 'The upload was cut off before it was complete; nothing was stored.',
  BODY_TRAILING: 'The upload had more data than it declared; nothing was stored.',
  CHUNK_OVERSIZED: 'A chunk is larger than DynamoDB’s 400 KB item limit ({detail}); nothing was stored.',
  CHUNKS_UNEXPECTED: DAMAGED,
  CHUNK_COUNT_MISMATCH: DAMAGED,
  CHUNK_LENGTH_MISMATCH: DAMAGED,
  CHUNKS_VANISHED: 'Another writer kept replacing this item while it was read ({detail}); try again in a moment.',
  ITEM_EXPIRED: 'This item has expired (its TTL passed) and is being deleted ({detail}).',
  CLOCK_SKEW: 'The server’s clock is too far from the database’s to write safely ({detail}); nothing was stored.',
  CHUNK_DIGEST_MISMATCH: DAMAGED,
  DIGEST_MISMATCH: DAMAGED,
  LENGTH_MISMATCH: DAMAGED,
  CHUNK_MISSING: DAMAGED,
  CHUNK_TRUNCATED: DAMAGED,
  FRAME_MISMATCH: DAMAGED,
  FRAME_TRUNCATED: DAMAGED,
  CODEC_CORRUPT: DAMAGED,
  KEY_INVALID: 'The key is not valid for this table ({detail}).',
  KEY_MISSING: 'The item has no value for the table’s key ({detail}). Fill in the key field.',
  KEY_EMPTY: 'The key is empty. Fill in the key field.',
  KEY_WRONG_TYPE: 'The key has the wrong type for this table ({detail}).',
  KEY_TOO_LARGE: 'The key is too long for DynamoDB ({detail}).',
  PARAMETER_MISSING: 'The page sent an incomplete request ({detail}).',
  PARAMETER_INVALID: 'The page sent an invalid request ({detail}).',
  ATTRIBUTE_NOT_BLOB: 'That attribute is not text or binary, so it cannot be read back as bytes.',
  NUMBER_IMPRECISE: 'A number in the JSON has more digits than JavaScript keeps exactly ({detail}). Use the DynamoDB JSON format, where numbers are text.',
  NUMBER_TOO_PRECISE: 'A number has more than the 38 significant digits DynamoDB stores ({detail}).',
  NUMBER_OUT_OF_RANGE: 'A number is outside the range DynamoDB stores ({detail}).',
  NUMBER_INVALID: 'A number is not valid ({detail}).',
  SET_EMPTY: 'DynamoDB does not store empty sets ({detail}).',
  SET_DUPLICATE: 'A set holds the same member twice ({detail}).',
  NESTING_TOO_DEEP: 'The item nests deeper than DynamoDB’s 32 levels ({detail}).',
  ITEM_TOO_LARGE: 'The item is too large ({detail}).',
  PARENT_TOO_LARGE: 'Even after moving every large attribute off, the item’s key and kept attributes exceed 400 KB ({detail}).',
  INPUT_INVALID: 'The item is not in the chosen format ({detail}). Check the format choice above the text box.',
  OPTIONS_INVALID: 'The page asked for something the package does not support ({detail}).',
  WASM_LOAD: 'The page could not load its WebAssembly module, so it cannot measure or split items. Reload the page.',
  VERIFY_MISMATCH: 'The item read back differs from what was uploaded ({detail}).',
};

/**
 * The sentence for `error`. `context` gives `keyPrefix` and `maxItemBytes` /
 * `maxBodyBytes` from /api/config.
 * @param {unknown} error
 * @param {{ keyPrefix?: string | null, maxItemBytes?: number, maxBodyBytes?: number }} [context]
 * @returns {string}
 */
export function sentence(error, context = {}) {
  if (error instanceof PageError) return error.sentence;
  const code = typeof error?.code === 'string' ? error.code : '';
  const detail = typeof error?.message === 'string' ? firstLine(error.message) : '';
  const template = SENTENCES[code];
  if (template) {
    const limit = code === 'BODY_TOO_LARGE' ? context.maxBodyBytes : context.maxItemBytes;
    return template
      .replace('{detail}', detail || code.toLowerCase().replaceAll('_', ' '))
      .replace('{prefix}', context.keyPrefix ?? '')
      .replace('{limit}', limit ? bytes(limit) : 'its limit');
  }
  if (error instanceof ServerError) {
    if (error.status >= 500) return `The server had a problem (HTTP ${error.status}${detail ? `: ${detail}` : ''}). Try again in a moment.`;
    return `The server refused the request${detail ? `: ${detail}` : ''}${code ? ` (${code})` : ''}.`;
  }
  if (error?.name === 'DynasliceError') return `The item cannot be stored: ${detail}${code ? ` (${code})` : ''}.`;
  return `Something went wrong: ${detail || 'an unknown error'}. The page still works; try again.`;
}

/** The first line of a message, without a trailing period (sentences add their own). */
function firstLine(message) {
  return message.split('\n')[0].trim().replace(/\.$/, '');
}
