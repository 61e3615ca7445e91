//! Peak memory of a whole-item `get`: a 128 MiB item read back must peak at
//! about twice the item (the raw payload and the decoded item), not hold
//! every chunk and the responses in flight beside them. Alone in its test
//! binary, so no other test's allocations count; Linux only (`VmHWM`, reset
//! through `/proc/self/clear_refs`). The item is stored with `put_reader`
//! from a file, in bounded memory, so the RSS before the read holds no
//! freed copy of it. Prints the figures:
//!
//! ```text
//! cargo test -p dynaslice-host --test get_memory -- --nocapture
//! ```
//!
//! With the embedded server (dynoxide) the server runs in this process
//! too: its own memory for the requests in flight counts against the read.

mod common;
use dynaslice_testing::memory;

use dynaslice_core::AttributeValue;
use dynaslice_host::{GetOptions, LayoutKind};

/// The item's one large attribute: beyond the default 64 MiB limit, which
/// both the put and the get raise.
const ITEM_BYTES: usize = 128 << 20;
/// The bound asserted on the read's peak above the RSS before it, as a
/// multiple of the item: the payload and the item (2x), and room for what
/// does not grow with the item (~15-20 MB measured: the requests in flight,
/// on both sides with the embedded store, and the allocator's slack).
const MAX_PEAK_PER_ITEM: f64 = 2.3;

#[tokio::test(flavor = "multi_thread")]
async fn a_128_mib_item_reads_back_at_about_twice_its_size() {
    let client = common::client();
    let table = common::fresh_table(&client, "get-memory", LayoutKind::ChunkTable).await;
    let key = common::key(LayoutKind::ChunkTable, "big");
    let dir = common::fresh_temp_dir("get-memory");
    let digest = common::put_noise_from_file(&client, &table, &key, &dir, 27, ITEM_BYTES).await;

    let get_options = GetOptions {
        max_item_bytes: 2 * ITEM_BYTES,
        ..GetOptions::default()
    };
    let baseline = memory::rss();
    assert!(memory::reset_peak(), "the peak can be reset");
    let fetched = dynaslice_host::get(&client, &table, &key, &get_options, &())
        .await
        .expect("get")
        .expect("found");
    let peak = memory::peak();
    let above = peak.saturating_sub(baseline);
    let ratio = above as f64 / ITEM_BYTES as f64;
    println!(
        "get of a {} MiB item: RSS before {:.1} MB, peak {:.1} MB, peak above baseline {:.1} MB = {ratio:.2}x the item, {:.1} MB above 2x (MB = 10^6 bytes)",
        ITEM_BYTES >> 20,
        baseline as f64 / 1e6,
        peak as f64 / 1e6,
        above as f64 / 1e6,
        (above as f64 - 2.0 * ITEM_BYTES as f64) / 1e6
    );
    let Some(AttributeValue::B(data)) = fetched.item.get("data") else {
        panic!("the item read back has no binary data");
    };
    assert_eq!(data.len(), ITEM_BYTES);
    assert!(
        dynaslice_core::digest::digest(data) == digest,
        "the item read back differs"
    );
    assert!(fetched.chunks_read > 200, "{} chunks", fetched.chunks_read);
    assert!(
        ratio < MAX_PEAK_PER_ITEM,
        "the read held {above} bytes above its baseline, {ratio:.2}x the item, limit {MAX_PEAK_PER_ITEM}x"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
