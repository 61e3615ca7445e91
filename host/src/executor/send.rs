//! Sends one request of core's with the SDK and reports what came back as
//! facts (an answer, or a failure's status and code), with the capacity it
//! consumed and the store's `Date`. No retries here: the machine that asked
//! decides whether to send again (the SDK's own retries are off, see
//! `client.rs`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::interceptors::BeforeDeserializationInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types as sdk;
use dynaslice_core::Item;
use dynaslice_core::plan::{
    BatchGet, BatchWrite, Condition, Delete, Get, Put, Query, Scan, TransactAction, Transaction,
    Update, WriteRequest,
};
use dynaslice_core::protocol::{Answer, Failure, FailureKind, Request, Response, StoreDate};

use crate::sdk_value::{SdkItem, item_from_sdk, item_to_sdk, to_sdk};

/// Milliseconds since the Unix epoch by this machine's clock.
pub(crate) fn local_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Sends `request` once and reports what came back: DynamoDB's through
/// `client`, S3's through `s3`.
pub(crate) async fn send(
    client: &Client,
    s3: Option<&aws_sdk_s3::Client>,
    request: Request,
) -> Response {
    let date = DateSeen::default();
    let result = match request {
        Request::Object(object) => match s3 {
            Some(s3) => crate::objects::send_object(s3, object)
                .await
                .map(|answer| (answer, 0.0)),
            None => Err(Failure {
                kind: FailureKind::NotSent,
                code: "NoS3Client".into(),
                message: "no S3 store is configured for this table".into(),
                reasons: Vec::new(),
            }),
        },
        Request::Get(get) => get_item(client, get, &date).await,
        Request::Put(put) => put_item(client, put, &date).await,
        Request::Delete(delete) => delete_item(client, delete, &date).await,
        Request::Update(update) => update_item(client, update, &date).await,
        Request::Transact { transaction, token } => {
            transact(client, transaction, token, &date).await
        }
        Request::BatchWrite(batch) => batch_write(client, batch, &date).await,
        Request::BatchGet(get) => batch_get(client, get, &date).await,
        Request::Scan(scan) => scan_page(client, scan, &date).await,
        Request::Query(query) => query_page(client, query, &date).await,
    };
    let (result, consumed) = match result {
        Ok((answer, consumed)) => (Ok(answer), consumed),
        Err(failure) => (Err(failure), 0.0),
    };
    Response {
        result,
        consumed,
        date: date.get(),
        local_ms: local_ms(),
    }
}

type Sent = Result<(Answer, f64), Failure>;

/// Capacity units of the answer's `ConsumedCapacity` entries.
fn units<'a>(capacity: impl IntoIterator<Item = &'a sdk::ConsumedCapacity>) -> f64 {
    capacity.into_iter().filter_map(|c| c.capacity_units).sum()
}

/// The facts of a failed call: the service's status and code, or which way
/// the transport failed.
pub(crate) fn failure_of<E>(error: &SdkError<E, HttpResponse>) -> Failure
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    if let SdkError::ServiceError(service) = error {
        let e = service.err();
        return Failure::answered(
            service.raw().status().as_u16(),
            e.code().unwrap_or("UnknownError"),
            e.message().unwrap_or("no message"),
        );
    }
    let (code, message) = crate::error::describe(error);
    let kind = match error {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            FailureKind::NoAnswer
        }
        _ => FailureKind::NotSent,
    };
    Failure {
        kind,
        code,
        message,
        reasons: Vec::new(),
    }
}

/// An answer with an attribute type this build's SDK conversion does not
/// know: the request was carried out, its answer cannot be read.
fn unreadable(operation: &str) -> Failure {
    Failure::answered(
        200,
        "UnknownAttributeType",
        format!("{operation} returned an attribute type this build does not know"),
    )
}

