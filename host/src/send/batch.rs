//! BatchWriteItem and BatchGetItem: requests in flight as the sender's pace
//! allows, leftovers (UnprocessedItems, UnprocessedKeys) resent with backoff
//! until none remain, each answer's throttling fed back to the pace.

use std::collections::HashMap;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types as sdk;
use dynaslice_core::plan::{BatchGet, BatchWrite, WriteRequest};
use dynaslice_core::{Item, item_size};
use futures::{StreamExt, TryStreamExt};

use super::Sender;
use crate::error::HostError;
use crate::pace::Answer;
use crate::progress::Progress;
use crate::retry::{RetryPolicy, is_throttled};
use crate::sdk_value::{item_from_sdk, item_to_sdk};

impl Sender<'_> {
    /// Sends `batches` with bounded concurrency; each is complete when this
    /// returns `Ok`. `progress` advances by each request's item bytes once stored.
    pub async fn batch_writes(
        &self,
        batches: Vec<BatchWrite>,
        progress: &dyn Progress,
    ) -> Result<(), HostError> {
        futures::stream::iter(batches)
            .map(|batch| self.batch_write(batch, progress))
            .buffer_unordered(self.pace.max())
            .try_collect::<()>()
            .await
    }

    /// One BatchWriteItem, resending UnprocessedItems until none remain.
    /// Each round that stores nothing counts as a failed attempt; a round
    /// that stores something resets the count (it shrinks what is left, so
    /// the loop ends).
    pub async fn batch_write(
        &self,
        batch: BatchWrite,
        progress: &dyn Progress,
    ) -> Result<(), HostError> {
        // Progress in exact item sizes, reported once the whole batch is stored.
        let put_bytes: u64 = batch
            .requests
            .iter()
            .filter(|(_, r)| matches!(r, WriteRequest::Put(_)))
            .map(|(_, r)| r.size() as u64)
            .sum();
        let mut pending: HashMap<String, Vec<sdk::WriteRequest>> = HashMap::new();
        for (table, request) in batch.requests {
            pending
                .entry(table)
                .or_default()
                .push(write_request(request)?);
        }
        let mut rounds = Rounds::default();
        while !pending.is_empty() {
            let (result, attempts) = self
                .retry
                .run(|| async {
                    let permit = self.pace.acquire().await;
                    let result = self
                        .client
                        .batch_write_item()
                        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
                        .set_request_items(Some(pending.clone()))
                        .send()
                        .await;
                    permit.answer(answer(&result, |o| {
                        o.unprocessed_items()
                            .is_some_and(|m| m.values().any(|v| !v.is_empty()))
                    }));
                    result
                })
                .await;
            let output = result.map_err(|e| HostError::dynamo("BatchWriteItem", e, attempts))?;
            for c in output.consumed_capacity() {
                self.consumed.write(Some(c));
            }
            let left = output.unprocessed_items.unwrap_or_default();
            let left: HashMap<_, _> = left.into_iter().filter(|(_, v)| !v.is_empty()).collect();
            let unprocessed = count(&left);
            rounds
                .next(
                    &self.retry,
                    unprocessed < count(&pending),
                    unprocessed,
                    || {
                        (
                            "BatchWriteItem",
                            "UnprocessedItems",
                            format!("{unprocessed} requests"),
                        )
                    },
                )
                .await?;
            pending = left;
        }
        progress.advance(put_bytes);
        Ok(())
    }

    /// Runs `gets` with bounded concurrency and returns every item found.
    pub async fn batch_gets(
        &self,
        gets: Vec<BatchGet>,
        progress: &dyn Progress,
    ) -> Result<Vec<Item>, HostError> {
        let found: Vec<Vec<Item>> = futures::stream::iter(gets)
            .map(|get| self.batch_get(get, progress))
            .buffer_unordered(self.pace.max())
            .try_collect()
            .await?;
        Ok(found.into_iter().flatten().collect())
    }

    /// One BatchGetItem, resending UnprocessedKeys until none remain. Keys
    /// with no item are simply absent from the result.
    pub async fn batch_get(
        &self,
        get: BatchGet,
        progress: &dyn Progress,
    ) -> Result<Vec<Item>, HostError> {
        let keys = get.keys.into_iter().map(item_to_sdk).collect::<Vec<_>>();
        let request = sdk::KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .consistent_read(get.consistent)
            .build()
            .map_err(|e| HostError::Internal(e.to_string()))?;
        let mut pending = HashMap::from([(get.table, request)]);
        let mut found = Vec::new();
        let mut rounds = Rounds::default();
        while !pending.is_empty() {
            let (result, attempts) = self
                .retry
                .run(|| async {
                    let permit = self.pace.acquire().await;
                    let result = self
                        .client
                        .batch_get_item()
                        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
                        .set_request_items(Some(pending.clone()))
                        .send()
                        .await;
                    permit.answer(answer(&result, |o| {
                        o.unprocessed_keys()
                            .is_some_and(|m| m.values().any(|k| !k.keys().is_empty()))
                    }));
                    result
                })
                .await;
            let output = result.map_err(|e| HostError::dynamo("BatchGetItem", e, attempts))?;
            for c in output.consumed_capacity() {
                self.consumed.read(Some(c));
            }
            let mut got = 0;
            for (_, items) in output.responses.unwrap_or_default() {
                for item in items {
                    let item = item_from_sdk(item)
                        .ok_or_else(|| HostError::unknown_type("BatchGetItem"))?;
                    progress.advance(item_size(&item) as u64);
                    found.push(item);
                    got += 1;
                }
            }
            let left: HashMap<_, _> = output
                .unprocessed_keys
                .unwrap_or_default()
                .into_iter()
                .filter(|(_, k)| !k.keys.is_empty())
                .collect();
            let unprocessed: usize = left.values().map(|k| k.keys.len()).sum();
            rounds
                .next(&self.retry, got > 0, unprocessed, || {
                    (
                        "BatchGetItem",
                        "UnprocessedKeys",
                        format!("{unprocessed} keys"),
                    )
                })
                .await?;
            pending = left;
        }
        Ok(found)
    }
}

