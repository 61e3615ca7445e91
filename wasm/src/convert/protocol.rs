//! The protocol machines' side of the boundary (their options are in
//! `options`): each step as an object the driver acts on (a request as the
//! exact input `@aws-sdk/client-dynamodb` takes), each answer back into
//! core's terms, and each outcome as the driver's result.

use dynaslice_core::Code;
use dynaslice_core::Item;
use dynaslice_core::manifest::Manifest;
use dynaslice_core::plan::{BatchGet, Query, Scan, WriteRequest};
use dynaslice_core::protocol::{
    Answer, Consumed, DeleteOutcome, Failure as RequestFailure, FailureKind, GcReport,
    ObjectGcReport, Operation, Progress, PutOutcome, QueryOutcome, ReadOutcome, Request, Response,
    RetryPolicy, Send, StoreDate, UpdateOutcome,
};
use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use super::{dynamodb_item, get, requests, set, stream};
use crate::error::Failure;

/// A step that sends: `{ kind: "send", id, operation, input, delayMs,
/// resendable }`, `input` the SDK command's input.
/// `service` is `"s3"` for an S3 request (`input` then the input of an
/// `@aws-sdk/client-s3` command), `"dynamodb"` otherwise.
pub fn send_step(send: &Send) -> JsValue {
    let step = Object::new();
    set(&step, "kind", &"send".into());
    set(&step, "id", &(send.id.0 as f64).into());
    set(&step, "operation", &send.request.operation().name().into());
    let service = match &send.request {
        Request::Object(_) => "s3",
        _ => "dynamodb",
    };
    set(&step, "service", &service.into());
    set(&step, "input", &request_input(&send.request));
    set(
        &step,
        "delayMs",
        &(send.delay.as_secs_f64() * 1000.0).into(),
    );
    set(&step, "resendable", &send.resendable.into());
    step.into()
}

/// A request as the input of its SDK command.
fn request_input(request: &Request) -> JsValue {
    match request {
        Request::Get(g) => requests::get_item(g),
        Request::Put(p) => requests::put(p),
        Request::Delete(d) => requests::delete(d),
        Request::Update(u) => requests::update(u),
        Request::Transact { transaction, token } => {
            let input = requests::transaction(&transaction.actions);
            set(
                input.unchecked_ref(),
                "ClientRequestToken",
                &token.as_str().into(),
            );
            input
        }
        Request::BatchWrite(batch) => requests::batch_writes(core::slice::from_ref(batch)).get(0),
        Request::BatchGet(get) => batch_get(get),
        Request::Scan(scan) => scan_input(scan),
        Request::Query(query) => query_input(query),
        Request::Object(object) => super::objects::input(object),
    }
}

/// A projection's `ProjectionExpression` and names on `object`.
fn project(object: &Object, attributes: &[String]) {
    if attributes.is_empty() {
        return;
    }
    let names = Object::new();
    let mut expression = String::new();
    for (i, name) in attributes.iter().enumerate() {
        let placeholder = format!("#p{i}");
        if i > 0 {
            expression.push_str(", ");
        }
        expression.push_str(&placeholder);
        set(&names, &placeholder, &name.as_str().into());
    }
    set(object, "ProjectionExpression", &expression.as_str().into());
    set(object, "ExpressionAttributeNames", &names);
}

fn batch_get(get: &BatchGet) -> JsValue {
    let keys: Array = get.keys.iter().map(dynamodb_item).collect();
    let request = Object::new();
    set(&request, "Keys", &keys);
    set(&request, "ConsistentRead", &get.consistent.into());
    project(&request, &get.attributes);
    let tables = Object::new();
    set(&tables, &get.table, &request);
    let input = Object::new();
    set(&input, "RequestItems", &tables);
    input.into()
}

