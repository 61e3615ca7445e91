//! Whole-table scans, page by page (never assuming how many items a page
//! holds: servers differ), for `gc` and `ls`.

use std::collections::HashMap;

use dynaslice_core::Item;

use crate::error::HostError;
use crate::sdk_value::item_from_sdk;
use crate::send::Sender;

/// Scans `table` consistently, handing each page's items to `page`.
/// `projection` names the attributes to return (all when empty).
pub(crate) async fn scan_pages(
    sender: &Sender<'_>,
    table: &str,
    projection: &[&str],
    mut page: impl FnMut(Vec<Item>) -> Result<(), HostError>,
) -> Result<(), HostError> {
    let names: HashMap<String, String> = projection
        .iter()
        .enumerate()
        .map(|(i, name)| (format!("#p{i}"), (*name).to_string()))
        .collect();
    let expression = (0..projection.len())
        .map(|i| format!("#p{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut start = None;
    loop {
        let (result, attempts) = sender
            .retry
            .run(|| {
                let mut request = sender
                    .client
                    .scan()
                    .table_name(table)
                    .consistent_read(true)
                    .set_exclusive_start_key(start.clone());
                if !projection.is_empty() {
                    request = request
                        .projection_expression(&expression)
                        .set_expression_attribute_names(Some(names.clone()));
                }
                request.send()
            })
            .await;
        let output = result.map_err(|e| HostError::dynamo("Scan", e, attempts))?;
        let items = output
            .items
            .unwrap_or_default()
            .into_iter()
            .map(|i| {
                item_from_sdk(i).ok_or_else(|| {
                    HostError::Input("Scan returned an unknown attribute type".into())
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        page(items)?;
        match output.last_evaluated_key {
            Some(key) if !key.is_empty() => start = Some(key),
            _ => return Ok(()),
        }
    }
}
