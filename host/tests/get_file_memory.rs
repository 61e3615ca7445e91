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

use dynaslice_core::{CodecChoice, Compression};
use dynaslice_host::{GetOptions, LayoutKind, PutOptions};

/// The file streamed back.
const FILE_BYTES: usize = 256 << 20;
/// The bound asserted on the read's peak above the RSS before it: a
/// quarter of the file (a whole-file read would need at least all of it).
/// What is printed is what to compare with the 64 MiB target.
const MAX_PEAK_ABOVE_BASELINE: u64 = (FILE_BYTES / 4) as u64;

fn proc_status(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_256_mib_file_streams_back_in_bounded_memory() {
    let client = common::client();
    let table = common::fresh_table(&client, "getfile-memory", LayoutKind::ChunkTable).await;
    let key = common::key(LayoutKind::ChunkTable, "big");
    let dir = std::env::temp_dir().join(format!(
        "dynaslice-test-getfile-memory-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("source.bin");
    let digest = {
        let bytes = common::noise(26, FILE_BYTES);
        std::fs::write(&source, &bytes).unwrap();
        dynaslice_core::digest::digest(&bytes)
    };
    let file = tokio::fs::File::open(&source).await.unwrap();
    let options = PutOptions {
        compression: CodecChoice::Fixed(Compression::NONE),
        max_item_bytes: 2 * FILE_BYTES,
        ..PutOptions::default()
    };
    dynaslice_host::put_reader(
        &client,
        &table,
        key.clone(),
        "data",
        file,
        FILE_BYTES as u64,
        &options,
        &(),
    )
    .await
    .expect("put");
    std::fs::remove_file(&source).unwrap();

    let out = dir.join("back.bin");
    let baseline = proc_status("VmRSS");
    assert!(
        std::fs::write("/proc/self/clear_refs", "5").is_ok(),
        "the peak can be reset"
    );
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
    let peak = proc_status("VmHWM");
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
