//! Peak memory of `get_file`: a 256 MiB stored file streamed to disk must
//! not be held whole. Alone in its test binary, so no other test's
//! allocations count; Linux only (`VmHWM`, reset through
//! `/proc/self/clear_refs`). Prints the figures:
//!
//! ```text
//! cargo test -p dynaslice-host --test get_file_memory -- --nocapture
//! ```
//!
//! With the embedded server (dynoxide) the server runs in this process
//! too: its own memory for the requests in flight counts against the read.

mod common;
use dynaslice_testing::memory;

use dynaslice_host::{GetOptions, LayoutKind};

/// The file streamed back.
const FILE_BYTES: usize = 256 << 20;
/// The bound asserted on the read's peak above the RSS before it: a
/// quarter of the file (a whole-file read would need at least all of it).
/// What is printed is what to compare with the 64 MiB target.
const MAX_PEAK_ABOVE_BASELINE: u64 = (FILE_BYTES / 4) as u64;

#[tokio::test(flavor = "multi_thread")]
async fn a_256_mib_file_streams_back_in_bounded_memory() {
    let client = common::client();
    let table = common::fresh_table(&client, "getfile-memory", LayoutKind::ChunkTable).await;
    let key = common::key(LayoutKind::ChunkTable, "big");
    let dir = common::fresh_temp_dir("getfile-memory");
    let digest = common::put_noise_from_file(&client, &table, &key, &dir, 26, FILE_BYTES).await;

    let out = dir.join("back.bin");
    let baseline = memory::rss();
    assert!(memory::reset_peak(), "the peak can be reset");
    let outcome = dynaslice_host::get_file(
        &client,
        &table,
        &key,
        "data",
        &out,
        &GetOptions::default(),
        &(),
    )
    .await
    .expect("get_file")
    .expect("found");
    let peak = memory::peak();
    let above = peak.saturating_sub(baseline);
    println!(
        "get_file of {} MiB: RSS before {:.1} MB, peak {:.1} MB, peak above baseline {:.1} MB (MB = 10^6 bytes)",
        FILE_BYTES >> 20,
        baseline as f64 / 1e6,
        peak as f64 / 1e6,
        above as f64 / 1e6
    );
    assert_eq!(outcome.bytes, FILE_BYTES as u64);
    let back = std::fs::read(&out).unwrap();
    assert!(
        dynaslice_core::digest::digest(&back) == digest,
        "the file read back differs"
    );
    assert!(
        above < MAX_PEAK_ABOVE_BASELINE,
        "the read held {above} bytes above its baseline, limit {MAX_PEAK_ABOVE_BASELINE}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
