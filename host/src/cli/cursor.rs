//! Cursor files of runs over a whole table (`gc`, `verify`): where each
//! Scan segment got to, saved after every page, so a run stopped anywhere
//! (even killed) starts again there. A file names its table and what its
//! run scans (keys of one are no start in another), and may carry counts
//! of the run so far.

use std::path::Path;

use dynaslice_core::Item;
use dynaslice_host::HostError;
use dynaslice_host::json::{item_from_json, item_to_json};
use serde_json::{Map, Value, json};

use super::output::save;

/// Where a segment of a run got to: not started (`None`), at a key, or
/// done.
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    From(Option<Item>),
    Done,
}

/// A run's cursor: its segments' marks, and the counts it carries.
pub struct Cursor {
    pub marks: Vec<Mark>,
    pub counts: Map<String, Value>,
}

/// What a run over `table` scanning `scans` finds in `path` (a fresh
/// cursor of `segments` when there is no file). `wrong_scan` says how to
/// run to use a cursor of another scan.
pub fn read(
    path: &Path,
    table: &str,
    scans: &str,
    segments: u32,
    wrong_scan: &str,
) -> Result<Cursor, HostError> {
    let fresh = Cursor::fresh(segments);
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(fresh),
        Err(e) => return Err(HostError::io(path.display(), e)),
    };
    let bad = |why: &str| {
        HostError::Input(format!(
            "{} is not a cursor of {scans} of {table}: {why}",
            path.display()
        ))
    };
    let saved: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    if saved["table"].as_str() != Some(table) {
        return Err(bad("it is another table's"));
    }
    match saved["scans"].as_str() {
        Some(saved) if saved == scans => {}
        // verify's cursors scan items, gc's anchors or chunks.
        Some("items") => return Err(bad("it is a cursor of verify")),
        Some(_) if scans == "items" => return Err(bad("it is a cursor of gc")),
        _ => return Err(bad(wrong_scan)),
    }
    let marks = saved["segments"]
        .as_array()
        .ok_or_else(|| bad("no segments"))?;
    if marks.len() != segments as usize {
        return Err(bad(&format!(
            "it has {} segments; run with --segments {}",
            marks.len(),
            marks.len()
        )));
    }
    let marks = marks
        .iter()
        .map(|mark| match mark {
            Value::Null => Ok(Mark::From(None)),
            Value::String(s) if s == "done" => Ok(Mark::Done),
            key => Ok(Mark::From(Some(
                item_from_json(key).map_err(|e| bad(&e.to_string()))?,
            ))),
        })
        .collect::<Result<_, HostError>>()?;
    let counts = match &saved["counts"] {
        Value::Object(counts) if counts.values().all(Value::is_u64) => counts.clone(),
        Value::Null => Map::new(),
        _ => return Err(bad("its counts are not whole numbers")),
    };
    Ok(Cursor { marks, counts })
}

/// Saves `cursor` to `path` (written whole, then renamed).
pub fn write(path: &Path, table: &str, scans: &str, cursor: &Cursor) -> Result<(), HostError> {
    let segments: Vec<Value> = cursor
        .marks
        .iter()
        .map(|mark| match mark {
            Mark::From(None) => Value::Null,
            Mark::From(Some(key)) => item_to_json(key),
            Mark::Done => json!("done"),
        })
        .collect();
    let document = json!({
        "table": table, "scans": scans, "segments": segments, "counts": cursor.counts,
    });
    save(path, &document.to_string())
}

impl Cursor {
    /// No segment started yet.
    pub fn fresh(segments: u32) -> Self {
        Self {
            marks: vec![Mark::From(None); segments as usize],
            counts: Map::new(),
        }
    }

    /// The segments still to run, each from where it got to.
    pub fn starts(&self) -> Vec<(u32, Option<Item>)> {
        self.marks
            .iter()
            .enumerate()
            .filter_map(|(i, mark)| match mark {
                Mark::From(start) => Some((i as u32, start.clone())),
                Mark::Done => None,
            })
            .collect()
    }

    /// A count the cursor carries (0 when it has none).
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).and_then(Value::as_u64).unwrap_or(0)
    }
}
