//! The read path: a parent's chunks checked and fed in order
//! (`chunk_feed`) to rebuild the whole item (`reassemble`, `reassembler`)
//! or stream one attribute's bytes (`chunk_reader`).

pub(crate) mod chunk_feed;
pub(crate) mod chunk_reader;
pub(crate) mod reassemble;
pub(crate) mod reassembler;