fn scan_input(scan: &Scan) -> JsValue {
    let input = Object::new();
    set(&input, "TableName", &scan.table.as_str().into());
    if let Some(index) = &scan.index {
        set(&input, "IndexName", &index.as_str().into());
    }
    set(&input, "ConsistentRead", &scan.consistent.into());
    if let Some(start) = &scan.start {
        set(&input, "ExclusiveStartKey", &dynamodb_item(start));
    }
    if let Some(limit) = scan.limit {
        set(&input, "Limit", &limit.into());
    }
    if let Some((segment, total)) = scan.segment {
        set(&input, "Segment", &segment.into());
        set(&input, "TotalSegments", &total.into());
    }
    project(&input, &scan.attributes);
    input.into()
}

/// A query's page as `QueryCommand` (or `ScanCommand`) input.
fn query_input(query: &Query) -> JsValue {
    let input = Object::new();
    set(&input, "TableName", &query.table.as_str().into());
    let text = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            set(&input, name, &value.as_str().into());
        }
    };
    text("IndexName", &query.index);
    text("KeyConditionExpression", &query.key_condition);
    text("FilterExpression", &query.filter);
    if !query.names.is_empty() {
        let names = Object::new();
        for (k, v) in &query.names {
            set(&names, k, &v.as_str().into());
        }
        set(&input, "ExpressionAttributeNames", &names);
    }
    if !query.values.is_empty() {
        set(
            &input,
            "ExpressionAttributeValues",
            &dynamodb_item(&query.values),
        );
    }
    set(&input, "ConsistentRead", &query.consistent.into());
    if query.key_condition.is_some() {
        set(&input, "ScanIndexForward", &query.forward.into());
    }
    if let Some(limit) = query.limit {
        set(&input, "Limit", &limit.into());
    }
    if let Some(start) = &query.start {
        set(&input, "ExclusiveStartKey", &dynamodb_item(start));
    }
    if let Some((segment, total)) = query.segment {
        set(&input, "Segment", &segment.into());
        set(&input, "TotalSegments", &total.into());
    }
    input.into()
}

/// An optional item stream (`undefined`: none).
fn optional_item(value: &JsValue) -> Result<Option<Item>, Failure> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let bytes: &Uint8Array = value
        .dyn_ref()
        .ok_or_else(|| Failure::new(Code::InputInvalid, "an answer's item must be a stream"))?;
    Ok(Some(stream::item(&bytes.to_vec())?))
}

/// `{ bytes, ends }`: items written back to back.
fn items(value: &JsValue) -> Result<Vec<Item>, Failure> {
    if value.is_undefined() {
        return Ok(Vec::new());
    }
    let bytes: Uint8Array = get(value, "bytes")
        .dyn_into()
        .map_err(|_| invalid_answer())?;
    let ends: js_sys::Uint32Array = get(value, "ends")
        .dyn_into()
        .map_err(|_| invalid_answer())?;
    stream::items(&bytes.to_vec(), &ends.to_vec())
}

fn invalid_answer() -> Failure {
    Failure::new(
        Code::InputInvalid,
        "an answer is not in the shape the driver gives",
    )
}

/// What the driver feeds back for a request of `operation`: `{ failure }`
/// (`{ status, code, message, reasons }`, no `status` when no answer
/// came), or the answer's parts as item streams (`item`, `old`, `items`,
/// `unprocessed`, `next`); with `consumed`, `dateMs` and `localMs`.
pub fn response(operation: Operation, value: &JsValue) -> Result<Response, Failure> {
    let number = |name: &str| get(value, name).as_f64();
    let failure = get(value, "failure");
    let result = if failure.is_undefined() {
        Ok(match operation {
            Operation::GetItem => Answer::Item(optional_item(&get(value, "item"))?),
            Operation::PutItem
            | Operation::DeleteItem
            | Operation::UpdateItem
            | Operation::TransactWriteItems => Answer::Applied {
                old: optional_item(&get(value, "old"))?,
            },
            Operation::BatchWriteItem => Answer::BatchWrite {
                unprocessed: unprocessed_writes(&get(value, "unprocessed"))?,
            },
            Operation::BatchGetItem => Answer::BatchGet {
                items: items(&get(value, "items"))?,
                unprocessed: items(&get(value, "unprocessed"))?,
            },
            Operation::Scan | Operation::Query => Answer::Scan {
                items: items(&get(value, "items"))?,
                next: optional_item(&get(value, "next"))?,
            },
            s3 => Answer::Object(super::objects::answer(s3, value, date_ms(value))?),
        })
    } else {
        Err(request_failure(&failure))
    };
    Ok(Response {
        result,
        consumed: number("consumed").unwrap_or(0.0),
        date: date_ms(value).map(|unix_ms| StoreDate { unix_ms }),
        local_ms: number("localMs").unwrap_or_else(js_sys::Date::now).max(0.0) as u64,
    })
}

