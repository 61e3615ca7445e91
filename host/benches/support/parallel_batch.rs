//! The model benchmark's second baseline: the AWS sample's chunks (same
//! lengths, one partition key, sort keys `chunk-N`, `support/aws_sample.rs`)
//! written with BatchWriteItem, 25 chunks a request, [`IN_FLIGHT`] requests
//! at once, into that one item collection; read back with BatchGetItem of the
//! exact keys, [`KEYS_PER_GET`] a request, [`IN_FLIGHT`] at once (the chunk
//! count is passed in: generous to the baseline, which stores no manifest).
//! Unprocessed items and keys, and throttled requests, are sent again after
//! the host's default backoff. What a careful hand-written client gets from
//! one item collection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{AttributeValue as Sdk, KeysAndAttributes, PutRequest, WriteRequest};
use dynaslice_host::RetryPolicy;
use futures::StreamExt;

use crate::aws_sample::{chunk_len, numbered_chunk, retrying};

/// Requests in flight at once, as many as dynaslice's default.
pub const IN_FLIGHT: usize = 8;
/// BatchWriteItem's limit.
const PUTS_PER_WRITE: usize = 25;
/// 32 chunks of at most 409,600 bytes stay under BatchGetItem's 16 MB answer.
pub const KEYS_PER_GET: usize = 32;

/// What the client met: throttled requests and requests handed back
/// unprocessed.
#[derive(Default)]
pub struct Met {
    /// Throttling answers.
    pub throttles: AtomicU64,
    /// Items or keys handed back unprocessed.
    pub unprocessed: AtomicU64,
}

/// The rounds of one batch: each round's requests handed back unprocessed
/// are counted, and sent again after the host's default backoff.
struct Rounds<'a> {
    met: &'a Met,
    policy: RetryPolicy,
    retry: u32,
}

impl<'a> Rounds<'a> {
    fn new(met: &'a Met) -> Self {
        Rounds {
            met,
            policy: RetryPolicy::default(),
            retry: 0,
        }
    }

    /// Counts `count` requests handed back and, if any were, sleeps the
    /// backoff before the next round.
    async fn handed_back(&mut self, count: usize) {
        if count == 0 {
            return;
        }
        self.met
            .unprocessed
            .fetch_add(count as u64, Ordering::Relaxed);
        tokio::time::sleep(self.policy.backoff(self.retry, fastrand::f64())).await;
        self.retry += 1;
    }
}

fn key(pk: &str, n: usize) -> HashMap<String, Sdk> {
    HashMap::from([
        ("pk".to_string(), Sdk::S(pk.to_string())),
        ("sk".to_string(), Sdk::S(format!("chunk-{n}"))),
    ])
}

/// Writes `bytes` as chunks `chunk-1`, ... of `pk`; returns the chunk count.
pub async fn put(client: &Client, table: &str, pk: &str, bytes: &[u8], met: &Met) -> usize {
    let chunks: Vec<&[u8]> = bytes.chunks(chunk_len(pk)).collect();
    let count = chunks.len();
    let batches: Vec<Vec<WriteRequest>> = chunks
        .chunks(PUTS_PER_WRITE)
        .enumerate()
        .map(|(b, group)| {
            group
                .iter()
                .enumerate()
                .map(|(i, chunk)| {
                    let mut item = key(pk, b * PUTS_PER_WRITE + i + 1);
                    item.insert("data".to_string(), Sdk::B(Blob::new(chunk.to_vec())));
                    WriteRequest::builder()
                        .put_request(
                            PutRequest::builder()
                                .set_item(Some(item))
                                .build()
                                .expect("put request"),
                        )
                        .build()
                })
                .collect()
        })
        .collect();
    futures::stream::iter(batches)
        .map(|mut pending| async move {
            let mut rounds = Rounds::new(met);
            while !pending.is_empty() {
                let output = retrying(&met.throttles, || {
                    client
                        .batch_write_item()
                        .request_items(table, pending.clone())
                        .send()
                })
                .await
                .expect("baseline BatchWriteItem");
                pending = output
                    .unprocessed_items
                    .and_then(|mut u| u.remove(table))
                    .unwrap_or_default();
                rounds.handed_back(pending.len()).await;
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect::<Vec<()>>()
        .await;
    count
}

/// Reads chunks `chunk-1` to `chunk-<count>` of `pk` (strongly consistent)
/// and concatenates them.
pub async fn get(client: &Client, table: &str, pk: &str, count: usize, met: &Met) -> Vec<u8> {
    let keys: Vec<HashMap<String, Sdk>> = (1..=count).map(|n| key(pk, n)).collect();
    let groups: Vec<Vec<(u64, Vec<u8>)>> = futures::stream::iter(keys.chunks(KEYS_PER_GET))
        .map(|group| async move {
            let mut rounds = Rounds::new(met);
            let mut pending = group.to_vec();
            let mut got = Vec::new();
            while !pending.is_empty() {
                let request = KeysAndAttributes::builder()
                    .set_keys(Some(pending.clone()))
                    .consistent_read(true)
                    .build()
                    .expect("keys");
                let output = retrying(&met.throttles, || {
                    client
                        .batch_get_item()
                        .request_items(table, request.clone())
                        .send()
                })
                .await
                .expect("baseline BatchGetItem");
                let items = output.responses.and_then(|mut r| r.remove(table));
                got.extend(items.unwrap_or_default().into_iter().map(numbered_chunk));
                pending = output
                    .unprocessed_keys
                    .and_then(|mut u| u.remove(table))
                    .map(|k| k.keys)
                    .unwrap_or_default();
                rounds.handed_back(pending.len()).await;
            }
            got
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let mut chunks: Vec<(u64, Vec<u8>)> = groups.into_iter().flatten().collect();
    assert_eq!(chunks.len(), count, "every chunk read");
    chunks.sort_by_key(|(n, _)| *n);
    chunks.into_iter().flat_map(|(_, data)| data).collect()
}
