//! A real split of a fuzz-made item, then fuzz-chosen tampering with what a
//! reader fetches: chunks dropped, duplicated, reordered, re-keyed; chunk
//! bytes or digests flipped, truncated, extended, digests recomputed (as
//! anyone who can write the table can); manifest fields removed or rewritten,
//! the inline frame damaged (`dynaslice_core_fuzz::reassemble` says how the
//! input is read). `reassemble` must return exactly the original item or an
//! error: never a panic, never another item. Untouched (chunks merely
//! reordered) it must succeed.
//!
//! With `DYNASLICE_FUZZ_SAVE=<file>` set, each case's tampered parent and
//! chunks are written to `<file>` as a value stream, the form the regression
//! test in `core/tests/fuzz_regressions.rs` replays.

#![no_main]

use dynaslice_core::encoding::encode_item;
use dynaslice_core::{AttributeValue, Item, ReassembleOptions, reassemble};
use dynaslice_core_fuzz::reassemble::{Case, Setup};
use libfuzzer_sys::fuzz_target;

/// True when `a` holds the same chunks as `b`, in any order.
fn same_chunks(a: &[Item], b: &[Item]) -> bool {
    let mut used = vec![false; b.len()];
    a.len() == b.len()
        && a.iter().all(|chunk| {
            let found = (0..b.len()).find(|&i| !used[i] && b[i] == *chunk);
            found.map(|i| used[i] = true).is_some()
        })
}

fuzz_target!(|case: Case| {
    let Some(setup) = case.setup() else {
        return;
    };
    let (item, split) = (&setup.item, &setup.split);
    let (parent, chunks) = setup.tampered(&case.tampering);
    let mut reassemble_options = ReassembleOptions::new(&setup.schema, &setup.layout);
    if let Some(max) = case.max_raw_bytes {
        reassemble_options.max_raw_bytes = max as usize;
    }
    if let Some(path) = std::env::var_os("DYNASLICE_FUZZ_SAVE") {
        std::fs::write(
            path,
            save(
                &case,
                &setup,
                &parent,
                &chunks,
                reassemble_options.max_raw_bytes,
            ),
        )
        .unwrap();
    }
    let result = reassemble(&parent, &chunks, &reassemble_options);

    if let Ok(back) = &result {
        assert!(back == item, "reassembled a different item");
    }
    let untouched = parent == split.parent && same_chunks(&chunks, &split.chunks);
    let within_limit = split
        .manifest
        .as_ref()
        .is_none_or(|m| m.raw_len <= reassemble_options.max_raw_bytes as u64);
    if untouched
        && within_limit
        && let Err(e) = result
    {
        panic!("untouched split failed to reassemble: {e}");
    }
});

/// The tampered case as a value stream: key types, layout, payload limit,
/// the original item, parent and chunks (the form
/// `core/tests/fuzz_regressions.rs` reads).
fn save(
    case: &Case,
    setup: &Setup,
    parent: &Item,
    chunks: &[Item],
    max_raw_bytes: usize,
) -> Vec<u8> {
    let text = |s: &str| AttributeValue::S(s.into());
    let mut saved = Item::new();
    saved.insert("item".into(), AttributeValue::M(setup.item.clone()));
    saved.insert("partition".into(), text(case.partition.key_type().as_str()));
    if let Some(sort) = &case.sort {
        saved.insert("sort".into(), text(sort.key_type().as_str()));
    }
    saved.insert("layout".into(), text(setup.layout.name()));
    saved.insert(
        "max_raw_bytes".into(),
        AttributeValue::N(max_raw_bytes.to_string()),
    );
    saved.insert("parent".into(), AttributeValue::M(parent.clone()));
    saved.insert(
        "chunks".into(),
        AttributeValue::L(chunks.iter().cloned().map(AttributeValue::M).collect()),
    );
    encode_item(&saved).to_vec()
}
