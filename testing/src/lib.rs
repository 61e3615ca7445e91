//! What dynaslice's tests, benchmarks and examples share (not published):
//!
//! - [`capacity_model`]: a proxy in front of a DynamoDB-compatible server
//!   that meters, limits, delays and throttles requests as DynamoDB does,
//!   and [`fault_proxy`], one that fails them as networks and services do;
//!   both over [`relay`].
//! - [`dynamodb_local`]: Amazon's DynamoDB Local, started on loopback;
//!   [`seaweedfs`]: SeaweedFS, a real S3 server, likewise.
//! - [`dynamodb_json`]: DynamoDB JSON items and the shared test vectors;
//!   [`generate`]: property-test generators of items of every shape.
//! - [`order_history`]: realistic documents to store.
//! - [`memory`]: this process's resident memory; [`cli_run`]: running the
//!   `dynaslice` binary.

pub mod capacity_model;
pub mod cli_run;
pub mod dynamodb_json;
pub mod dynamodb_local;
pub mod fault_proxy;
pub mod generate;
pub mod memory;
pub mod order_history;
pub mod relay;
pub mod seaweedfs;
pub mod temp;
