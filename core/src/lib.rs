#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod base64;
mod capacity;
mod code;
pub mod codec;
pub mod digest;
pub mod encoding;
pub mod history;
mod key;
pub mod layout;
pub mod manifest;
pub mod number;
pub mod object;
pub mod plan;
pub mod price;
pub mod protocol;
mod read;
mod size;
mod table;
pub mod upload;
mod validate;
mod value;
mod version;
mod write;

pub use capacity::{
    READ_UNIT_BYTES, ReadConsistency, WRITE_UNIT_BYTES, read_half_units, read_units, write_units,
};
pub use code::{Category, Code};
pub use key::{
    IndexKey, KeyAttribute, KeySchema, KeyType, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES,
};
pub use read::chunk_reader::{ChunkReader, READ_PIECE_BYTES};
pub use read::reassemble::{ReassembleError, ReassembleOptions, reassemble, verify_chunk};
pub use read::reassembler::Reassembler;
pub use size::{MAX_ITEM_BYTES, attribute_size, item_size, value_size};
pub use table::Table;
pub use validate::{MAX_NESTING_DEPTH, ValidateOptions, Violation, ViolationKind, validate_item};
pub use value::{AttributeValue, Item};
pub use version::{VERSION_ID_LEN, VersionId, VersionIdError};
pub use write::item_stream::{ItemSplit, ItemStream, split_item_streamed};
pub use write::split::{
    CodecChoice, DEFAULT_MAX_CHUNK_KEYS, DEFAULT_MAX_RAW_BYTES, DEFAULT_PARENT_BUDGET, SplitError,
    SplitItem, SplitOptions, split_item,
};
pub use write::stream_split::{ObjectFrame, Part, StreamSplit};

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
    write::split::SplitError,
    read::reassemble::ReassembleError,
    plan::PlanError,
    version::VersionIdError,
    upload::UploadError,
    protocol::ProtocolError
);
