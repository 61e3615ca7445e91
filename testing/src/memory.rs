//! This process's resident memory, read from `/proc/self/status` (Linux
//! only): the RSS now, the peak (`VmHWM`), and resetting the peak through
//! `/proc/self/clear_refs` so that it measures one step. Shared by the
//! memory tests and `bench:transfer`'s memory children:
//!
//! ```no_run
//! use dynaslice_testing::memory;
//!
//! memory::reset_peak();
//! let held: Vec<u8> = vec![1; 64 << 20];
//! assert!(memory::peak() >= held.len() as u64);
//! ```

/// The resident set now, in bytes (`VmRSS`); 0 where it cannot be read.
pub fn rss() -> u64 {
    status_bytes("VmRSS")
}

/// The peak resident set since the process started or since the last
/// [`reset_peak`], in bytes (`VmHWM`); 0 where it cannot be read.
pub fn peak() -> u64 {
    status_bytes("VmHWM")
}

/// Resets `VmHWM` to the current RSS (Linux 4.0+); false where it could
/// not, and then [`peak`] is the lifetime peak.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// A `/proc/self/status` field given in kB, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    field_kb(&status, field).map_or(0, |kb| kb * 1024)
}

/// A field given in kB in the text of a `/proc/<pid>/status`.
pub(crate) fn field_kb(status: &str, field: &str) -> Option<u64> {
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
}