/// The answer's `Date` (`dateMs`), in Unix milliseconds.
fn date_ms(value: &JsValue) -> Option<u64> {
    get(value, "dateMs")
        .as_f64()
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| ms as u64)
}

/// `{ bytes, ends, tables, deletes }`: each request's item (or key), its
/// table, and whether it deletes.
fn unprocessed_writes(value: &JsValue) -> Result<Vec<(String, WriteRequest)>, Failure> {
    if value.is_undefined() {
        return Ok(Vec::new());
    }
    let found = items(value)?;
    let tables: Array = get(value, "tables")
        .dyn_into()
        .map_err(|_| invalid_answer())?;
    let deletes: Array = get(value, "deletes")
        .dyn_into()
        .map_err(|_| invalid_answer())?;
    found
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let table = tables
                .get(i as u32)
                .as_string()
                .ok_or_else(invalid_answer)?;
            let request = match deletes.get(i as u32).as_bool() {
                Some(true) => WriteRequest::Delete(item),
                _ => WriteRequest::Put(item),
            };
            Ok((table, request))
        })
        .collect()
}

fn request_failure(value: &JsValue) -> RequestFailure {
    let text = |name: &str| get(value, name).as_string().unwrap_or_default();
    let kind = match get(value, "status").as_f64() {
        Some(status) => FailureKind::Answered {
            status: status.clamp(0.0, 999.0) as u16,
        },
        None => FailureKind::NoAnswer,
    };
    let reasons = get(value, "reasons");
    let reasons = match reasons.dyn_ref::<Array>() {
        Some(list) => list
            .iter()
            .map(|r| r.as_string().unwrap_or_else(|| "None".into()))
            .collect(),
        None => Vec::new(),
    };
    RequestFailure {
        kind,
        code: text("code"),
        message: text("message"),
        reasons,
    }
}

/// `{ readUnits, writeUnits }`.
pub fn consumed(consumed: Consumed) -> JsValue {
    let object = Object::new();
    set(&object, "readUnits", &consumed.read.into());
    set(&object, "writeUnits", &consumed.write.into());
    object.into()
}

/// `{ bytesDone, bytesTotal, chunksDone, chunksTotal }`.
pub fn progress(progress: Progress) -> JsValue {
    let object = Object::new();
    set(&object, "bytesDone", &(progress.bytes_done as f64).into());
    set(&object, "bytesTotal", &(progress.bytes_total as f64).into());
    set(&object, "chunksDone", &progress.chunks_done.into());
    set(&object, "chunksTotal", &progress.chunks_total.into());
    object.into()
}

/// The manifest's figures, as `split` reports them.
pub fn manifest(m: &Manifest) -> JsValue {
    let manifest = Object::new();
    set(&manifest, "version", &m.version.to_text().into());
    set(&manifest, "codec", &m.codec.name().into());
    set(&manifest, "chunkCount", &(m.total_chunks() as f64).into());
    set(
        &manifest,
        "storedBytes",
        &(m.total_stored_len() as f64).into(),
    );
    set(&manifest, "rawBytes", &(m.total_raw_len() as f64).into());
    set(&manifest, "inline", &m.inline.is_some().into());
    set(
        &manifest,
        "spilled",
        &m.all_spilled()
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect::<Array>(),
    );
    set(&manifest, "groups", &(m.groups.len() as u32).into());
    if let Some(o) = &m.object {
        let object = Object::new();
        set(&object, "bucket", &o.bucket.as_str().into());
        set(&object, "key", &o.key.as_str().into());
        set(&object, "etag", &o.etag.as_str().into());
        set(&manifest, "object", &object);
    }
    manifest.into()
}

