//! What a write, a read and a month of storage cost at list prices, for
//! `estimate` and the benchmarks: DynamoDB on-demand request units against
//! an S3 object's requests (docs/FORMAT.md §5a cites the pages).
//!
//! ```
//! use dynaslice_core::price::{US_EAST_1, object_requests};
//! // A 50 MiB frame in parts of 8 MiB: 9 requests to write, 7 ranged GETs to read.
//! let requests = object_requests(50 << 20, 8 << 20);
//! assert_eq!((requests.writes, requests.reads), (9, 7));
//! let chunks = US_EAST_1.write_units(51_200);
//! let offload = US_EAST_1.s3_writes(requests.writes) + US_EAST_1.write_units(1);
//! assert!(chunks > 500.0 * offload);
//! ```

use crate::object::READ_RANGE_BYTES;

/// List prices in US dollars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListPrices {
    /// One on-demand write request unit.
    pub write_unit: f64,
    /// One on-demand read request unit.
    pub read_unit: f64,
    /// A GB-month of DynamoDB Standard storage.
    pub dynamodb_gb_month: f64,
    /// One S3 PUT, COPY, POST or LIST request.
    pub s3_put: f64,
    /// One S3 GET or HEAD request.
    pub s3_get: f64,
    /// A GB-month of S3 Standard storage (the first 50 TB).
    pub s3_gb_month: f64,
}

/// us-east-1, on-demand: DynamoDB $0.625 per million write request units,
/// $0.125 per million read request units, $0.25 per GB-month; S3 Standard
/// $0.005 per 1,000 PUT-class and $0.0004 per 1,000 GET-class requests,
/// $0.023 per GB-month.
pub const US_EAST_1: ListPrices = ListPrices {
    write_unit: 0.625e-6,
    read_unit: 0.125e-6,
    dynamodb_gb_month: 0.25,
    s3_put: 0.005e-3,
    s3_get: 0.0004e-3,
    s3_gb_month: 0.023,
};

const GB: f64 = 1_000_000_000.0;

impl ListPrices {
    /// `units` write request units.
    pub fn write_units(&self, units: u64) -> f64 {
        units as f64 * self.write_unit
    }

    /// `units` read request units.
    pub fn read_units(&self, units: f64) -> f64 {
        units * self.read_unit
    }

    /// `requests` S3 PUT-class requests.
    pub fn s3_writes(&self, requests: u64) -> f64 {
        requests as f64 * self.s3_put
    }

    /// `requests` S3 GET-class requests.
    pub fn s3_reads(&self, requests: u64) -> f64 {
        requests as f64 * self.s3_get
    }

    /// A month of `bytes` in DynamoDB.
    pub fn dynamodb_month(&self, bytes: u64) -> f64 {
        bytes as f64 / GB * self.dynamodb_gb_month
    }

    /// A month of `bytes` in S3.
    pub fn s3_month(&self, bytes: u64) -> f64 {
        bytes as f64 / GB * self.s3_gb_month
    }
}

/// The S3 requests an object of `stored_len` bytes costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectRequests {
    /// To write it: one PutObject, or CreateMultipartUpload, a part each
    /// of `part_bytes`, and CompleteMultipartUpload.
    pub writes: u64,
    /// To read it whole: a ranged GET per [`READ_RANGE_BYTES`].
    pub reads: u64,
}

/// The S3 requests of writing, and of reading whole, an object of
/// `stored_len` bytes written in parts of `part_bytes`, as the protocol
/// machines send them.
pub fn object_requests(stored_len: u64, part_bytes: usize) -> ObjectRequests {
    let parts = stored_len.div_ceil(part_bytes.max(1) as u64).max(1);
    ObjectRequests {
        writes: if parts == 1 { 1 } else { parts + 2 },
        reads: stored_len.div_ceil(READ_RANGE_BYTES).max(1),
    }
}