fn read_item(item: Option<SdkItem>, operation: &str) -> Result<Option<Item>, Failure> {
    item.map(|i| item_from_sdk(i).ok_or_else(|| unreadable(operation)))
        .transpose()
}

type ConditionParts = (
    Option<String>,
    Option<HashMap<String, String>>,
    Option<SdkItem>,
);

fn condition_parts(condition: Option<Condition>) -> ConditionParts {
    let Some(c) = condition else {
        return (None, None, None);
    };
    let (names, values) = placeholders(c.names, c.values);
    (Some(c.expression), names, values)
}

/// An expression's `ExpressionAttributeNames` and `ExpressionAttributeValues`
/// (each `None` when empty, as DynamoDB refuses empty maps).
fn placeholders(
    names: BTreeMap<String, String>,
    values: Item,
) -> (Option<HashMap<String, String>>, Option<SdkItem>) {
    let names = (!names.is_empty()).then(|| names.into_iter().collect());
    let values =
        (!values.is_empty()).then(|| values.into_iter().map(|(k, v)| (k, to_sdk(v))).collect());
    (names, values)
}

/// A projection's `#p0, #p1, …` and its names (none for every attribute).
fn projection(attributes: Vec<String>) -> (Option<String>, Option<HashMap<String, String>>) {
    if attributes.is_empty() {
        return (None, None);
    }
    let expression = (0..attributes.len())
        .map(|i| format!("#p{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let names = attributes
        .into_iter()
        .enumerate()
        .map(|(i, name)| (format!("#p{i}"), name))
        .collect();
    (Some(expression), Some(names))
}

async fn get_item(client: &Client, get: Get, date: &DateSeen) -> Sent {
    let output = client
        .get_item()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .table_name(get.table)
        .set_key(Some(item_to_sdk(get.key)))
        .consistent_read(get.consistent)
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity.as_ref());
    Ok((Answer::Item(read_item(output.item, "GetItem")?), consumed))
}

async fn put_item(client: &Client, put: Put, date: &DateSeen) -> Sent {
    let (expression, names, values) = condition_parts(put.condition);
    let mut request = client
        .put_item()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .table_name(put.table)
        .set_item(Some(item_to_sdk(put.item)))
        .set_condition_expression(expression)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values);
    if put.return_old {
        request = request.return_values(sdk::ReturnValue::AllOld);
    }
    let output = request
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity.as_ref());
    let old = read_item(output.attributes, "PutItem")?;
    Ok((Answer::Applied { old }, consumed))
}

async fn update_item(client: &Client, update: Update, date: &DateSeen) -> Sent {
    let (names, values) = placeholders(update.names, update.values);
    let output = client
        .update_item()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .table_name(update.table)
        .set_key(Some(item_to_sdk(update.key)))
        .update_expression(update.expression)
        .set_condition_expression(update.condition)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity.as_ref());
    Ok((Answer::Applied { old: None }, consumed))
}

async fn delete_item(client: &Client, delete: Delete, date: &DateSeen) -> Sent {
    let (expression, names, values) = condition_parts(delete.condition);
    let output = client
        .delete_item()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .table_name(delete.table)
        .set_key(Some(item_to_sdk(delete.key)))
        .set_condition_expression(expression)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity.as_ref());
    Ok((Answer::Applied { old: None }, consumed))
}

async fn transact(
    client: &Client,
    transaction: Transaction,
    token: String,
    date: &DateSeen,
) -> Sent {
    let items = transaction
        .actions
        .into_iter()
        .map(transact_item)
        .collect::<Result<Vec<_>, _>>()?;
    let output = client
        .transact_write_items()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .set_transact_items(Some(items))
        .client_request_token(token)
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| {
            let mut failure = failure_of(&e);
            failure.reasons = cancel_reasons(&e);
            failure
        })?;
    Ok((
        Answer::Applied { old: None },
        units(output.consumed_capacity()),
    ))
}