/// A write's result.
pub fn put_outcome(outcome: &PutOutcome) -> JsValue {
    let result = Object::new();
    set(&result, "mode", &outcome.mode.name().into());
    if let Some(m) = &outcome.manifest {
        set(&result, "version", &m.version.to_text().into());
        set(&result, "manifest", &manifest(m));
    }
    set(&result, "replaced", &outcome.replaced_item.into());
    set(&result, "superseded", &outcome.superseded.into());
    set(
        &result,
        "bytesWritten",
        &(outcome.bytes_written as f64).into(),
    );
    set(
        &result,
        "payloadBytes",
        &(outcome.payload_bytes as f64).into(),
    );
    set(
        &result,
        "writeUnits",
        &(outcome.planned_write_units as f64).into(),
    );
    set(
        &result,
        "cleanupLeft",
        &(outcome.cleanup_left as f64).into(),
    );
    let units = Consumed {
        read: outcome.consumed_read_units,
        write: outcome.consumed_write_units,
    };
    set(&result, "consumed", &consumed(units));
    result.into()
}

/// A read's result: `{ item, version, bytes, chunksRead, parentReads,
/// consumed }`, the item as a value stream (undefined when none).
pub fn read_outcome(outcome: Option<&ReadOutcome>, parent_reads: u32, used: Consumed) -> JsValue {
    let result = Object::new();
    set(&result, "parentReads", &parent_reads.into());
    set(&result, "consumed", &consumed(used));
    let Some(outcome) = outcome else {
        set(&result, "chunksRead", &0.into());
        return result.into();
    };
    if let Some(item) = &outcome.item {
        set(&result, "item", &stream::to_js_stream(item));
    }
    if let Some(m) = &outcome.manifest {
        set(&result, "version", &m.version.to_text().into());
    }
    set(&result, "bytes", &(outcome.bytes as f64).into());
    set(&result, "chunksRead", &outcome.chunks_read.into());
    result.into()
}

/// An update's result: `{ path, reason, applied, writeUnits, reused, put,
/// consumed }` (`put`: the rewrite's write, as `putItem` returns it).
pub fn update_outcome(outcome: &UpdateOutcome) -> JsValue {
    use dynaslice_core::plan::UpdateSteps;
    let result = Object::new();
    set(&result, "path", &outcome.plan.path().into());
    if let UpdateSteps::Rewrite(why) = &outcome.plan.steps {
        set(&result, "reason", &why.to_string().into());
    }
    set(&result, "applied", &outcome.applied.into());
    set(
        &result,
        "writeUnits",
        &(outcome.plan.write_units as f64).into(),
    );
    let reused: Array = outcome
        .plan
        .reused()
        .iter()
        .map(|name| JsValue::from_str(name))
        .collect();
    set(&result, "reused", &reused);
    if let Some(put) = &outcome.put {
        set(&result, "put", &put_outcome(put));
    }
    set(&result, "consumed", &consumed(outcome.consumed));
    result.into()
}

/// A query's result: `{ items, virtualItems, chunksSkipped, vanished,
/// pages, consumed }`.
pub fn query_outcome(outcome: &QueryOutcome) -> JsValue {
    let result = Object::new();
    for (name, count) in [
        ("items", outcome.items),
        ("virtualItems", outcome.virtual_items),
        ("chunksSkipped", outcome.chunks_skipped),
        ("vanished", outcome.vanished),
        ("damaged", outcome.damaged),
        ("pages", u64::from(outcome.pages)),
    ] {
        set(&result, name, &(count as f64).into());
    }
    set(&result, "consumed", &consumed(outcome.consumed));
    result.into()
}

