//! Sends core's requests with the SDK: one function per request kind, each
//! retried by the [`RetryPolicy`]; the batch requests are in [`batch`].

mod batch;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types as sdk;
use dynaslice_core::Item;
use dynaslice_core::plan::{Condition, Delete, Get, Put, TransactAction, Transaction};

use crate::clock::StoreClock;
use crate::error::HostError;
use crate::pace::Pace;
use crate::retry::{RetryPolicy, is_throttled, is_transient};
use crate::sdk_value::{SdkItem, item_from_sdk, item_to_sdk, to_sdk};

/// The client, the retry policy, how many batch requests fly at once (a
/// [`Pace`] that adapts to throttling), and the capacity the server reported
/// consuming (ReturnConsumedCapacity).
#[derive(Clone)]
pub(crate) struct Sender<'a> {
    pub client: &'a Client,
    pub retry: RetryPolicy,
    pub pace: Arc<Pace>,
    pub consumed: Arc<Consumed>,
    /// The store's time, from the `Date` of parent reads and scans.
    pub clock: Arc<StoreClock>,
}

/// Capacity units consumed, as the server reported them, in thousandths.
#[derive(Debug, Default)]
pub(crate) struct Consumed {
    read: AtomicU64,
    write: AtomicU64,
}

impl Consumed {
    fn add(counter: &AtomicU64, capacity: Option<&sdk::ConsumedCapacity>) {
        let units = capacity.and_then(|c| c.capacity_units).unwrap_or(0.0);
        counter.fetch_add((units * 1000.0).round() as u64, Ordering::Relaxed);
    }
    fn read(&self, capacity: Option<&sdk::ConsumedCapacity>) {
        Self::add(&self.read, capacity);
    }
    fn write(&self, capacity: Option<&sdk::ConsumedCapacity>) {
        Self::add(&self.write, capacity);
    }
    /// Read units consumed so far.
    pub fn read_units(&self) -> f64 {
        self.read.load(Ordering::Relaxed) as f64 / 1000.0
    }
    /// Write units consumed so far.
    pub fn write_units(&self) -> f64 {
        self.write.load(Ordering::Relaxed) as f64 / 1000.0
    }
}

/// The most batch requests in flight at once when the caller does not say.
/// Each sender starts at [`crate::pace::INITIAL_LIMIT`] (readers at
/// [`crate::pace::INITIAL_READ_LIMIT`]) and adapts between 1
/// and this to throttling.
pub const DEFAULT_CONCURRENCY: usize = 16;

impl<'a> Sender<'a> {
    /// A sender with the default retry policy and concurrency, for
    /// operations that take no write options (inspect, gc).
    pub fn with_defaults(client: &'a Client) -> Self {
        Self::new(client, RetryPolicy::default(), DEFAULT_CONCURRENCY)
    }

    /// A sender with its own capacity count and pace, at most `concurrency`
    /// batch requests in flight.
    pub fn new(client: &'a Client, retry: RetryPolicy, concurrency: usize) -> Self {
        Self::with_pace(client, retry, Pace::new(concurrency))
    }

    /// A sender for reading chunks: it starts with the whole read window in
    /// flight ([`crate::pace::INITIAL_READ_LIMIT`]).
    pub fn for_reads(client: &'a Client, retry: RetryPolicy, concurrency: usize) -> Self {
        let pace = Pace::starting_at(crate::pace::INITIAL_READ_LIMIT, concurrency);
        Self::with_pace(client, retry, pace)
    }

    fn with_pace(client: &'a Client, retry: RetryPolicy, pace: Pace) -> Self {
        Self {
            client,
            retry,
            pace: Arc::new(pace),
            consumed: Arc::default(),
            clock: Arc::default(),
        }
    }
}

/// A conditional write's outcome.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Written {
    /// Applied.
    Yes,
    /// Its condition did not hold (maybe because an earlier attempt of the
    /// same request was applied unseen: the caller re-reads to tell).
    ConditionFailed,
}

/// Which failures of an unconditional write may be resent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Every transient failure: the write is harmless to apply twice.
    Transient,
    /// Only failures that prove it was not applied (throttling).
    OnlyUnapplied,
}

/// A write that failed: whether it may have been applied all the same
/// (a 500 or a lost connection after the server carried it out), or
/// surely was not (throttled, refused as invalid).
#[derive(Debug)]
pub(crate) struct Unsent {
    pub maybe_applied: bool,
    pub error: HostError,
}

