// The value stream's header and type tags (docs/FORMAT.md §3), shared by the
// writer (encode.js) and the reader (decode.js). The Rust core's
// `encoding::tag` holds the same numbers: a wrong one here fails every test
// whose item crosses into WebAssembly.

/** "DSV" and format version 1: the first four bytes of every stream. */
export const STREAM_HEADER = Object.freeze([0x44, 0x53, 0x56, 0x01]);

export const S = 1;
export const N = 2;
export const B = 3;
export const FALSE = 4;
export const TRUE = 5;
export const NULL = 6;
export const L = 7;
export const M = 8;
export const SS = 9;
export const NS = 10;
export const BS = 11;
