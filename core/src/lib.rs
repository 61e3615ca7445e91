#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod base64;
mod capacity;
mod chunk_feed;
mod chunk_reader;
mod code;
pub mod codec;
mod cutter;
pub mod digest;
pub mod encoding;
mod item_stream;
mod key;
pub mod layout;
pub mod manifest;
pub mod number;
mod payload;
pub mod plan;
pub mod protocol;
mod reassemble;
mod reassembler;
mod size;
mod spill;
mod split;
mod stream_split;
mod table;
pub mod upload;
mod validate;
mod value;
mod version;

pub use capacity::{
    READ_UNIT_BYTES, ReadConsistency, WRITE_UNIT_BYTES, read_half_units, read_units, write_units,
};
pub use chunk_reader::{ChunkReader, READ_PIECE_BYTES};
pub use code::{Category, Code};
pub use item_stream::{ItemSplit, ItemStream, split_item_streamed};
pub use key::{KeyAttribute, KeySchema, KeyType, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
pub use reassemble::{ReassembleError, ReassembleOptions, reassemble, verify_chunk};
pub use reassembler::Reassembler;
pub use size::{MAX_ITEM_BYTES, attribute_size, item_size, value_size};
pub use split::{
    CodecChoice, DEFAULT_MAX_RAW_BYTES, DEFAULT_PARENT_BUDGET, SplitError, SplitItem, SplitOptions,
    split_item,
};
pub use stream_split::StreamSplit;
pub use table::Table;
pub use validate::{MAX_NESTING_DEPTH, ValidateOptions, Violation, ViolationKind, validate_item};
pub use value::{AttributeValue, Item};
pub use version::{VERSION_ID_LEN, VersionId, VersionIdError};

/// Implements `std::error::Error` for the crate's error types when `std` is on.
macro_rules! std_errors {
    ($($t:ty),*) => {
        $(#[cfg(feature = "std")] impl std::error::Error for $t {})*
    };
}
std_errors!(
    number::NumberError,
    codec::CodecError,
    validate::Violation,
    encoding::DecodeError,
    manifest::ManifestError,
    layout::ChunkKeyError,
    split::SplitError,
    reassemble::ReassembleError,
    plan::PlanError,
    version::VersionIdError,
    upload::UploadError,
    protocol::ProtocolError
);