fn condition_parts(
    condition: Option<Condition>,
) -> (
    Option<String>,
    Option<HashMap<String, String>>,
    Option<SdkItem>,
) {
    let Some(c) = condition else {
        return (None, None, None);
    };
    let names = (!c.names.is_empty()).then(|| c.names.into_iter().collect());
    let values =
        (!c.values.is_empty()).then(|| c.values.into_iter().map(|(k, v)| (k, to_sdk(v))).collect());
    (Some(c.expression), names, values)
}

impl Sender<'_> {
    /// GetItem; `None` when there is no such item.
    pub async fn get(&self, get: Get) -> Result<Option<Item>, HostError> {
        let key = item_to_sdk(get.key);
        let (result, attempts) = self
            .retry
            .run(|| {
                self.client
                    .get_item()
                    .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
                    .table_name(&get.table)
                    .set_key(Some(key.clone()))
                    .consistent_read(get.consistent)
                    .customize()
                    .interceptor(self.clock.observer())
                    .send()
            })
            .await;
        let output = result.map_err(|e| HostError::dynamo("GetItem", e, attempts))?;
        self.consumed.read(output.consumed_capacity.as_ref());
        match output.item {
            None => Ok(None),
            Some(item) => item_from_sdk(item)
                .map(Some)
                .ok_or_else(|| HostError::unknown_type("GetItem")),
        }
    }

    /// The outcome of a conditional write whose answer carries its capacity.
    fn conditional<E>(
        &self,
        operation: &'static str,
        result: Result<Option<sdk::ConsumedCapacity>, SdkError<E, HttpResponse>>,
        attempts: u32,
        condition_failed: impl Fn(&E) -> bool,
    ) -> Result<Written, HostError>
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata + std::error::Error + 'static,
    {
        match result {
            Ok(capacity) => {
                self.consumed.write(capacity.as_ref());
                Ok(Written::Yes)
            }
            Err(e) if e.as_service_error().is_some_and(&condition_failed) => {
                Ok(Written::ConditionFailed)
            }
            Err(e) => Err(HostError::dynamo(operation, e, attempts)),
        }
    }

    /// A PutItem, conditional when the plan says so.
    pub async fn put(&self, put: Put) -> Result<Written, HostError> {
        let (expression, names, values) = condition_parts(put.condition);
        let item = item_to_sdk(put.item);
        let (result, attempts) = self
            .retry
            .run(|| {
                self.client
                    .put_item()
                    .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
                    .table_name(&put.table)
                    .set_item(Some(item.clone()))
                    .set_condition_expression(expression.clone())
                    .set_expression_attribute_names(names.clone())
                    .set_expression_attribute_values(values.clone())
                    .send()
            })
            .await;
        let output = result.map(|o| o.consumed_capacity);
        self.conditional("PutItem", output, attempts, |e| {
            e.is_conditional_check_failed_exception()
        })
    }

    /// An unconditional PutItem that returns the item it replaced
    /// (`ReturnValues: ALL_OLD`). `Resend::OnlyUnapplied` resends it only
    /// after throttling: a resend of a write that may have been applied
    /// could land after a later writer's commit. On failure, says whether
    /// it may have been applied.
    pub async fn put_returning_old(
        &self,
        put: Put,
        resend: Resend,
    ) -> Result<Option<Item>, Unsent> {
        let item = item_to_sdk(put.item);
        let (result, attempts) = self
            .retry
            .run_if(
                |e| match resend {
                    Resend::Transient => is_transient(e),
                    Resend::OnlyUnapplied => is_throttled(e),
                },
                || {
                    self.client
                        .put_item()
                        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
                        .return_values(sdk::ReturnValue::AllOld)
                        .table_name(&put.table)
                        .set_item(Some(item.clone()))
                        .send()
                },
            )
            .await;
        match result {
            Ok(output) => {
                self.consumed.write(output.consumed_capacity.as_ref());
                match output.attributes {
                    None => Ok(None),
                    Some(old) => item_from_sdk(old).map(Some).ok_or_else(|| Unsent {
                        // Applied: only its answer is beyond understanding.
                        maybe_applied: true,
                        error: HostError::unknown_type("PutItem"),
                    }),
                }
            }
            Err(e) => Err(Unsent {
                maybe_applied: is_transient(&e) && !is_throttled(&e),
                error: HostError::dynamo("PutItem", e, attempts),
            }),
        }
    }

    /// A DeleteItem, conditional when the plan says so.
    pub async fn delete(&self, delete: Delete) -> Result<Written, HostError> {
        let (expression, names, values) = condition_parts(delete.condition);
        let key = item_to_sdk(delete.key);
        let (result, attempts) = self
            .retry
            .run(|| {
                self.client
                    .delete_item()
                    .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
                    .table_name(&delete.table)
                    .set_key(Some(key.clone()))
                    .set_condition_expression(expression.clone())
                    .set_expression_attribute_names(names.clone())
                    .set_expression_attribute_values(values.clone())
                    .send()
            })
            .await;
        let output = result.map(|o| o.consumed_capacity);
        self.conditional("DeleteItem", output, attempts, |e| {
            e.is_conditional_check_failed_exception()
        })
    }

    /// One TransactWriteItems. `token` makes resends idempotent on DynamoDB
    /// (a resend within 10 minutes returns the first outcome).
    pub async fn transact(
        &self,
        transaction: Transaction,
        token: &str,
    ) -> Result<Written, HostError> {
        let items = transaction
            .actions
            .into_iter()
            .map(transact_item)
            .collect::<Result<Vec<_>, _>>()?;
        let (result, attempts) = self
            .retry
            .run_if(transact_transient, || {
                self.client
                    .transact_write_items()
                    .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
                    .set_transact_items(Some(items.clone()))
                    .client_request_token(token)
                    .send()
            })
            .await;
        match result {
            Ok(output) => {
                for c in output.consumed_capacity() {
                    self.consumed.write(Some(c));
                }
                Ok(Written::Yes)
            }
            Err(e)
                if cancel_reasons(&e)
                    .iter()
                    .any(|r| r == "ConditionalCheckFailed") =>
            {
                Ok(Written::ConditionFailed)
            }
            Err(e) => Err(HostError::dynamo("TransactWriteItems", e, attempts)),
        }
    }
}