/// What a batch request's answer says about capacity: throttled when the
/// service refused it for throughput or left part of it unprocessed.
fn answer<T, E: ProvideErrorMetadata>(
    result: &Result<T, SdkError<E, HttpResponse>>,
    partial: impl FnOnce(&T) -> bool,
) -> Answer {
    match result {
        Ok(output) if partial(output) => Answer::Throttled,
        Ok(_) => Answer::Clean,
        Err(e) if is_throttled(e) => Answer::Throttled,
        Err(_) => Answer::Other,
    }
}

/// The rounds of a batch request resent until nothing is left unprocessed:
/// a round that made progress resets the count of failed rounds, too many
/// in a row end the loop with an error, and a backoff precedes every resend.
#[derive(Default)]
struct Rounds {
    failures: u32,
}

impl Rounds {
    /// After a round: `progressed` when it stored or returned something,
    /// `unprocessed` what remains; `error` names the operation, the code and
    /// what remains, for the error.
    async fn next(
        &mut self,
        retry: &RetryPolicy,
        progressed: bool,
        unprocessed: usize,
        error: impl FnOnce() -> (&'static str, &'static str, String),
    ) -> Result<(), HostError> {
        if unprocessed == 0 {
            return Ok(());
        }
        if progressed {
            self.failures = 0;
        } else {
            // Items left unprocessed are the service's answer to a rate:
            // as patient as with throttling errors.
            self.failures += 1;
            if self.failures >= retry.max_throttled_attempts.max(retry.max_attempts) {
                let (operation, aws_code, what) = error();
                return Err(HostError::Dynamo {
                    operation,
                    aws_code: aws_code.into(),
                    message: format!("{what} still unprocessed"),
                    attempts: self.failures,
                });
            }
        }
        tokio::time::sleep(retry.backoff(self.failures)).await;
        Ok(())
    }
}

fn count(requests: &HashMap<String, Vec<sdk::WriteRequest>>) -> usize {
    requests.values().map(Vec::len).sum()
}

fn write_request(request: WriteRequest) -> Result<sdk::WriteRequest, HostError> {
    let built = match request {
        WriteRequest::Put(item) => sdk::WriteRequest::builder()
            .put_request(
                sdk::PutRequest::builder()
                    .set_item(Some(item_to_sdk(item)))
                    .build()
                    .map_err(|e| HostError::Internal(e.to_string()))?,
            )
            .build(),
        WriteRequest::Delete(key) => sdk::WriteRequest::builder()
            .delete_request(
                sdk::DeleteRequest::builder()
                    .set_key(Some(item_to_sdk(key)))
                    .build()
                    .map_err(|e| HostError::Internal(e.to_string()))?,
            )
            .build(),
    };
    Ok(built)
}