/// A delete's result.
pub fn delete_outcome(outcome: &DeleteOutcome) -> JsValue {
    let result = Object::new();
    set(&result, "deleted", &outcome.existed.into());
    set(
        &result,
        "chunksDeleted",
        &(outcome.chunks_deleted as f64).into(),
    );
    set(&result, "chunksLeft", &(outcome.chunks_left as f64).into());
    set(&result, "objectDeleted", &outcome.object_deleted.into());
    set(&result, "consumed", &consumed(outcome.consumed));
    result.into()
}

/// `gc`'s report.
pub fn gc_report(report: &GcReport, dry_run: bool) -> JsValue {
    let result = Object::new();
    for (name, count) in [
        ("chunks", report.chunks),
        ("referenced", report.referenced),
        ("kept", report.kept),
        ("young", report.young),
        ("deleted", report.deleted),
        ("unreadable", report.unreadable),
    ] {
        set(&result, name, &(count as f64).into());
    }
    let parents: Array = report
        .unreadable_parents
        .iter()
        .map(|(key, reason)| {
            let parent = Object::new();
            set(&parent, "key", &dynamodb_item(key));
            set(&parent, "reason", &reason.as_str().into());
            JsValue::from(parent)
        })
        .collect();
    set(&result, "unreadableParents", &parents);
    set(&result, "dryRun", &dry_run.into());
    set(&result, "consumed", &consumed(report.consumed));
    result.into()
}

/// An object collection's report: its counts, `uploadsListed`, `dryRun`
/// and `consumed`.
pub fn object_gc_report(report: &ObjectGcReport, dry_run: bool) -> JsValue {
    let result = Object::new();
    for (name, count) in [
        ("objects", report.objects),
        ("referenced", report.referenced),
        ("kept", report.kept),
        ("young", report.young),
        ("deleted", report.deleted),
        ("unreadable", report.unreadable),
        ("foreign", report.foreign),
        ("uploadsAborted", report.uploads_aborted),
        ("uploadsYoung", report.uploads_young),
    ] {
        set(&result, name, &(count as f64).into());
    }
    set(&result, "uploadsListed", &report.uploads_listed.into());
    set(&result, "dryRun", &dry_run.into());
    set(&result, "consumed", &consumed(report.consumed));
    result.into()
}

/// The protocol's policy numbers the driver takes as its defaults.
pub fn policy() -> JsValue {
    use dynaslice_core::protocol::policy;
    let retry = RetryPolicy::default();
    let retry_object = Object::new();
    set(&retry_object, "maxAttempts", &retry.max_attempts.into());
    set(
        &retry_object,
        "maxThrottledAttempts",
        &retry.max_throttled_attempts.into(),
    );
    set(
        &retry_object,
        "baseDelayMs",
        &(retry.base_delay.as_secs_f64() * 1000.0).into(),
    );
    set(
        &retry_object,
        "maxDelayMs",
        &(retry.max_delay.as_secs_f64() * 1000.0).into(),
    );
    let object = Object::new();
    set(
        &object,
        "concurrency",
        &(policy::DEFAULT_CONCURRENCY as f64).into(),
    );
    set(&object, "retry", &retry_object);
    set(
        &object,
        "graceMs",
        &(policy::DEFAULT_GRACE.as_secs_f64() * 1000.0).into(),
    );
    set(&object, "readWindow", &(policy::READ_WINDOW as f64).into());
    set(
        &object,
        "initialWriteLimit",
        &(policy::INITIAL_WRITE_LIMIT as f64).into(),
    );
    set(
        &object,
        "initialReadLimit",
        &(policy::INITIAL_READ_LIMIT as f64).into(),
    );
    set(&object, "maxRereads", &policy::MAX_REREADS.into());
    set(&object, "maxReplans", &policy::MAX_REPLANS.into());
    object.into()
}