/// The facts of a request the SDK would not build (a bug of ours).
fn not_built(error: aws_sdk_dynamodb::error::BuildError) -> Failure {
    Failure {
        kind: FailureKind::NotSent,
        code: "ConstructionFailure".into(),
        message: error.to_string(),
        reasons: Vec::new(),
    }
}

fn transact_item(action: TransactAction) -> Result<sdk::TransactWriteItem, Failure> {
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
                        .map_err(not_built)?,
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
                        .map_err(not_built)?,
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

async fn batch_write(client: &Client, batch: BatchWrite, date: &DateSeen) -> Sent {
    let mut items: HashMap<String, Vec<sdk::WriteRequest>> = HashMap::new();
    for (table, request) in batch.requests {
        items
            .entry(table)
            .or_default()
            .push(write_request(request)?);
    }
    let output = client
        .batch_write_item()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .set_request_items(Some(items))
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity());
    let mut unprocessed = Vec::new();
    for (table, requests) in output.unprocessed_items.unwrap_or_default() {
        for request in requests {
            let back = match (request.put_request, request.delete_request) {
                (Some(put), _) => WriteRequest::Put(
                    item_from_sdk(put.item).ok_or_else(|| unreadable("BatchWriteItem"))?,
                ),
                (None, Some(delete)) => WriteRequest::Delete(
                    item_from_sdk(delete.key).ok_or_else(|| unreadable("BatchWriteItem"))?,
                ),
                (None, None) => continue,
            };
            unprocessed.push((table.clone(), back));
        }
    }
    Ok((Answer::BatchWrite { unprocessed }, consumed))
}

fn write_request(request: WriteRequest) -> Result<sdk::WriteRequest, Failure> {
    Ok(match request {
        WriteRequest::Put(item) => sdk::WriteRequest::builder()
            .put_request(
                sdk::PutRequest::builder()
                    .set_item(Some(item_to_sdk(item)))
                    .build()
                    .map_err(not_built)?,
            )
            .build(),
        WriteRequest::Delete(key) => sdk::WriteRequest::builder()
            .delete_request(
                sdk::DeleteRequest::builder()
                    .set_key(Some(item_to_sdk(key)))
                    .build()
                    .map_err(not_built)?,
            )
            .build(),
    })
}

async fn batch_get(client: &Client, get: BatchGet, date: &DateSeen) -> Sent {
    let (expression, names) = projection(get.attributes);
    let keys = get.keys.into_iter().map(item_to_sdk).collect::<Vec<_>>();
    let request = sdk::KeysAndAttributes::builder()
        .set_keys(Some(keys))
        .consistent_read(get.consistent)
        .set_projection_expression(expression)
        .set_expression_attribute_names(names)
        .build()
        .map_err(not_built)?;
    let output = client
        .batch_get_item()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .set_request_items(Some(HashMap::from([(get.table, request)])))
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity());
    let mut items = Vec::new();
    for (_, found) in output.responses.unwrap_or_default() {
        for item in found {
            items.push(item_from_sdk(item).ok_or_else(|| unreadable("BatchGetItem"))?);
        }
    }
    let mut unprocessed = Vec::new();
    for (_, left) in output.unprocessed_keys.unwrap_or_default() {
        for key in left.keys {
            unprocessed.push(item_from_sdk(key).ok_or_else(|| unreadable("BatchGetItem"))?);
        }
    }
    Ok((Answer::BatchGet { items, unprocessed }, consumed))
}

/// A parallel Scan's `Segment` (of `(segment, total)`).
fn segment_number(segment: Option<(u32, u32)>) -> Option<i32> {
    segment.map(|(s, _)| i32::try_from(s).unwrap_or(i32::MAX))
}

/// A parallel Scan's `TotalSegments`.
fn total_segments(segment: Option<(u32, u32)>) -> Option<i32> {
    segment.map(|(_, t)| i32::try_from(t).unwrap_or(i32::MAX))
}

