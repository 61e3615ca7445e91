//! dynaslice-host: stores DynamoDB items of any size. It executes
//! `dynaslice-core`'s plans with `aws-sdk-dynamodb` on tokio: the commit
//! protocol of `docs/FORMAT.md` (chunks first, then one write of the parent
//! as the only commit point: last writer wins by default, optimistic locking
//! with [`PutOptions::precondition`]), batch leftovers and throttling
//! retried with bounded exponential backoff and full jitter, consistent
//! reads checked byte for byte, and `gc` for what crashed writers leave.
//!
//! Core decides, the host sends: batch boundaries, keys and conditions come
//! from core's plans; functions here take a `&Client` and a [`TableConfig`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), dynaslice_host::HostError> {
//! use dynaslice_core::{AttributeValue, Item, KeySchema, KeyType};
//! use dynaslice_host::{EmbeddedStore, GetOptions, PutOptions, TableConfig, create_tables};
//!
//! let store = EmbeddedStore::open(None)?; // in memory, in this process: no socket
//! let client = store.client();
//! let table = TableConfig::chunk_table("docs", KeySchema::partition("id", KeyType::S));
//! create_tables(&client, &table).await?;
//!
//! let mut item = Item::new();
//! item.insert("id".into(), AttributeValue::S("big".into()));
//! item.insert("body".into(), AttributeValue::B(vec![7; 2_000_000]));
//! dynaslice_host::put(&client, &table, &item, &PutOptions::default(), &()).await?;
//!
//! let fetched = dynaslice_host::get(&client, &table, &item, &GetOptions::default(), &()).await?;
//! assert_eq!(fetched.unwrap().item, item);
//! # Ok(()) }
//! ```
//!
//! Cargo features: `embedded` (the in-process store, dynoxide on SQLite),
//! `serve` (`dynaslice serve` and [`serve::upload_router`]), `cli` (the
//! binary; both of the others). All on by default; an application that
//! only stores and reads items takes `default-features = false`.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bulk;
mod client;
mod cpu;
mod delete;
#[cfg(feature = "embedded")]
mod embedded;
#[cfg(feature = "embedded")]
mod embedded_s3;
mod error;
mod executor;
mod gc;
mod get;
mod get_file;
mod history;
mod inspect;
pub mod json;
mod object_upload;
mod objects;
mod out_file;
mod partial_file;
mod preview;
mod progress;
mod put;
mod query;
mod sdk_value;
#[cfg(feature = "serve")]
pub mod serve;
mod table;
mod update;

pub use bulk::{
    DEFAULT_IN_FLIGHT, ExportMark, ManyOptions, ManyReport, export, export_resumable, put_many,
};
pub use client::{aws_client, local_client};
pub use delete::{DeleteOutcome, delete};
pub use dynaslice_core::protocol::RetryPolicy;
pub use dynaslice_core::protocol::policy::{
    CHUNKS_PER_READ, DEFAULT_CONCURRENCY, MAX_CLOCK_SKEW_MS,
};
#[cfg(feature = "embedded")]
pub use embedded::EmbeddedStore;
#[cfg(feature = "embedded")]
pub use embedded_s3::EmbeddedS3;
pub use error::HostError;
pub use gc::{GcOptions, GcPage, GcReport, ObjectGcReport, gc, gc_objects, gc_paged, gc_segments};
pub use get::{Fetched, GetOptions, check_key, get};
pub use get_file::{FileOutcome, get_file};
pub use history::{Listed, Listing, restore, versions};
pub use inspect::{
    ChunkInfo, Inspection, ListPage, StoredItem, inspect, list, list_page, stored_parent,
};
pub use json::OutcomeJson;
pub use object_upload::{
    ObjectUploadRequest, PresignedPut, commit_object_upload, max_frame_bytes,
    presign_object_upload, refuses_upload,
};
pub use objects::{Objects, aws_s3_client, ensure_bucket, local_s3_client};
pub use out_file::replace_file;
pub use preview::{Preview, preview};
pub use progress::{ByteCounter, Progress};
pub use put::{PutOptions, PutOutcome, fresh_version, put, put_reader};
pub use query::{
    Damaged, Position, Query, QueryOptions, QueryOutcome, Segments, VerifyPage, query, verify,
    verify_segments,
};
pub use sdk_value::{SdkItem, from_sdk, item_from_sdk, item_to_sdk, to_sdk};
pub use table::{
    CHUNK_KEY_NAME, Capacity, LayoutKind, TableConfig, add_anchors, capacity, chunk_table_name,
    create_tables, describe_key,
};
pub use update::{
    Changes, ReindexReport, Rewrite, UpdateOptions, UpdateOutcome, UpdatePlan, UpdateSteps,
    reindex, update,
};
