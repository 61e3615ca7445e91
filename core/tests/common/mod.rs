//! What core's own tests share: DynamoDB JSON, the vectors and the property
//! generators (in `dynaslice-testing`, shared with the host's tests), and
//! stored items built by hand for tampering (`stored`).
#![allow(dead_code, unused_imports)]

pub use dynaslice_testing::dynamodb_json::*;
pub use dynaslice_testing::generate;

pub mod stored;