fn transact_item(action: TransactAction) -> Result<sdk::TransactWriteItem, HostError> {
    let invalid = |e: aws_sdk_dynamodb::error::BuildError| HostError::Internal(e.to_string());
    Ok(match action {
        TransactAction::Put(put) => {
            let (expression, names, values) = condition_parts(put.condition);
            sdk::TransactWriteItem::builder()
                .put(
                    sdk::Put::builder()
                        .table_name(put.table)
                        .set_item(Some(item_to_sdk(put.item)))
                        .set_condition_expression(expression)
                        .set_expression_attribute_names(names)
                        .set_expression_attribute_values(values)
                        .build()
                        .map_err(invalid)?,
                )
                .build()
        }
        TransactAction::Delete(delete) => {
            let (expression, names, values) = condition_parts(delete.condition);
            sdk::TransactWriteItem::builder()
                .delete(
                    sdk::Delete::builder()
                        .table_name(delete.table)
                        .set_key(Some(item_to_sdk(delete.key)))
                        .set_condition_expression(expression)
                        .set_expression_attribute_names(names)
                        .set_expression_attribute_values(values)
                        .build()
                        .map_err(invalid)?,
                )
                .build()
        }
    })
}

/// The cancellation reason codes of a cancelled transaction (empty otherwise).
fn cancel_reasons(error: &SdkError<TransactWriteItemsError, HttpResponse>) -> Vec<String> {
    match error.as_service_error() {
        Some(TransactWriteItemsError::TransactionCanceledException(e)) => e
            .cancellation_reasons()
            .iter()
            .map(|r| r.code().unwrap_or("None").to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// A transaction cancelled only by conflicts or throttling may be resent.
fn transact_transient(error: &SdkError<TransactWriteItemsError, HttpResponse>) -> bool {
    if is_transient(error) {
        return true;
    }
    let reasons = cancel_reasons(error);
    !reasons.is_empty()
        && reasons.iter().all(|r| {
            matches!(
                r.as_str(),
                "None"
                    | "TransactionConflict"
                    | "ThrottlingError"
                    | "ProvisionedThroughputExceeded"
            )
        })
        && reasons.iter().any(|r| r != "None")
}
