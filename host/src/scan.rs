//! Whole-table scans, page by page (never assuming how many items a page
//! holds: servers differ), for `gc` and `ls`.

use std::collections::HashMap;

use dynaslice_core::Item;

use crate::error::HostError;
use crate::sdk_value::{SdkItem, item_from_sdk};
use crate::send::Sender;

/// Scans `table` consistently, handing each page's items to `page`.
/// `projection` names the attributes to return (all when empty).
pub(crate) async fn scan_pages(
    sender: &Sender<'_>,
    table: &str,
    projection: &[&str],
    mut page: impl FnMut(Vec<Item>) -> Result<(), HostError>,
) -> Result<(), HostError> {
    let mut start = None;
    loop {
        let (items, next) = scan_page(sender, table, projection, None, start).await?;
        page(items)?;
        match next {
            Some(key) => start = Some(key),
            None => return Ok(()),
        }
    }
}

/// One consistent Scan page of `table` from after `start` (at most `limit`
/// items evaluated when set): its items and the key to continue from.
pub(crate) async fn scan_page(
    sender: &Sender<'_>,
    table: &str,
    projection: &[&str],
    limit: Option<i32>,
    start: Option<SdkItem>,
) -> Result<(Vec<Item>, Option<SdkItem>), HostError> {
    let names: HashMap<String, String> = projection
        .iter()
        .enumerate()
        .map(|(i, name)| (format!("#p{i}"), (*name).to_string()))
        .collect();
    let expression = (0..projection.len())
        .map(|i| format!("#p{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let (result, attempts) = sender
        .retry
        .run(|| {
            let mut request = sender
                .client
                .scan()
                .table_name(table)
                .consistent_read(true)
                .set_limit(limit)
                .set_exclusive_start_key(start.clone());
            if !projection.is_empty() {
                request = request
                    .projection_expression(&expression)
                    .set_expression_attribute_names(Some(names.clone()));
            }
            request
                .customize()
                .interceptor(sender.clock.observer())
                .send()
        })
        .await;
    let output = result.map_err(|e| HostError::dynamo("Scan", e, attempts))?;
    let items = output
        .items
        .unwrap_or_default()
        .into_iter()
        .map(|i| item_from_sdk(i).ok_or_else(|| HostError::unknown_type("Scan")))
        .collect::<Result<Vec<_>, _>>()?;
    let next = output.last_evaluated_key.filter(|key| !key.is_empty());
    Ok((items, next))
}
