//! The benchmarks' baseline, doing what the public AWS sample for large
//! items does: the raw bytes cut into ~400 KB chunks (409,600 bytes minus the
//! key and attribute-name overhead), stored under one partition key with
//! string sort keys `chunk-1`, `chunk-2`, ..., one sequential PutItem per
//! chunk (no batching, no concurrency); read back with one Query on the
//! partition key (following LastEvaluatedKey, which the sample does not, so
//! that all of it is read; strongly consistent like dynaslice's reads),
//! sorted by the number parsed out of the sort key, concatenated. Its table
//! has `pk` (S) + `sk` (S).
//!
//! A throttled request is sent again after the host's default backoff (full
//! jitter, 25 ms doubling to 2 s), as the AWS SDK's retry modes do; unlike
//! the SDK's default (3 attempts) it does not give up, so that the
//! baseline's throughput, not its failure, is what gets measured.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue as Sdk, BillingMode, ConsumedCapacity, KeySchemaElement,
    KeyType as SdkKey, ReturnConsumedCapacity, ScalarAttributeType,
};
use dynaslice_host::RetryPolicy;

/// DynamoDB's item size limit.
const ITEM_LIMIT: usize = 409_600;

/// Whether an error is DynamoDB refusing for throughput.
pub fn throttled<E: ProvideErrorMetadata>(error: &SdkError<E, HttpResponse>) -> bool {
    matches!(
        error.code(),
        Some("ProvisionedThroughputExceededException" | "ThrottlingException")
    )
}

/// Runs `call` until it is not throttled (at most 1,000 attempts), sleeping
/// [`RetryPolicy::default`]'s backoff between attempts; counts the throttled
/// attempts in `throttles`.
pub async fn retrying<T, E, F, Fut>(
    throttles: &AtomicU64,
    mut call: F,
) -> Result<T, SdkError<E, HttpResponse>>
where
    E: ProvideErrorMetadata,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
{
    let policy = RetryPolicy::default();
    let mut retry = 0;
    loop {
        match call().await {
            Err(error) if throttled(&error) && retry < 1_000 => {
                throttles.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(policy.backoff(retry, fastrand::f64())).await;
                retry += 1;
            }
            other => return other,
        }
    }
}

/// Creates the baseline's table: `pk` (S) + `sk` (S), on demand.
pub async fn create_table(client: &Client, table: &str) {
    let mut request = client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest);
    for (name, role) in [("pk", SdkKey::Hash), ("sk", SdkKey::Range)] {
        request = request
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(name)
                    .key_type(role)
                    .build()
                    .expect("key schema"),
            )
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(name)
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .expect("attribute definition"),
            );
    }
    request.send().await.expect("baseline table created");
}

/// Chunk length for partition key `pk`: what is left of 409,600 bytes after
/// the attribute names, the key values and the longest sort key we use.
pub fn chunk_len(pk: &str) -> usize {
    let sk_max = "chunk-".len() + 10;
    ITEM_LIMIT - ("pk".len() + pk.len()) - ("sk".len() + sk_max) - "data".len()
}

/// A chunk item read back: the number in its sort key `chunk-N`, and its
/// data.
pub fn numbered_chunk(mut item: HashMap<String, Sdk>) -> (u64, Vec<u8>) {
    let number = match item.get("sk") {
        Some(Sdk::S(sk)) => sk
            .strip_prefix("chunk-")
            .and_then(|n| n.parse::<u64>().ok())
            .expect("sort key chunk-N"),
        _ => panic!("no sort key"),
    };
    let data = match item.remove("data") {
        Some(Sdk::B(blob)) => blob.into_inner(),
        _ => panic!("no data"),
    };
    (number, data)
}

/// The units a request consumed, as its answer reports them (0 if not).
fn capacity_units(consumed: Option<&ConsumedCapacity>) -> f64 {
    consumed.and_then(|c| c.capacity_units).unwrap_or(0.0)
}

/// Writes `bytes` as `chunk-1`, `chunk-2`, ... with one PutItem each, in
/// order; returns the write units consumed and the chunk count.
pub async fn put(
    client: &Client,
    table: &str,
    pk: &str,
    bytes: &[u8],
    throttles: &AtomicU64,
) -> (f64, usize) {
    let mut units = 0.0;
    let chunks = bytes.chunks(chunk_len(pk));
    let count = chunks.len();
    for (i, chunk) in chunks.enumerate() {
        let request = client
            .put_item()
            .table_name(table)
            .item("pk", Sdk::S(pk.to_string()))
            .item("sk", Sdk::S(format!("chunk-{}", i + 1)))
            .item("data", Sdk::B(Blob::new(chunk.to_vec())))
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        let output = retrying(throttles, || request.clone().send())
            .await
            .expect("baseline PutItem");
        units += capacity_units(output.consumed_capacity.as_ref());
    }
    (units, count)
}

/// Reads every chunk of `pk` with Query (all pages), orders the chunks by
/// the number in their sort key and concatenates them; returns the bytes
/// and the read units consumed.
pub async fn get(client: &Client, table: &str, pk: &str, throttles: &AtomicU64) -> (Vec<u8>, f64) {
    let mut chunks: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut units = 0.0;
    let mut start: Option<HashMap<String, Sdk>> = None;
    loop {
        let request = client
            .query()
            .table_name(table)
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", Sdk::S(pk.to_string()))
            .consistent_read(true)
            .set_exclusive_start_key(start.take())
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        let output = retrying(throttles, || request.clone().send())
            .await
            .expect("baseline Query");
        units += capacity_units(output.consumed_capacity.as_ref());
        chunks.extend(
            output
                .items
                .unwrap_or_default()
                .into_iter()
                .map(numbered_chunk),
        );
        match output.last_evaluated_key {
            Some(key) if !key.is_empty() => start = Some(key),
            _ => break,
        }
    }
    chunks.sort_by_key(|(n, _)| *n);
    let mut bytes = Vec::with_capacity(chunks.iter().map(|(_, d)| d.len()).sum());
    for (_, data) in chunks {
        bytes.extend_from_slice(&data);
    }
    (bytes, units)
}