async fn scan_page(client: &Client, scan: Scan, date: &DateSeen) -> Sent {
    let (expression, names) = projection(scan.attributes);
    let output = client
        .scan()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .table_name(scan.table)
        .set_index_name(scan.index)
        .consistent_read(scan.consistent)
        .set_limit(scan.limit.map(|l| i32::try_from(l).unwrap_or(i32::MAX)))
        .set_exclusive_start_key(scan.start.map(item_to_sdk))
        .set_segment(segment_number(scan.segment))
        .set_total_segments(total_segments(scan.segment))
        .set_projection_expression(expression)
        .set_expression_attribute_names(names)
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity.as_ref());
    page(output.items, output.last_evaluated_key, consumed, "Scan")
}

/// A Scan or Query page's answer.
fn page(
    items: Option<Vec<SdkItem>>,
    next: Option<SdkItem>,
    consumed: f64,
    operation: &str,
) -> Sent {
    let items = items
        .unwrap_or_default()
        .into_iter()
        .map(|i| item_from_sdk(i).ok_or_else(|| unreadable(operation)))
        .collect::<Result<Vec<_>, _>>()?;
    let next = next
        .filter(|key| !key.is_empty())
        .map(|key| item_from_sdk(key).ok_or_else(|| unreadable(operation)))
        .transpose()?;
    Ok((Answer::Scan { items, next }, consumed))
}

/// One page of a caller's Query, or of a Scan when it has no key condition.
async fn query_page(client: &Client, query: Query, date: &DateSeen) -> Sent {
    let (names, values) = placeholders(query.names, query.values);
    let limit = query.limit.map(|l| i32::try_from(l).unwrap_or(i32::MAX));
    let start = query.start.map(item_to_sdk);
    let Some(key_condition) = query.key_condition else {
        let output = client
            .scan()
            .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
            .table_name(query.table)
            .set_index_name(query.index)
            .set_filter_expression(query.filter)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .consistent_read(query.consistent)
            .set_limit(limit)
            .set_exclusive_start_key(start)
            .set_segment(segment_number(query.segment))
            .set_total_segments(total_segments(query.segment))
            .customize()
            .interceptor(date.clone())
            .send()
            .await
            .map_err(|e| failure_of(&e))?;
        let consumed = units(output.consumed_capacity.as_ref());
        return page(output.items, output.last_evaluated_key, consumed, "Scan");
    };
    let output = client
        .query()
        .return_consumed_capacity(sdk::ReturnConsumedCapacity::Total)
        .table_name(query.table)
        .set_index_name(query.index)
        .key_condition_expression(key_condition)
        .set_filter_expression(query.filter)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .consistent_read(query.consistent)
        .scan_index_forward(query.forward)
        .set_limit(limit)
        .set_exclusive_start_key(start)
        .customize()
        .interceptor(date.clone())
        .send()
        .await
        .map_err(|e| failure_of(&e))?;
    let consumed = units(output.consumed_capacity.as_ref());
    page(output.items, output.last_evaluated_key, consumed, "Query")
}

/// The `Date` header of a request's answer, read as the answer arrives (the
/// store's clock, which version ids are stamped and judged by).
#[derive(Clone, Debug, Default)]
pub(crate) struct DateSeen(Arc<Mutex<Option<StoreDate>>>);

impl DateSeen {
    pub(crate) fn get(&self) -> Option<StoreDate> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Intercept for DateSeen {
    fn name(&self) -> &'static str {
        "dynaslice::DateSeen"
    }

    fn read_after_transmit(
        &self,
        context: &BeforeDeserializationInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        let seen = context
            .response()
            .headers()
            .get("date")
            .and_then(|date| httpdate::parse_http_date(date).ok())
            .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
            .map(|d| StoreDate {
                unix_ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
            });
        if seen.is_some() {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) = seen;
        }
        Ok(())
    }
}
